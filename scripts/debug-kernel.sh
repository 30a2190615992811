#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel of `make check-debug`: Debian's 6.1 source
# (linux-source-6.1, /usr/src/linux-source-6.1.tar.xz) built with KASAN,
# lockdep (PROVE_LOCKING), DEBUG_ATOMIC_SLEEP, DEBUG_KOBJECT_RELEASE, KFENCE,
# kmemleak, FAILSLAB, FAIL_MAKE_REQUEST and FAULT_INJECTION_DEBUG_FS, plus
# what the VM bench (tests/vm/run: virtme-ng --force-9p under QEMU/TCG, q35,
# ivshmem cards behind PCIe root ports, a virtio-blk HDD, dm-linear/delay/
# flakey/zero/error, loop, null_blk, ext4) needs.
#
#   scripts/debug-kernel.sh [build]   build it if not built (default)
#   scripts/debug-kernel.sh image     print the image path (fails if not built)
#   scripts/debug-kernel.sh kdir      print the build tree (KDIR= for the module)
#   scripts/debug-kernel.sh release   print the kernel release
#   scripts/debug-kernel.sh config    only (re)generate the .config
#
# Layout under $VCACHE_DEBUG_KERNEL_DIR (default /opt/vcache/debug-kernel):
#   src/            the unpacked source (read-only use; built with O=)
#   build/          the out-of-tree build (KDIR for `make -C build M=...`)
#   root/boot/vmlinuz-RELEASE, root/lib/modules/RELEASE
#                   what tests/vm/run --kernel boots: virtme-ng finds the
#                   modules tree from the image path (ROOT/boot/.. ->
#                   ROOT/lib/modules/RELEASE), as for scripts/kernels.sh's
#                   chroots.
#   root/.stamp     the fragment's hash of a complete build: a second run
#                   with the same fragment does nothing.
#   build.log       the last build's output
#
# The config: x86_64 `make defconfig`, then the fragment below (virtme-ng's
# own generic list, see virtme/commands/configkernel.py, plus the bench's
# devices and the debug options; hardware the guest does not have -- DRM,
# sound, USB, wireless, ATA, most NICs -- is turned off to keep the build
# short), then `make olddefconfig`.  No debug info (DEBUG_INFO_NONE): KASAN
# and lockdep reports name functions with offsets (KALLSYMS_ALL), which is
# enough, and DWARF would double the build.
#
# The build runs at nice 19 with -j2 ($JOBS): the machine has 2 cores that
# the VM tests must keep.  First build on this machine (2 cores, nice 19,
# -j2, VM tests running beside it): about 19 minutes (FIRST_BUILD); 33 min
# of CPU, 89 min of wall time on a fresh machine whose VM tests and model
# runs kept both cores busy beside it (2026-11-27); 17 min 26 s on a
# fresh machine (2026-11-30: after `scripts/deps.sh --debug-kernel`, a
# 1,000,000-message fuzz-netlink VM beside it).
# Nice 19 does not make it free for a TCG guest beside it: on 2026-11-29
# torture-powercut's replayed states took 20-26 s with the build beside
# them and 12-16 s without (about 40 % of the guest's speed); before a
# campaign or a benchmark, build first.
# A second run with the tree built returns at once.
FIRST_BUILD="19 min (18 min 53 s build + ~30 s unpack and config, measured 2026-11-26 with VM tests beside it)"
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BASE=${VCACHE_DEBUG_KERNEL_DIR:-/opt/vcache/debug-kernel}
TARBALL=${DEBUG_KERNEL_SOURCE:-/usr/src/linux-source-6.1.tar.xz}
JOBS=${JOBS:-2}
LOCALVERSION=-vcache-debug
SRC=$BASE/src
OUT=$BASE/build
ROOT=$BASE/root

die() { echo "debug-kernel: error: $*" >&2; exit 1; }
note() { echo "debug-kernel: $*" >&2; }

fragment() {
	cat <<'EOF'
# ---- the release
CONFIG_LOCALVERSION="-vcache-debug"
# CONFIG_LOCALVERSION_AUTO is not set
# ---- modules (vcache.ko, null_blk, bcache), unsigned
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_MODULE_FORCE_UNLOAD=y
# CONFIG_MODULE_SIG is not set
# CONFIG_MODULE_SIG_FORCE is not set
# CONFIG_MODVERSIONS is not set
# ---- virtme-ng's generic list (virtme/commands/configkernel.py)
# CONFIG_UEVENT_HELPER is not set
CONFIG_VIRTIO=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_MMIO=y
CONFIG_VIRTIO_BALLOON=y
CONFIG_NET=y
CONFIG_NETDEVICES=y
CONFIG_NETWORK_FILESYSTEMS=y
CONFIG_PACKET=y
CONFIG_INET=y
CONFIG_NET_9P=y
CONFIG_NET_9P_VIRTIO=y
CONFIG_9P_FS=y
CONFIG_9P_FS_POSIX_ACL=y
CONFIG_VIRTIO_NET=y
# CONFIG_CMDLINE_OVERRIDE is not set
CONFIG_BINFMT_SCRIPT=y
CONFIG_SHMEM=y
CONFIG_TMPFS=y
CONFIG_TMPFS_POSIX_ACL=y
CONFIG_UNIX=y
CONFIG_DEVTMPFS=y
CONFIG_DEVTMPFS_MOUNT=y
CONFIG_TTY=y
CONFIG_VT=y
CONFIG_UNIX98_PTYS=y
CONFIG_EARLY_PRINTK=y
CONFIG_INOTIFY_USER=y
CONFIG_BLOCK=y
CONFIG_SCSI_LOWLEVEL=y
CONFIG_SCSI=y
CONFIG_SCSI_VIRTIO=y
CONFIG_BLK_DEV_SD=y
CONFIG_VIRTIO_CONSOLE=y
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y
CONFIG_WATCHDOG=y
CONFIG_WATCHDOG_CORE=y
CONFIG_I6300ESB_WDT=y
CONFIG_OVERLAY_FS=y
CONFIG_FUSE_FS=y
CONFIG_VIRTIO_FS=y
CONFIG_VSOCKETS=y
CONFIG_VIRTIO_VSOCKETS=y
CONFIG_BLK_DEV_INITRD=y
CONFIG_FW_CFG_SYSFS=y
CONFIG_FW_CFG_SYSFS_CMDLINE=y
# ---- the bench: q35, ivshmem cards (PCI, MSI-X) behind PCIe root ports
CONFIG_PCI=y
CONFIG_PCI_MSI=y
CONFIG_PCIEPORTBUS=y
CONFIG_HOTPLUG_PCI=y
CONFIG_HOTPLUG_PCI_PCIE=y
CONFIG_PCIEAER=y
# ---- block: virtio-blk HDD, dm, loop, null_blk, bcache (bench-cache)
CONFIG_VIRTIO_BLK=y
CONFIG_BLK_DEV=y
CONFIG_BLK_DEV_LOOP=y
CONFIG_BLK_DEV_NULL_BLK=m
CONFIG_BLK_MQ_VIRTIO=y
CONFIG_BLK_DEV_INTEGRITY=y
CONFIG_BLK_DEV_THROTTLING=y
CONFIG_BLK_DEBUG_FS=y
CONFIG_MD=y
CONFIG_BLK_DEV_DM=y
CONFIG_DM_DELAY=y
CONFIG_DM_FLAKEY=y
CONFIG_DM_ZERO=y
CONFIG_DM_DUST=y
CONFIG_DM_LOG_WRITES=y
# torture-powercut's replay: a writable snapshot of each replayed state
CONFIG_DM_SNAPSHOT=y
CONFIG_BCACHE=m
CONFIG_CONFIGFS_FS=y
# what the tests use of the stock kernel: cgroup writeback (50-config's
# cgroup-deny of buffered writes needs MEMCG with BLK_CGROUP) and
# /proc/sys/kernel/ns_last_pid (its recycled-PID check)
CONFIG_MEMCG=y
CONFIG_CGROUP_WRITEBACK=y
CONFIG_CHECKPOINT_RESTORE=y
CONFIG_AIO=y
CONFIG_IO_URING=y
CONFIG_EXT4_FS=y
CONFIG_EXT4_FS_POSIX_ACL=y
CONFIG_JBD2=y
CONFIG_CRYPTO_CRC32C=y
CONFIG_LIBCRC32C=y
CONFIG_PROC_FS=y
CONFIG_SYSFS=y
CONFIG_DEBUG_FS=y
# ---- not in the guest: off, for a shorter build
# CONFIG_DRM is not set
# CONFIG_FB is not set
# CONFIG_SOUND is not set
# CONFIG_USB_SUPPORT is not set
# CONFIG_WLAN is not set
# CONFIG_WIRELESS is not set
# CONFIG_CFG80211 is not set
# CONFIG_ATA is not set
# CONFIG_ETHERNET is not set
# CONFIG_NETFILTER is not set
# CONFIG_IPV6 is not set
# CONFIG_NFS_FS is not set
# CONFIG_AGP is not set
# CONFIG_INPUT_JOYSTICK is not set
# CONFIG_INPUT_TABLET is not set
# CONFIG_INPUT_TOUCHSCREEN is not set
# CONFIG_HID is not set
# CONFIG_I2C is not set
# CONFIG_MACINTOSH_DRIVERS is not set
# CONFIG_SECURITY_SELINUX is not set
# CONFIG_AUDIT is not set
# CONFIG_KVM is not set
# CONFIG_VIRTUALIZATION is not set
# CONFIG_HIBERNATION is not set
# CONFIG_SUSPEND is not set
# CONFIG_DEBUG_INFO is not set
CONFIG_DEBUG_INFO_NONE=y
# ---- the debug lane
CONFIG_DEBUG_KERNEL=y
CONFIG_KALLSYMS=y
CONFIG_KALLSYMS_ALL=y
CONFIG_STACKTRACE=y
CONFIG_KASAN=y
CONFIG_KASAN_GENERIC=y
CONFIG_KASAN_INLINE=y
CONFIG_KASAN_VMALLOC=y
CONFIG_KFENCE=y
CONFIG_KFENCE_SAMPLE_INTERVAL=100
CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_LOCK_ALLOC=y
CONFIG_DEBUG_SPINLOCK=y
CONFIG_DEBUG_MUTEXES=y
CONFIG_DEBUG_RWSEMS=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_PROVE_RCU=y
CONFIG_DEBUG_OBJECTS=y
CONFIG_DEBUG_OBJECTS_TIMERS=y
CONFIG_DEBUG_OBJECTS_WORK=y
CONFIG_DEBUG_OBJECTS_RCU_HEAD=y
CONFIG_DEBUG_KOBJECT_RELEASE=y
CONFIG_DEBUG_LIST=y
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_DEBUG_KMEMLEAK_MEM_POOL_SIZE=16000
# CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF is not set
# CONFIG_DEBUG_KMEMLEAK_AUTO_SCAN is not set
CONFIG_SLUB_DEBUG=y
CONFIG_FAULT_INJECTION=y
CONFIG_FAILSLAB=y
CONFIG_FAIL_PAGE_ALLOC=y
CONFIG_FAIL_MAKE_REQUEST=y
CONFIG_FAIL_IO_TIMEOUT=y
CONFIG_FAULT_INJECTION_DEBUG_FS=y
CONFIG_DETECT_HUNG_TASK=y
CONFIG_SOFTLOCKUP_DETECTOR=y
EOF
}

frag_hash() { fragment | sha256sum | cut -c1-16; }

release() { cat "$OUT/include/config/kernel.release" 2>/dev/null; }

built() {
	[ -f "$ROOT/.stamp" ] && [ "$(cat "$ROOT/.stamp")" = "$(frag_hash)" ] &&
		rel=$(release) && [ -f "$ROOT/boot/vmlinuz-$rel" ] &&
		[ -f "$ROOT/lib/modules/$rel/modules.dep" ]
}

unpack() {
	[ -f "$SRC/Makefile" ] && return
	[ -f "$TARBALL" ] || die "$TARBALL missing (apt-get install linux-source-6.1)"
	note "unpacking $TARBALL into $SRC"
	rm -rf "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -C "$SRC.tmp" --strip-components=1 -xJf "$TARBALL"
	mv "$SRC.tmp" "$SRC"
}

configure() {
	mkdir -p "$OUT"
	if [ -f "$OUT/.fragment-hash" ] && [ "$(cat "$OUT/.fragment-hash")" = "$(frag_hash)" ] &&
		[ -f "$OUT/.config" ]; then
		return
	fi
	note "configuring $OUT (defconfig + fragment)"
	make -s -C "$SRC" O="$OUT" defconfig >/dev/null
	fragment >"$OUT/vcache-debug.fragment"
	"$SRC/scripts/kconfig/merge_config.sh" -m -O "$OUT" "$OUT/.config" \
		"$OUT/vcache-debug.fragment" >"$OUT/merge.log" 2>&1
	make -s -C "$SRC" O="$OUT" olddefconfig >/dev/null
	# Every option asked for must have survived olddefconfig.
	local miss=0 line opt val
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) opt=${line%%=*}; val=${line#*=} ;;
		"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; val=n ;;
		*) continue ;;
		esac
		if [ "$val" = n ]; then
			grep -q "^$opt=" "$OUT/.config" || continue
		else
			grep -qx "$opt=$val" "$OUT/.config" && continue
		fi
		note "config: $line did not stick (got: $(grep -E "^(# )?$opt[= ]" "$OUT/.config" || echo unset))"
		miss=1
	done < <(fragment)
	for opt in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KOBJECT_RELEASE KFENCE \
		DEBUG_KMEMLEAK FAILSLAB FAIL_MAKE_REQUEST FAULT_INJECTION_DEBUG_FS \
		NET_9P_VIRTIO 9P_FS VIRTIO_BLK PCI_MSI BLK_DEV_DM DM_DELAY DM_FLAKEY \
		BLK_DEV_LOOP EXT4_FS DEVTMPFS MODULES; do
		grep -qx "CONFIG_$opt=y" "$OUT/.config" || die "CONFIG_$opt is not y in $OUT/.config"
	done
	[ $miss = 0 ] || note "(some fragment options were changed by their dependencies; see above)"
	frag_hash >"$OUT/.fragment-hash"
}

build() {
	if built; then
		note "built: $ROOT/boot/vmlinuz-$(release) (nothing to do)"
		return
	fi
	command -v flex >/dev/null && command -v bison >/dev/null &&
		command -v bc >/dev/null || die "needs flex, bison and bc (apt-get install flex bison bc libelf-dev libssl-dev)"
	mkdir -p "$BASE"
	unpack
	configure
	local t0 t1 rel
	t0=$(date +%s)
	note "building in $OUT (nice 19, -j$JOBS; log $BASE/build.log) ..."
	if ! nice -n 19 make -C "$SRC" O="$OUT" -j"$JOBS" bzImage modules >"$BASE/build.log" 2>&1; then
		tail -n 30 "$BASE/build.log" >&2
		die "build failed, see $BASE/build.log"
	fi
	rel=$(release)
	rm -rf "$ROOT.tmp"
	mkdir -p "$ROOT.tmp/boot"
	nice -n 19 make -s -C "$SRC" O="$OUT" INSTALL_MOD_PATH="$ROOT.tmp" \
		INSTALL_MOD_STRIP=1 modules_install >>"$BASE/build.log" 2>&1 ||
		die "modules_install failed, see $BASE/build.log"
	# The guest does not need the build/source links (they point here).
	rm -f "$ROOT.tmp/lib/modules/$rel/build" "$ROOT.tmp/lib/modules/$rel/source"
	cp "$OUT/arch/x86/boot/bzImage" "$ROOT.tmp/boot/vmlinuz-$rel"
	cp "$OUT/.config" "$ROOT.tmp/boot/config-$rel"
	cp "$OUT/System.map" "$ROOT.tmp/boot/System.map-$rel"
	frag_hash >"$ROOT.tmp/.stamp"
	rm -rf "$ROOT"
	mv "$ROOT.tmp" "$ROOT"
	t1=$(date +%s)
	echo "$((t1 - t0))" >"$BASE/build-seconds"
	note "built $rel in $(((t1 - t0) / 60)) min $(((t1 - t0) % 60)) s: $ROOT/boot/vmlinuz-$rel"
}

case ${1:-build} in
build) build ;;
config) unpack; configure; echo "$OUT/.config" ;;
image) built || die "not built (scripts/debug-kernel.sh)"; echo "$ROOT/boot/vmlinuz-$(release)" ;;
kdir) echo "$OUT" ;;
release) release || die "not configured" ;;
fragment) fragment ;;
*) die "usage: $0 [build|config|image|kdir|release|fragment]" ;;
esac
