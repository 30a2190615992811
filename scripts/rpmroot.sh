#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/rpmroot.sh RPMDIR: install, upgrade and erase the RPMs of RPMDIR
# (build/rpm/RPMS) with rpm, scriptlets and all, in a scratch root: a
# copy-on-write overlay of the installed-system root of scripts/pkgvm.sh
# (Debian 13: kernel 6.12 with its headers, gcc, make, dkms, kmod, systemd,
# udev), thrown away at the end.  Part of `make check-packages`.
#
# No RPM distribution is reachable from here (no Fedora or RHEL
# repositories, and Debian 12 has no mock), so the root is Debian's and its
# rpm database starts empty.  Instead of --nodeps, every requirement of the
# packages under test is looked up in the root (a library's soname and
# symbol version in its ld.so cache and the library itself, a file by its
# path, dkms/gcc/make/kmod/systemd/udev and kernel-devel as the Debian
# packages that hold them, kernel-uname-r as the kernel's module tree), and
# one generated package provides exactly those that were found; rpm's own
# resolver then decides (vcache-tools needs vcache-kmod, kmod-vcache its
# kernel, vcache-dkms and kmod-vcache conflict).  The scriptlets run
# chrooted in that root with its real dkms, depmod and systemctl (offline:
# no systemd runs there, so daemon-reload, udevadm control and starting a
# unit do nothing).  Then Debian's dnf installs and removes them from a
# repository made by createrepo_c, as the README says to.
#
# Prints PASS/FAIL lines (scripts/check-packages.sh counts them).
set -u
[ $# = 1 ] || { echo "usage: scripts/rpmroot.sh RPMDIR" >&2; exit 2; }
TOP=$(cd "$(dirname "$0")/.." && pwd)
RPMS=$(cd "$1" && pwd)
if [ -z "${VCACHE_RPMROOT_NS:-}" ]; then
	# a private mount namespace: the overlay and its mounts vanish with it
	exec unshare --mount --propagation private env VCACHE_RPMROOT_NS=1 "$0" "$RPMS"
fi
V=$(cat "$TOP/VERSION")
LOWER=${VCACHE_PKGVM_DIR:-/opt/vcache/pkgvm}/root
ok() { echo "PASS rpm root: $1"; }
bad() { echo "FAIL rpm root: $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | tail -30 | sed 's/^/    /'; }
[ -d "$LOWER/var/lib/dpkg" ] || { bad "no installed-system root at $LOWER (scripts/pkgvm.sh image)"; exit 0; }
KVER=$(ls "$LOWER/lib/modules" | head -n1)

W=$(mktemp -d /tmp/vcache-rpmroot.XXXXXX)
R=$W/root
# Everything lives on a tmpfs mounted at $W in this mount namespace, so the
# cleanup unmounts and never removes files: a recursive removal would go
# through whatever is still mounted below (it once emptied the host's /dev
# through a bind mount).  Processes the scriptlets left in the root
# (started by this script) are ended first.
cleanup() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$R" ] && kill "${p#/proc/}" 2>/dev/null
	done
	umount -R "$W" 2>/dev/null || umount -R -l "$W" 2>/dev/null
	rmdir "$W" 2>/dev/null
}
trap cleanup EXIT
mount -t tmpfs tmpfs "$W"
mkdir -p "$W/up" "$W/work" "$W/root" "$W/base"
mount -t overlay overlay -o "lowerdir=$LOWER,upperdir=$W/up,workdir=$W/work" "$W/root" ||
	{ bad "overlay of $LOWER"; exit 0; }
mount -t proc proc "$R/proc"
# a /dev of its own with the few nodes scriptlets use, not the host's
mount -t tmpfs -o mode=755 tmpfs "$R/dev"
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
	IFS=: read -r name maj min <<<"$n"
	mknod -m 666 "$R/dev/$name" c "$maj" "$min"
done
ln -s /proc/self/fd "$R/dev/fd"
mkdir "$R/dev/pts" "$R/dev/shm"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
in_root() { chroot "$R" "$@"; }
rpmr() { rpm --root "$R" --dbpath /var/lib/rpm "$@"; }

TOOLS=$(ls "$RPMS"/x86_64/vcache-tools-"$V"-*.rpm)
DKMS=$(ls "$RPMS"/noarch/vcache-dkms-"$V"-*.rpm)
FW=$(ls "$RPMS"/x86_64/vcache-firmware-sim-"$V"-*.rpm)
KMOD=$(ls "$RPMS"/x86_64/kmod-vcache-"$V"-*.rpm 2>/dev/null)

# --- what the root provides ---------------------------------------------
# provided REQ: true when the root has what the requirement REQ names
provided() {
	local r=$1 so ver lib
	case $r in
	rpmlib\(*) return 0 ;;			# rpm itself
	/*) [ -e "$R$r" ] ;;
	*.so*\(*)				# libfoo.so.1()(64bit), libc.so.6(GLIBC_2.34)(64bit)
		so=${r%%(*}
		ver=${r#*(}; ver=${ver%%)*}
		lib=$(in_root ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ {print $NF; exit}')
		[ -n "$lib" ] && { [ -z "$ver" ] || grep -aq "$ver" "$R$lib"; } ;;
	rtld\(GNU_HASH\)) [ -e "$R/lib64/ld-linux-x86-64.so.2" ] ;;
	kernel-uname-r\ =\ *) [ -d "$R/lib/modules/${r#kernel-uname-r = }/kernel" ] ;;
	kernel-devel) [ -d "$R/lib/modules/$KVER/build/include" ] ;;
	systemd-udev) in_root dpkg-query -W -f='${Status}' udev 2>/dev/null | grep -q ' installed' ;;
	dkms | gcc | make | kmod | systemd)
		in_root dpkg-query -W -f='${Status}' "$r" 2>/dev/null | grep -q ' installed' ;;
	*) return 1 ;;
	esac
}
reqs=$(for p in "$TOOLS" "$DKMS" "$FW" $KMOD; do rpm -qp --requires "$p"; done |
	sed 's/ *$//' | sort -u | grep -v '^vcache-kmod = ')
have=() missing=
while IFS= read -r r; do
	[ -n "$r" ] || continue
	case $r in rpmlib\(*) continue ;; esac
	if provided "$r"; then have+=("$r"); else missing="$missing
  $r"; fi
done <<<"$reqs"
if [ -z "$missing" ]; then
	ok "each of the ${#have[@]} requirements of the packages is in the root (Debian 13, kernel $KVER)"
else
	bad "requirements the root does not provide" "$missing"
fi
{
	printf 'Name: vcache-test-root\nVersion: 1\nRelease: 1\nSummary: what the Debian root holds\n'
	printf 'License: GPL-2.0-only\nBuildArch: noarch\n'
	for r in "${have[@]}"; do printf 'Provides: %s\n' "$r"; done
	printf '%%description\nThe requirements of the vcache packages that %s was found to hold.\n%%files\n' "$LOWER"
} > "$W/base/base.spec"
rpmbuild -bb --quiet --define "_topdir $W/base" --define "_rpmdir $W/base" "$W/base/base.spec" >"$W/base/log" 2>&1
BASE=$(find "$W/base" -name 'vcache-test-root-*.rpm' | head -n1)
mkdir -p "$R/var/lib/rpm"
if [ -z "$BASE" ] || ! out=$(rpmr --initdb 2>&1 && rpmr -i "$BASE" 2>&1); then
	bad "the root's rpm database" "$(cat "$W/base/log") ${out:-}"
	exit 0
fi

# the dirty and clean fake /proc/vcache the removal guard reads (inside the
# root: scriptlets run chrooted; rpm passes the environment on)
mkdir -p "$R/tmp/proc-dirty" "$R/tmp/proc-clean"
printf 'name db\nstate running\nbacking0 db sdb sdb wwn-0x5000 attached 8192\n' > "$R/tmp/proc-dirty/db"
printf 'name db\nstate running\nbacking0 db sdb sdb wwn-0x5000 attached 0\n' > "$R/tmp/proc-clean/db"
export VCACHE_PROC=/tmp/proc-clean

unit_link=$R/etc/systemd/system/sysinit.target.wants/vcache.service
modfile() { ls "$R/lib/modules/$KVER/updates/dkms/"vcache.ko* 2>/dev/null | head -n1; }
dkms_state() { in_root dkms status vcache 2>/dev/null; }
nm() { basename "$1" .rpm; }

# --- install --------------------------------------------------------------
out=$(rpmr -i "$TOOLS" 2>&1)
if [ $? != 0 ] && grep -q "vcache-kmod = $V is needed" <<<"$out"; then
	ok "rpm -i vcache-tools alone refused: it needs a module package (vcache-kmod = $V)"
else
	bad "rpm -i vcache-tools alone refused" "$out"
fi
t0=$SECONDS
out=$(rpmr -i "$TOOLS" "$DKMS" "$FW" 2>&1)
rc=$?
if [ $rc = 0 ]; then
	ok "rpm -i $(nm "$TOOLS") $(nm "$DKMS") $(nm "$FW"): dependencies met, scriptlets ran ($((SECONDS - t0)) s)"
else
	bad "rpm -i vcache-tools vcache-dkms vcache-firmware-sim (exit $rc)" "$out"
fi
if out=$(rpmr -V vcache-tools vcache-dkms vcache-firmware-sim 2>&1) && [ -z "$out" ]; then
	ok "rpm -V: every file where the spec puts it, as packaged ($(rpmr -ql vcache-tools vcache-dkms vcache-firmware-sim | wc -l) paths)"
else
	bad "rpm -V vcache-tools vcache-dkms vcache-firmware-sim" "$out"
fi
if [ "$(readlink "$unit_link")" = /usr/lib/systemd/system/vcache.service ]; then
	ok "%post vcache-tools: vcache.service enabled by its preset ($(readlink "$unit_link"))"
else
	bad "%post vcache-tools: vcache.service enabled" "$(ls -l "$R"/etc/systemd/system/*.wants/ 2>&1)"
fi
rule=$R/usr/lib/udev/rules.d/69-vcache.rules
runs=$(sed -n 's/.*RUN+="\([^ ]*\) .*/\1/p' "$rule" 2>/dev/null | sort -u)
if [ "$runs" = /usr/sbin/vcache-config ] && out=$(in_root /usr/sbin/vcache-config --help 2>&1) &&
   in_root /usr/sbin/vcache-monitor --help >/dev/null 2>&1 && in_root /usr/bin/vcache-firmware-sim --help >/dev/null 2>&1; then
	ok "the udev rule runs /usr/sbin/vcache-config, which runs in the root with its libraries, as do vcache-monitor and vcache-firmware-sim"
else
	bad "the installed programs run in the root" "RUN: $runs; $out"
fi
st=$(dkms_state)
mf=$(modfile)
mi=$(in_root modinfo -k "$KVER" -F vermagic vcache 2>&1)
mn=$(in_root modinfo -k "$KVER" -n vcache 2>&1)
if grep -q "vcache/$V, $KVER, x86_64: installed" <<<"$st" && [ -n "$mf" ] &&
   [ "${mi%% *}" = "$KVER" ] && [ "$R$mn" = "$mf" ]; then
	ok "%post vcache-dkms: DKMS built and installed vcache.ko for $KVER (${mf#"$R"}), depmod knows it"
else
	bad "%post vcache-dkms: DKMS built and installed the module" "status: $st; file: $mf; modinfo: $mi $mn"
fi

# --- upgrade (the same packages again: the scriptlets of an upgrade) ----
t0=$SECONDS
out=$(VCACHE_PROC=/tmp/proc-dirty rpmr -U --replacepkgs "$TOOLS" "$DKMS" "$FW" 2>&1)
rc=$?
if [ $rc = 0 ]; then
	ok "rpm -U --replacepkgs with a cache dirty: goes on ($((SECONDS - t0)) s)"
else
	bad "rpm -U --replacepkgs (exit $rc)" "$out"
fi
st=$(dkms_state)
if grep -q "vcache/$V, $KVER, x86_64: installed" <<<"$st" && [ -n "$(modfile)" ] &&
   [ "$(readlink "$unit_link")" = /usr/lib/systemd/system/vcache.service ] &&
   out=$(rpmr -V vcache-tools vcache-dkms vcache-firmware-sim 2>&1) && [ -z "$out" ]; then
	ok "... after the upgrade: module still installed (DKMS --rpm_safe_upgrade), unit still enabled, rpm -V clean"
else
	bad "... after the upgrade" "status: $st; module: $(modfile); unit: $(readlink "$unit_link"); $out"
fi

# --- erase ------------------------------------------------------------------
out=$(VCACHE_PROC=/tmp/proc-dirty rpmr -e vcache-tools vcache-dkms 2>&1)
rc=$?
if [ $rc != 0 ] && grep -q "refusing to remove" <<<"$out" && grep -q "cache db: 8192 bytes dirty" <<<"$out" &&
   rpmr -q vcache-tools vcache-dkms >/dev/null && [ -n "$(modfile)" ] && [ -L "$unit_link" ]; then
	ok "rpm -e while a cache is dirty: refused by %preun, saying why; both still installed, module and unit in place"
else
	bad "rpm -e while dirty" "exit $rc: $out; $(rpmr -q vcache-tools vcache-dkms 2>&1)"
fi
files=$(rpmr -ql vcache-tools vcache-dkms vcache-firmware-sim | grep -v '^/usr/src/vcache-[^/]*$')
out=$(rpmr -e vcache-tools vcache-dkms vcache-firmware-sim 2>&1)
rc=$?
left=
while IFS= read -r f; do
	# directories shared with the system stay
	[ -e "$R$f" ] && [ ! -d "$R$f" ] && left="$left $f"
done <<<"$files"
if [ $rc = 0 ] && [ -z "$left" ] && [ ! -e "$R/usr/src/vcache-$V" ] && [ -z "$(modfile)" ] &&
   [ -z "$(dkms_state)" ] && [ ! -L "$unit_link" ] && ! in_root modinfo -k "$KVER" vcache >/dev/null 2>&1; then
	ok "rpm -e once clean: every file gone, DKMS removed the module (depmod forgot it), unit disabled"
else
	bad "rpm -e once clean (exit $rc)" "$out; left:$left; module: $(modfile); dkms: $(dkms_state); unit: $(readlink "$unit_link")"
fi

# --- kmod-vcache --------------------------------------------------------------
if [ -z "$KMOD" ]; then
	bad "kmod-vcache: no package in $RPMS"
elif [ "$(rpm -qp --requires "$KMOD" | sed -n 's/^kernel-uname-r = //p')" != "$KVER" ]; then
	echo "SKIP rpm root: kmod-vcache is not built for the root's kernel $KVER (RPM_KERNEL=trixie builds it)"
else
	out=$(rpmr -i "$KMOD" "$TOOLS" 2>&1)
	rc=$?
	mn=$(in_root modinfo -k "$KVER" -n vcache 2>&1)
	if [ $rc = 0 ] && [ "$mn" = "/lib/modules/$KVER/extra/vcache/vcache.ko" ] &&
	   out2=$(rpmr -V kmod-vcache 2>&1) && [ -z "$out2" ]; then
		ok "rpm -i kmod-vcache vcache-tools: the module for $KVER in extra/, depmod by %post finds it"
	else
		bad "rpm -i kmod-vcache vcache-tools (exit $rc)" "$out; modinfo: $mn; ${out2:-}"
	fi
	out=$(rpmr -i "$DKMS" 2>&1)
	if [ $? != 0 ] && grep -qi "conflicts" <<<"$out"; then
		ok "vcache-dkms beside kmod-vcache: refused (conflict)"
	else
		bad "vcache-dkms beside kmod-vcache refused" "$out"
	fi
	out=$(rpmr -e vcache-tools kmod-vcache 2>&1)
	if [ $? = 0 ] && ! in_root modinfo -k "$KVER" vcache >/dev/null 2>&1 && [ ! -e "$R/lib/modules/$KVER/extra/vcache/vcache.ko" ]; then
		ok "rpm -e kmod-vcache: module gone, depmod by %postun forgot it"
	else
		bad "rpm -e kmod-vcache" "$out; $(in_root modinfo -k "$KVER" -n vcache 2>&1)"
	fi
fi

# --- dnf, as the README's install section says --------------------------------
# Debian's dnf (libdnf, libsolv) over a repository of the four packages
# (createrepo_c), on the same root and rpm database
if ! command -v dnf >/dev/null || ! command -v createrepo_c >/dev/null; then
	echo "SKIP rpm root: dnf (dnf, createrepo-c: scripts/deps.sh --packages)"
	exit 0
fi
mkdir -p "$W/repo" "$W/home"
cp "$TOOLS" "$DKMS" "$FW" $KMOD "$W/repo/"
createrepo_c -q "$W/repo" >/dev/null 2>&1 || { bad "createrepo_c"; exit 0; }
# rpm's database where rpm put it (Debian's rpm defaults to ~/.rpmdb)
printf '%%_dbpath /var/lib/rpm\n' > "$W/home/.rpmmacros"
dnfr() {
	HOME=$W/home dnf -y -q --installroot="$R" --releasever=13 --setopt=reposdir=/nonexistent \
		--setopt=install_weak_deps=False --setopt=cachedir=/var/cache/dnf --nogpgcheck \
		--repofrompath="vcache,file://$W/repo" --repo=vcache "$@"
}
t0=$SECONDS
out=$(dnfr install vcache-tools vcache-dkms 2>&1)
rc=$?
if [ $rc = 0 ] && rpmr -q vcache-tools vcache-dkms >/dev/null && ! rpmr -q kmod-vcache >/dev/null &&
   grep -q "vcache/$V, $KVER, x86_64: installed" <<<"$(dkms_state)" && [ -L "$unit_link" ]; then
	ok "dnf install vcache-tools vcache-dkms (the README's command): DKMS built the module, unit enabled ($((SECONDS - t0)) s)"
else
	bad "dnf install vcache-tools vcache-dkms (exit $rc)" "$out; $(rpmr -qa 2>&1 | tr '\n' ' '); dkms: $(dkms_state)"
fi
out=$(VCACHE_PROC=/tmp/proc-dirty dnfr remove vcache-tools vcache-dkms 2>&1)
rc=$?
if [ $rc != 0 ] && rpmr -q vcache-tools vcache-dkms >/dev/null && [ -n "$(modfile)" ]; then
	ok "dnf remove while a cache is dirty: refused (%preun), both still installed"
else
	bad "dnf remove while dirty refused" "exit $rc: $out"
fi
out=$(dnfr remove vcache-tools vcache-dkms 2>&1)
rc=$?
if [ $rc = 0 ] && ! rpmr -q vcache-tools >/dev/null && ! rpmr -q vcache-dkms >/dev/null && [ -z "$(modfile)" ] &&
   [ -z "$(dkms_state)" ] && [ ! -L "$unit_link" ]; then
	ok "dnf remove once clean: packages, module and unit link gone"
else
	bad "dnf remove once clean (exit $rc)" "$out; dkms: $(dkms_state)"
fi
exit 0
