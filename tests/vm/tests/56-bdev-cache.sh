#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A cache on a plain block device (not the card) survives a power cut and a
# module reload: issue 18, "caches on any block device survive a reboot".
# Phase 1: a write-back cache on a device-mapper disk (over the HDD) in
# front of another, ext4 with fsync'd files, power cut.  Phase 2: boot; the
# disks appear; udev loads the cache from its superblock by itself and
# attaches its backing device; every acknowledged file is intact, fsck is
# clean; create refuses the device without --force, naming the cache and its
# dirty data.  Then rmmod and insmod: the cache comes back by itself
# (udev, module add).  delete erases it: the next insmod finds nothing.
. "$(dirname "$0")/lib.sh"
D="$TOP/build/vm/test-bdev-cache-$$"
rm -rf "$D"
builds tools/vcache-config
opts=(--cards 1 --card-size 64M --hdd-size 1G --hdd-model fast --timeout 900)
"$RUN" --keep "$D" "${opts[@]}" --expect-powercut -- \
	"$TESTS/56-bdev-cache.guest" 1
vm_status "phase 1: write-back cache on a plain block device, fsync'd files, power cut" 0 $?
"$RUN" --reuse "$D" --timeout 900 -- "$TESTS/56-bdev-cache.guest" 2
vm_status "phase 2: found again by udev, verify, fsck, create refused, rmmod/insmod, delete" 0 $?
[ $VC_FAILS = 0 ] && rm -rf "$D"
t_done
