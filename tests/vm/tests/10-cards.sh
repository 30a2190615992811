#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The card driver's data and removal tests in one boot (GROUPS): two cards
# of 256 MiB, 512 B and 4 KiB logical blocks, io_timeout 5 s.  Members:
# 10-card-io (fio verify, discard, write-zeroes, media errors, a stuck
# command), then 30-unplug (both cards pulled under I/O).  Arguments: the
# members to run (default all).
. "$(dirname "$0")/lib.sh"
group_run 10-cards --cards 2 --lba-size 512,4096 --card-size 256M \
	--modparams io_timeout=5 -- "$@"
t_done
