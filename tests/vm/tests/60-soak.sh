#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The short soak (make soak): 60 s of fio verify on a card cache and a
# plain-device cache while admin commands loop and an unprivileged user
# reads /proc and sysfs; slab sampled every 30 s.  One boot.
. "$(dirname "$0")/lib.sh"
SOAK_S=${VC_SOAK_S:-60} SOAK_SAMPLE_S=30 "$TOP/tests/vm/soak" | grep -v '^[0-9]* passed, [0-9]* failed$'
exit "${PIPESTATUS[0]}"
