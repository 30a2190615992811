#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The short metadata fuzzing campaign (make fuzz-metadata): 8 corrupted
# card-space tables and engine metadata images (card and plain device)
# brought up by the kernel: refused with a reason or loaded with the right
# data, never an oops or a wrong block.  One boot, stock kernel.
. "$(dirname "$0")/lib.sh"
DEBUG=0 CASES=${VC_MDFUZZ_CASES:-8} "$TOP/tests/vm/fuzz-metadata" | grep -v '^[0-9]* passed, [0-9]* failed$'
exit "${PIPESTATUS[0]}"
