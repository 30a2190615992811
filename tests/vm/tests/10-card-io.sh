#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fio verify, discard, write-zeroes, media errors and a stuck command on two
# cards (512 B and 4 KiB logical blocks), in one boot.
. "$(dirname "$0")/lib.sh"
"$RUN" --cards 2 --lba-size 512,4096 --card-size 256M --modparams io_timeout=5 \
	--timeout 900 -- "$TESTS/10-card-io.guest"
vm_status "card-io: guest checks passed and kernel log clean" 0 $?
t_done
