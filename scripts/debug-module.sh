#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/debug-module.sh: vcache.ko for the debug kernel (if it is built:
# scripts/debug-kernel.sh); prints "IMAGE MODULE" or nothing (exit 1).
# Shared by the campaigns that prefer the debug kernel (fuzz-netlink,
# fuzz-metadata); scripts/check-debug.sh does the same for its suites.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
[ "${VC_NO_DEBUG:-}" = 1 ] && exit 1
IMAGE=$(scripts/debug-kernel.sh image 2>/dev/null) || exit 1
[ -f "$IMAGE" ] || exit 1
KDIR=$(scripts/debug-kernel.sh kdir) || exit 1
out=build/debug
mkdir -p "$out"
rm -rf "$out/src"
mkdir -p "$out/src"
cp -a Kbuild include driver cache "$out/src/"
if ! nice -n 10 make -C "$KDIR" M="$TOP/$out/src" modules >"$out/build.log" 2>&1 ||
	[ ! -f "$out/src/vcache.ko" ]; then
	tail -n 20 "$out/build.log" >&2
	exit 1
fi
cp "$out/src/vcache.ko" "$out/vcache.ko"
echo "$IMAGE $TOP/$out/vcache.ko"
