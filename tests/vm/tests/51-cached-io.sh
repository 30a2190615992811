#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cached device under load: fio crc32c verify (512 B to 1 MiB, QD 1 to
# 64, three jobs) while every admin command races it (mode switches, set of
# every parameter, flush and background flush, PID list changes, attach
# and detach of a second backing device); then discard (zeroes, reaches the
# backing device), write-zeroes, the flush period (age-based write-back),
# the dirty watermarks under sustained random writes, the sequential
# cutoff, no card read-modify-write and at most 0.1 card flushes per host
# write under 4 KiB random writes with fsync (firmware counters), and the
# PID lists.  One boot, one card, the simulated HDD.
. "$(dirname "$0")/lib.sh"
make -s -C "$TOP/tools/vcache-config" >/dev/null || t_fail "vcache-config builds"
"$RUN" --cards 1 --card-size 512M --hdd-size 1G --hdd-model fast \
	--memory 1536M --timeout 1200 -- "$TESTS/51-cached-io.guest"
vm_status "cached-io: guest checks passed and kernel log clean" 0 $?
t_done
