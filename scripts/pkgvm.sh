#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The installed-system VM of `make check-packages`: a Debian 13 (trixie,
# kernel 6.12) root file system on a disk image that boots with systemd,
# in which the tests install the .debs as a user would and reboot.
#
#   scripts/pkgvm.sh image           build (once) or print the image:
#                                    $VCACHE_PKGVM_DIR/trixie.img
#   scripts/pkgvm.sh kernel          the guest kernel's release
#   scripts/pkgvm.sh dkms-tarball DEB OUT
#                                    DKMS builds vcache.ko from the
#                                    vcache-dkms .deb DEB on this host,
#                                    against the guest kernel's headers,
#                                    and writes `dkms mktarball`'s
#                                    archive (source and module) to OUT
#
# The root is a copy of the trixie build environment of
# scripts/kernels.sh (its kernel image, modules, headers and compiler) with
# systemd as init, udev, dkms and the tools' libraries added by apt; the
# guest has no network, so everything `apt install ./vcache-*.deb` needs
# is there beforehand.  The image boots with tests/vm/run --root-image
# (the run directory and the source tree are shared over 9p at their host
# paths; a unit of the image, vcache-vmtest.service, runs the test's
# command once the system is up, see tests/vm/guest/systemd-init.sh).
#
# Why the module is compiled on the host: DKMS compiling vcache.ko inside
# the TCG guest took longer than 25 minutes.  `dkms build` runs the same
# dkms.conf with the same compiler and headers as the guest would (the
# image's own root, chrooted), only on the host's CPU; the guest then
# loads the result with `dkms ldtarball` before `apt install`, and the
# package's postinst (dh-dkms) finds it built and installs it.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
DIR=${VCACHE_PKGVM_DIR:-/opt/vcache/pkgvm}
SUITE=trixie
# Bump ROOT_RECIPE when the packages change (the root is copied and
# apt runs again), RECIPE when only the files written into it change (the
# image is written again).
ROOT_RECIPE=1
RECIPE=4
PKGS="systemd-sysv udev dkms kmod e2fsprogs util-linux procps python3 \
libnl-genl-3-200 libjson-c5 dmsetup"
ROOT=$DIR/root
IMG=$DIR/$SUITE.img

die() { echo "pkgvm: $*" >&2; exit 1; }
note() { echo "pkgvm: $*" >&2; }

release() { "$TOP/scripts/kernels.sh" release "$SUITE"; }

# in_root CMD...: CMD chrooted in $ROOT with /proc and /dev, in a private
# mount namespace (as scripts/kernels.sh does for its build roots).
in_root() {
	unshare --mount --propagation private -- \
		sh -ec 'r=$1; shift
			mount -t proc proc "$r/proc"
			mount --rbind /dev "$r/dev"
			exec chroot "$r" "$@"' sh "$ROOT" "$@"
}

build_root() {
	local src rel
	src=$(sed -n "s/^$SUITE [^ ]* [^ ]* //p" <("$TOP/scripts/kernels.sh" list))
	rel=$(release)
	[ -n "$src" ] && [ -d "$src/lib/modules/$rel" ] ||
		die "no $SUITE build environment (run scripts/kernels.sh fetch $SUITE)"
	note "copying the $SUITE root ($src) to $ROOT"
	rm -rf "$ROOT"
	mkdir -p "$DIR"
	cp -a "$src" "$ROOT"
	rm -rf "$ROOT"/usr/src/linux-source-*.tar.xz "$ROOT/usr/src/vcache-checkpatch"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
	note "apt-get install $PKGS (log: $DIR/apt.log)"
	# shellcheck disable=SC2086
	in_root sh -c "apt-get update -qq -o Acquire::Check-Valid-Until=false &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PKGS &&
		apt-get clean" >"$DIR/apt.log" 2>&1 || die "apt-get failed, see $DIR/apt.log"
	[ -d "$ROOT/lib/modules/$rel/build" ] || die "headers of $rel missing in $ROOT"
	echo "$ROOT_RECIPE $rel" > "$ROOT/.vcache-pkgvm"
}

configure_root() {
	echo vcache-vm > "$ROOT/etc/hostname"
	printf 'LABEL=vcroot / ext4 defaults,errors=remount-ro 0 1\n' > "$ROOT/etc/fstab"
	: > "$ROOT/etc/resolv.conf"
	in_root passwd -d root >/dev/null
	# What the test runs, once the system is up: mount the run directory
	# and the source tree at their host paths and hand over to the
	# tree's tests/vm/guest/systemd-init.sh.
	cat > "$ROOT/usr/local/sbin/vcache-vmtest" <<'EOF'
#!/bin/sh
# tests/vm/run --root-image: the run directory and the source tree
# (kernel command line vcache.run= and vcache.top=) over 9p, then the
# tree's tests/vm/guest/systemd-init.sh.
set -e
for w in $(cat /proc/cmdline); do
	case $w in
	vcache.run=*) run=${w#vcache.run=} ;;
	vcache.top=*) top=${w#vcache.top=} ;;
	esac
done
modprobe 9pnet_virtio
modprobe 9p
mkdir -p "$run" "$top"
# the tree first: the run directory may be inside it
mountpoint -q "$top" || mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576,ro vctop "$top"
mkdir -p "$run" 2>/dev/null || true
mountpoint -q "$run" || mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 vcrun "$run"
exec /bin/bash "$top/tests/vm/guest/systemd-init.sh" "$run"
EOF
	chmod 755 "$ROOT/usr/local/sbin/vcache-vmtest"
	cat > "$ROOT/etc/systemd/system/vcache-vmtest.service" <<'EOF'
[Unit]
Description=vcache VM test (tests/vm/run --root-image)
ConditionKernelCommandLine=vcache.run
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/vcache-vmtest
StandardOutput=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
	in_root systemctl enable vcache-vmtest.service >/dev/null 2>&1
	# Nothing the tests need and slow under TCG.
	in_root systemctl mask apt-daily.timer apt-daily-upgrade.timer \
		e2scrub_all.timer e2scrub_reap.service fstrim.timer \
		dpkg-db-backup.timer systemd-timesyncd.service \
		getty@tty1.service >/dev/null 2>&1 || true
	mkdir -p "$ROOT/etc/systemd/journald.conf.d"
	printf '[Journal]\nStorage=persistent\n' > "$ROOT/etc/systemd/journald.conf.d/vcache.conf"
}

cmd_image() {
	[ "$(id -u)" -eq 0 ] || die "needs root (chroot, apt)"
	local rel want
	# the trixie build root of scripts/kernels.sh is the image's base
	release >/dev/null 2>&1 || "$TOP/scripts/kernels.sh" fetch "$SUITE" >&2 ||
		die "scripts/kernels.sh fetch $SUITE failed"
	rel=$(release)
	want="$RECIPE $rel"
	if [ -f "$IMG" ] && [ "$(cat "$DIR/image.stamp" 2>/dev/null)" = "$want" ]; then
		echo "$IMG"
		return 0
	fi
	[ "$(cat "$ROOT/.vcache-pkgvm" 2>/dev/null)" = "$ROOT_RECIPE $rel" ] || build_root
	configure_root
	note "writing $IMG (mke2fs -d)"
	rm -f "$IMG" "$DIR/image.stamp"
	mke2fs -q -t ext4 -L vcroot -d "$ROOT" "$IMG.tmp" 4G ||
		die "mke2fs -d failed"
	mv "$IMG.tmp" "$IMG"
	echo "$want" > "$DIR/image.stamp"
	echo "$IMG"
}

cmd_dkms_tarball() {
	local deb=$1 out=$2 rel v w
	[ "$(id -u)" -eq 0 ] || die "needs root (chroot)"
	[ -d "$ROOT/var/lib/dkms" ] || die "no image root (scripts/pkgvm.sh image)"
	rel=$(release)
	v=$(dpkg-deb -f "$deb" Version)
	v=${v%-*}
	w=$ROOT/tmp/vcache-dkms-build
	rm -rf "$w"
	mkdir -p "$w/src" "$w/tree" "$w/x"
	dpkg-deb -x "$deb" "$w/x"
	mv "$w/x/usr/src/vcache-$v" "$w/src/"
	local d=/tmp/vcache-dkms-build
	if ! in_root dkms build -m vcache -v "$v" -k "$rel" --sourcetree "$d/src" \
		--dkmstree "$d/tree" >"$w/build.log" 2>&1; then
		cat "$w/build.log" "$w/tree/vcache/$v/build/make.log" 2>/dev/null | tail -30 >&2
		die "dkms build failed"
	fi
	in_root dkms mktarball -m vcache -v "$v" -k "$rel" --sourcetree "$d/src" \
		--dkmstree "$d/tree" --archive "$d/vcache.dkms.tar.gz" >>"$w/build.log" 2>&1 ||
		{ tail -20 "$w/build.log" >&2; die "dkms mktarball failed"; }
	cp "$w/vcache.dkms.tar.gz" "$out"
	rm -rf "$w"
}

case ${1:-} in
image) cmd_image ;;
kernel) release ;;
dkms-tarball) [ $# = 3 ] || die "usage: dkms-tarball DEB OUT"; cmd_dkms_tarball "$2" "$3" ;;
*) die "usage: scripts/pkgvm.sh image|kernel|dkms-tarball DEB OUT" ;;
esac
