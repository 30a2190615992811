#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Card removal with I/O in flight ends in I/O errors, never an oops or hang:
# card 0 dies (firmware killed) and is removed, card 1 is removed live.
. "$(dirname "$0")/lib.sh"
"$RUN" --cards 2 --card-size 256M --modparams io_timeout=5 --timeout 600 \
	-- "$TESTS/30-unplug.guest"
vm_status "unplug: guest checks passed and kernel log clean" 0 $?
t_done
