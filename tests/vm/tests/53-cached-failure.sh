#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Failures under a cached device: the card's media errors (reads served
# from the backing device), a failing backing device (errors reach the
# application, the cache stays consistent, write-back resumes when the
# disk is back), then the card dying under I/O (clean data read from the
# backing device, blocks whose newest data was only on flash fail with EIO
# and are counted, writes pass through), with no oops or hang and a clean
# rmmod.  One boot.
. "$(dirname "$0")/lib.sh"
make -s -C "$TOP/tools/vcache-config" >/dev/null || t_fail "vcache-config builds"
"$RUN" --cards 1 --card-size 512M --hdd-size 1G --hdd-model fast \
	--modparams io_timeout=5 --timeout 900 -- "$TESTS/53-cached-failure.guest"
vm_status "cached-failure: guest checks passed and kernel log clean" 0 $?
t_done
