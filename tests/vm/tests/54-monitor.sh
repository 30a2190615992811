#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vcache-monitor against the real kernel: its counters agree with what fio
# and the devices' own statistics (/sys/block/*/stat) saw, for a read-hit,
# a read-miss, a write-back, a bypass and a flush workload; the live view
# under tmux while fio runs; events; unprivileged reading and the EPERM
# of --reset-stats; /proc and sysfs; promlint (promtool check metrics) on the kernel's figures.
. "$(dirname "$0")/lib.sh"
make -s -C "$TOP/tools/vcache-config" >/dev/null || t_fail "vcache-config builds"
make -s -C "$TOP/tools/vcache-monitor" >/dev/null || t_fail "vcache-monitor builds"
"$RUN" --cards 1 --card-size 512M --hdd-size 1G --hdd-model fast \
	--memory 1536M --timeout 900 -- "$TESTS/54-monitor.guest"
vm_status "monitor: guest checks passed and kernel log clean" 0 $?
t_done
