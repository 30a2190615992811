#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The short power-cut campaign (make torture-powercut, tests/vm/torture-powercut):
# a recorded write-back workload on a cache whose devices all sit on one
# dm-log-writes device, replayed to 4 crash states (flush points and torn
# groups), each loaded as after a power cut and checked (every acknowledged
# write reads back, nothing older).  One boot; the real power cuts of the
# campaign (VC_TORTURE_REBOOTS=N here) are what 52-cached-powercut does
# already in make check.
. "$(dirname "$0")/lib.sh"
TRIALS=${VC_TORTURE_TRIALS:-4} SECS=8 REBOOTS=${VC_TORTURE_REBOOTS:-0} REBOOT_SECS=10 \
	"$TOP/tests/vm/torture-powercut" | grep -v '^[0-9]* passed, [0-9]* failed$'
exit "${PIPESTATUS[0]}"
