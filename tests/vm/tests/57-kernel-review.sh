#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel defects of issue 18 section 2, one boot: card references of
# caches restored on two cards with the same serial (rmmod clean), an
# unprivileged /proc reader while a backing device is attached and
# detached in a loop (no use-after-free), a detach that fails on flash
# errors then the same disk attached again (not EEXIST), 1 MiB bios
# while every slab allocation of an engine bio fails (no deadlock), the
# same for the engine's pools (unaligned 1 MiB writes of 257 pieces, a
# 32 MiB discard: no deadlock; debug-kernel finding 13), and
# an open racing delete --flush (refused with ENXIO, nothing lost),
# identities hidden from unprivileged readers and auto-attach refusing a
# disk of another size that carries a copied identity, and a card going
# while the module loads (restore racing its removal) and while another
# card's cache drains (its removal waits for its own caches only), and
# disks offered by HOTPLUG, attached or created on that do not answer (a
# plain device's cache being loaded, a returning backing disk being
# compared, a new disk): commands answer; a detach that cannot record its
# slot free keeps it for the device's return, and so does a new device
# whose start fails then; udev's hotplug --all at the module's load goes
# past a suspended disk to the caches of the others.
. "$(dirname "$0")/lib.sh"
builds tools/vcache-config
"$RUN" --cards 2 --fw-opts '--serial VCDUPSERIAL' --card-size 1G \
	--hdd-model hdd --hdd-bps $((16 << 20)) --hdd-iops 2000 \
	--timeout 1200 -- "$TESTS/57-kernel-review.guest"
vm_status "kernel-review: guest checks passed and kernel log clean" 0 $?
t_done
