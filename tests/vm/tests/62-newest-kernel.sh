#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module on the newest supported kernel (scripts/kernels.sh's last:
# Debian's sid), in make check.  make check-kernels runs every suite on
# every kernel, but not in make check, and a change that only the newest
# kernel refuses at run time went unseen until it ran there
# (debug-kernel-findings 40: a workqueue saying neither per-cpu nor
# unbound, a WARN at load on 7.x, a panic under panic_on_warn).  Its own
# build of the module (build/vm/newest-NAME: the bg lane's kernels build
# may run beside it), then one boot: the card's driver, a write-back cache
# on the card and one on a plain device, each with fio verify, flushed and
# deleted, rmmod; the kernel log clean.
. "$(dirname "$0")/lib.sh"
K="$TOP/scripts/kernels.sh"
builds tools/vcache-config
k=$("$K" names | awk '{print $NF}')
if ! rel=$("$K" release "$k" 2>/dev/null); then
	t_fail "kernel $k fetched (scripts/deps.sh --kernels)"
	t_done
fi
out="$TOP/build/vm/newest-$k"
rm -rf "$out"
mkdir -p "$out/src"
tar -C "$TOP" -c --exclude='*.o' --exclude='.*.cmd' --exclude='*.ko' \
	--exclude='*.mod' --exclude='*.mod.c' --exclude='*.a' \
	Kbuild include driver cache | tar -x -C "$out/src"
if "$K" run "$k" make -s -C "$out/src/driver" KDIR="/lib/modules/$rel/build" \
	>"$out/build.log" 2>&1 && [ -f "$out/src/vcache.ko" ]; then
	t_ok "vcache.ko builds for $k ($rel)"
else
	tail -20 "$out/build.log"
	t_fail "vcache.ko builds for $k ($rel)"
	t_done
fi
VC_KERNEL=$("$K" image "$k") VC_MODULE="$out/src/vcache.ko" \
	"$RUN" --cards 1 --card-size 256M --hdd-size 1G --hdd-model fast \
	--timeout 600 -- "$TESTS/62-newest-kernel.guest" "$rel"
vm_status "$k ($rel): load, caches on the card and on a plain device, rmmod; kernel log clean" 0 $?
t_done
