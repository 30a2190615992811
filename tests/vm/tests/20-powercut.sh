#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Power cut: flushed and FUA data survive, unflushed data is old or new but
# never torn, nothing else changes; then a clean reboot keeps everything.
. "$(dirname "$0")/lib.sh"
D="$TOP/build/vm/test-powercut-$$"
rm -rf "$D"
"$RUN" --keep "$D" --card-size 256M --expect-powercut -- "$TESTS/20-powercut.guest" 1
vm_status "phase 1: write, flush, FUA, unflushed, power cut" 0 $?
"$RUN" --reuse "$D" -- "$TESTS/20-powercut.guest" 2
vm_status "phase 2: boot after the power cut, verify, clean shutdown" 0 $?
"$RUN" --reuse "$D" -- "$TESTS/20-powercut.guest" 3
vm_status "phase 3: data persists across a clean reboot" 0 $?
[ $VC_FAILS = 0 ] && rm -rf "$D"
t_done
