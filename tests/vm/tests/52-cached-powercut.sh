#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Power cut under a write-back workload with fsync on ext4 over a cached
# device whose backing device is a device-mapper disk known by its uuid.
# After the cut the cache comes back by itself and waits (its disk is not
# there yet); two disks then appear with their names swapped: the cache
# attaches the one with its identity, never the one with its old name;
# ext4 mounts (journal replay), fsck finds it clean, and every file whose
# fsync completed before the cut is there, byte for byte.  A second cut
# with the backing device present from the start: attached at load.
. "$(dirname "$0")/lib.sh"
D="$TOP/build/vm/test-cached-powercut-$$"
rm -rf "$D"
builds tools/vcache-config
opts=(--cards 1 --card-size 512M --hdd-size 1G --hdd-model fast --timeout 900)
"$RUN" --keep "$D" "${opts[@]}" --expect-powercut -- \
	"$TESTS/52-cached-powercut.guest" 1
vm_status "phase 1: ext4 on a cached device, fsync'd files, power cut" 0 $?
"$RUN" --reuse "$D" --timeout 900 --expect-powercut -- \
	"$TESTS/52-cached-powercut.guest" 2
vm_status "phase 2: late disks with swapped names, verify, more writes, power cut" 0 $?
"$RUN" --reuse "$D" --timeout 900 --no-load -- "$TESTS/52-cached-powercut.guest" 3
vm_status "phase 3: disk present at load: attached by itself, verify, delete" 0 $?
[ $VC_FAILS = 0 ] && rm -rf "$D"
t_done
