#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unknown device signature / interface version and a card that never gets
# ready are refused with a clear log line, no oops; a good card still works.
. "$(dirname "$0")/lib.sh"
"$RUN" --cards 4 --card-size 64M --wait-disks 1 \
	--card-opts "0:--bad-magic" --card-opts "1:--bad-version" \
	--card-opts "2:--refuse" -- "$TESTS/40-refuse.guest"
vm_status "refuse: guest checks passed and kernel log clean" 0 $?
t_done
