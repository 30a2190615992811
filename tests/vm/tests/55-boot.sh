#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot integration as the packages install it (contrib/systemd/vcache-boot,
# the udev rule from tools/vcache-config/69-vcache.rules.in): the stable
# /dev/disk/by-id/vflash-SERIAL links of a card and its partitions,
# /dev/vcache/NAME; vcache-boot stop unloads the module (clean shutdown of
# a write-back cache holding dirty data); vcache-boot start with the backing
# device missing returns within its bound, reports the device, the cache
# waits; the device appears and udev attaches it with the dirty data intact;
# vcache-boot start with everything present returns at once.  (No systemd
# in the bench's guest: the unit's ordering and fstab are not tested here.)
. "$(dirname "$0")/lib.sh"
make -s -C "$TOP/tools/vcache-config" >/dev/null || t_fail "vcache-config builds"
"$RUN" --cards 1 --card-size 256M --hdd-size 512M --hdd-model fast --timeout 600 -- \
	"$TESTS/55-boot.guest"
vm_status "boot integration: by-id links, vcache-boot stop/start, bounded wait, late backing device" 0 $?
t_done
