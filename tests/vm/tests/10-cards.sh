#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The card driver's data and removal tests in one boot (GROUPS): two cards
# of 256 MiB, 512 B and 4 KiB logical blocks, io_timeout 5 s.  Members:
# 10-card-io (fio verify, discard, write-zeroes, media errors, a stuck
# command), then 30-unplug (both cards pulled under I/O).  Arguments: the
# members to run (default all).
. "$(dirname "$0")/lib.sh"
mapfile -t members < <(group_members 10-cards "$@")
"$RUN" --cards 2 --lba-size 512,4096 --card-size 256M --modparams io_timeout=5 \
	--timeout $((900 * ${#members[@]})) -- \
	"$TOP/tests/vm/guest/bin/vm-group" "$TESTS" "${members[@]}"
vm_status "cards (${members[*]}): guest checks passed and kernel log clean" 0 $?
t_done
