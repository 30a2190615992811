#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vcache-config through the real kernel path: create, list, show, --json,
# set of every parameter, mode switch, flush (blocking, background),
# detach refused with dirty data, delete --flush, PID lists, argument
# refusals, EPERM for an unprivileged user; parallel failing requests each
# get their own extack message; a card-space table written through the raw
# disk is refused; a damaged table (bad copy A, no copy B) shown by `cards`
# and rewritten by `repair-table` (refused while it lists a cache, unless
# --force).  One boot, one card (256 MiB) and the simulated HDD.
. "$(dirname "$0")/lib.sh"
make -s -C "$TOP/tools/vcache-config" >/dev/null || t_fail "vcache-config builds"
make -s -C "$TOP/tests/vm/tools" >/dev/null || t_fail "tests/vm/tools build"
"$RUN" --cards 1 --card-size 256M --hdd-size 1G --hdd-model fast \
	--timeout 900 -- "$TESTS/50-config.guest"
vm_status "config: guest checks passed and kernel log clean" 0 $?
t_done
