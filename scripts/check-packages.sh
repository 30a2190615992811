#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages, built and checked without a VM (the `packages` suite of
# make check, a few minutes):
#   - make dist, make rpm (kmod-vcache for trixie's 6.12, RHEL 10's base,
#     or the host's kernel when trixie is not fetched), make deb
#   - versions agree (VERSION, rpm/vcache.spec, contrib/debian/changelog)
#   - rpmlint (rpm/rpmlint.toml) and lintian --pedantic: no message left
#   - the contents: tools, man pages, udev rule with vcache-config's real
#     path, unit, completion, schema; the module's vermagic; dkms.conf
#   - kmod-vcache's kernel dependency: refused beside another kernel,
#     accepted beside its own (rpm --test on a scratch database)
#   - DKMS builds the module from vcache-dkms's tree for the host kernel
#     (a private dkms tree: nothing is installed)
#   - the removal scriptlets (rpm %preun, deb prerm) refuse while a cache
#     is dirty, and do not on upgrade or when clean; vcache-boot's bounded
#     wait and its stop (unload only when the system goes down) -- with
#     stub commands and a fake /proc/vcache
# With --vm (make check-packages) also an installed system in a VM,
# three boots of tests/vm/packages.guest (Debian 13 with systemd on a disk
# image, scripts/pkgvm.sh; tests/vm/run --root-image): apt install of the
# .debs, a cache with ext4 in /etc/fstab, a reboot that brings both back,
# a boot without the backing disk and the disk plugged in later, removal
# refused while dirty.  DKMS builds the module on the host for the guest's
# kernel (the guest's postinst loads that build: compiling under TCG took
# over 25 minutes).  --vm-only: the .debs and the VM part only.  With
# --vm the RPMs are also installed, upgraded and erased by rpm, their
# scriptlets run, in a scratch copy of that image's root
# (scripts/rpmroot.sh; no RPM distribution boots here).
# Prints PASS/FAIL lines and "N passed, N failed".
set -u
with_vm=0
static=1
case ${1:-} in
--vm) with_vm=1; shift ;;
--vm-only) with_vm=1; static=0; shift ;;	# the .debs and the VM part only
esac
[ $# = 0 ] || { echo "usage: scripts/check-packages.sh [--vm | --vm-only]" >&2; exit 2; }
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
V=$(cat VERSION)
T=$(mktemp -d /tmp/vcache-pkgcheck.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /'; fail=$((fail + 1)); }
check() { local n=$1; shift; if out=$("$@" 2>&1); then ok "$n"; else bad "$n" "$out"; fi; }

# --- build --------------------------------------------------------------
if [ -z "${RPM_KERNEL:-}" ]; then
	if scripts/kernels.sh release trixie >/dev/null 2>&1; then RPM_KERNEL=trixie; else RPM_KERNEL=host; fi
fi
export RPM_KERNEL
s=$(date +%s)
if out=$(make -s dist 2>&1); then ok "make dist ($(du -h build/vcache-$V.tar.gz | cut -f1))"; else bad "make dist" "$out"; fi
s1=$(date +%s)
[ $static = 0 ] || if out=$(scripts/packages.sh rpm 2>&1); then ok "make rpm, kmod-vcache for RPM_KERNEL=$RPM_KERNEL ($(( $(date +%s) - s1 )) s)"; else bad "make rpm" "$out"; fi
s2=$(date +%s)
if out=$(scripts/packages.sh deb 2>&1); then ok "make deb ($(( $(date +%s) - s2 )) s)"; else bad "make deb" "$out"; fi
R=build/rpm/RPMS
TOOLS=$R/x86_64/vcache-tools-$V-1.x86_64.rpm
KMOD=$R/x86_64/kmod-vcache-$V-1.x86_64.rpm
DKMS=$R/noarch/vcache-dkms-$V-1.noarch.rpm
FW=$R/x86_64/vcache-firmware-sim-$V-1.x86_64.rpm
DT=build/deb/vcache-tools_${V}-1_amd64.deb
DD=build/deb/vcache-dkms_${V}-1_all.deb
if [ $static = 1 ]; then
for f in "$TOOLS" "$KMOD" "$DKMS" "$FW" "$DT" "$DD"; do
	[ -f "$f" ] || bad "package $(basename "$f") built"
done

# --- versions -----------------------------------------------------------
sv=$(sed -n 's/^Version: *//p' rpm/vcache.spec)
dv=$(sed -n '1s/^vcache (\([^-]*\)-.*/\1/p' contrib/debian/changelog)
if [ "$sv" = "$V" ] && [ "$dv" = "$V" ]; then ok "versions agree ($V)"; else bad "versions agree" "VERSION $V, spec $sv, debian/changelog $dv"; fi

# --- linters ------------------------------------------------------------
out=$(rpmlint -c rpm/rpmlint.toml $R/*/*.rpm build/rpm/SRPMS/*.rpm 2>&1)
if grep -q ' 0 errors, 0 warnings' <<<"$out"; then ok "rpmlint: 0 errors, 0 warnings"; else bad rpmlint "$out"; fi
out=$(lintian --pedantic -I build/deb/*.changes 2>&1 | grep -v '^running with root privileges')
if [ -z "$out" ]; then ok "lintian --pedantic -I: no tags"; else bad lintian "$out"; fi

# --- contents -----------------------------------------------------------
want="/usr/sbin/vcache-config /usr/sbin/vcache-monitor /usr/sbin/vcache-sim
/usr/share/man/man4/vcache.4.gz /usr/share/man/man8/vcache-config.8.gz
/usr/share/man/man8/vcache-monitor.8.gz /usr/share/man/man8/vcache-sim.8.gz
/rules.d/69-vcache.rules /vcache.service /usr/libexec/vcache/vcache-boot
/usr/share/bash-completion/completions/vcache-config
/usr/share/bash-completion/completions/vcache-monitor
/usr/share/vcache/vcache-monitor.schema.json"
for pkg in "$TOOLS" "$DT"; do
	case $pkg in *.rpm) list=$(rpm -qpl "$pkg") ;; *) list=$(dpkg-deb -c "$pkg" | awk '{print substr($6, 2)}') ;; esac
	miss=
	for w in $want; do grep -q -- "$w\$" <<<"$list" || miss="$miss $w"; done
	if [ -z "$miss" ]; then ok "$(basename "$pkg"): every file"; else bad "$(basename "$pkg"): every file" "missing:$miss"; fi
done
mkdir -p "$T/rt" "$T/dt" "$T/dd" "$T/km"
(cd "$T/rt" && rpm2cpio "$TOP/$TOOLS" | cpio -idm --quiet)
dpkg-deb -x "$DT" "$T/dt"
dpkg-deb -x "$DD" "$T/dd"
(cd "$T/km" && rpm2cpio "$TOP/$KMOD" | cpio -idm --quiet)
for root in "$T/rt" "$T/dt"; do
	rule=$(find "$root" -name 69-vcache.rules)
	unit=$(find "$root" -name vcache.service)
	runs=$(sed -n 's/.*RUN+="\([^ ]*\) .*/\1/p' "$rule" | sort -u)
	exec=$(sed -n 's/^ExecStart=\([^ ]*\) .*/\1/p' "$unit")
	if [ "$runs" = /usr/sbin/vcache-config ] && [ -x "$root$runs" ] &&
	   [ -x "$root$exec" ] && ! grep -q @ "$rule" "$unit" "$root$exec"; then
		ok "$(basename "$root"): udev rule and unit run the packaged programs ($runs, $exec)"
	else
		bad "$(basename "$root"): udev rule and unit run the packaged programs" "RUN: $runs, ExecStart: $exec"
	fi
done
ko=$(find "$T/km" -name vcache.ko)
kver=$(rpm -qp --requires "$KMOD" | sed -n 's/^kernel-uname-r = //p')
vm=$(modinfo -F vermagic "$ko" 2>/dev/null | awk '{print $1}')
if [ -n "$kver" ] && [ "$vm" = "$kver" ] && modinfo -F alias "$ko" | grep -q 'pci:v00001AF4d00001110'; then
	ok "kmod-vcache: vcache.ko for $vm, requires kernel-uname-r = $kver"
else
	bad "kmod-vcache: module and kernel dependency" "vermagic '$vm', requires '$kver'"
fi
conf=$T/dd/usr/src/vcache-$V/dkms.conf
if [ -f "$conf" ] && grep -q '^AUTOINSTALL="yes"' "$conf" && grep -q "^PACKAGE_VERSION=\"$V\"" "$conf" &&
   rpm -qpl "$DKMS" | grep -q "/usr/src/vcache-$V/dkms.conf"; then
	ok "vcache-dkms (deb, rpm): dkms.conf, version $V, AUTOINSTALL"
else
	bad "vcache-dkms: dkms.conf"
fi

# --- the unit as systemd reads it
for root in "$T/rt" "$T/dt"; do
	unit=$(find "$root" -name vcache.service)
	sed "s,=/usr/libexec/,=$root/usr/libexec/,g" "$unit" > "$T/vcache.service"
	out=$(systemd-analyze --man=no verify "$T/vcache.service" 2>&1)
	if [ $? = 0 ] && [ -z "$out" ]; then
		ok "$(basename "$root"): systemd-analyze verify vcache.service: clean"
	else
		bad "$(basename "$root"): systemd-analyze verify vcache.service" "$out"
	fi
done

# --- the man pages as the packages ship them, rendered by groff (man -l)
for m in "$T"/dt/usr/share/man/man*/*.gz; do
	n=$(basename "$m" .gz)
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	txt=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$m" 2>/dev/null)
	others=
	for o in vcache.4 vcache-config.8 vcache-monitor.8 vcache-sim.8; do
		[ "$o" = "$n" ] && continue
		grep -q "${o%.*}(${o##*.})" <<<"$txt" || others="$others ${o%.*}(${o##*.})"
	done
	if [ -z "$warn" ] && ! head -n1 <<<"$txt" | grep -q BSD && ! grep -q '"""\|"[a-z_]\+, "' <<<"$txt" &&
	   [ -z "$others" ]; then
		ok "man $n renders (groff): no warning, no BSD header, no broken quotes, refers to the others"
	else
		bad "man $n renders (groff)" "$warn $(head -n1 <<<"$txt") missing references:$others $(grep '"""\|"[a-z_]\+, "' <<<"$txt")"
	fi
done

# --- kmod-vcache's kernel dependency ------------------------------------
fake_kernel() {	# fake_kernel RELEASE: an rpm providing kernel-uname-r (and the base system)
	rm -rf "$T/fk"
	mkdir -p "$T/fk"
	cat > "$T/fk/k.spec" <<SPEC
Name: fake-kernel
Version: 1
Release: 1
Summary: test
License: GPL-2.0-only
BuildArch: noarch
Provides: kernel-uname-r = $1
Provides: kmod
Provides: /bin/sh
%description
test
%files
SPEC
	rpmbuild -bb --quiet --define "_topdir $T/fk" --define "_rpmdir $T/fk" "$T/fk/k.spec" >/dev/null 2>&1 &&
		find "$T/fk" -name 'fake-kernel-*.rpm' | head -n1
}
# kmod_with RELEASE: rpm -i --test of kmod-vcache on a scratch database
# that holds a kernel RELEASE (none: no kernel at all)
kmod_with() {
	local fk
	rm -rf "$T/db"
	mkdir -p "$T/db"
	rpm --dbpath "$T/db" --initdb
	if [ "$1" != none ]; then
		fk=$(fake_kernel "$1")
		[ -n "$fk" ] && rpm --dbpath "$T/db" -i --justdb --nodeps "$fk" >/dev/null 2>&1 ||
			{ echo "fake kernel package not built or not installed"; return 2; }
	fi
	rpm --dbpath "$T/db" -i --test "$KMOD" 2>&1
}
for other in none 6.12.0-55.el10.x86_64; do
	out=$(kmod_with "$other")
	if [ $? -ne 0 ] && grep -q "kernel-uname-r = $kver is needed" <<<"$out"; then
		ok "kmod-vcache refused with kernel '$other' (needs $kver)"
	else
		bad "kmod-vcache refused with kernel '$other'" "$out"
	fi
done
if out=$(kmod_with "$kver"); then
	ok "kmod-vcache accepted beside kernel $kver"
else
	bad "kmod-vcache accepted beside kernel $kver" "$out"
fi

# --- DKMS builds the module from the package's tree ---------------------
hk=$(ls /lib/modules | grep -E 'amd64$' | sort -V | tail -n1)
if command -v dkms >/dev/null && [ -d "/lib/modules/$hk/build" ]; then
	mkdir -p "$T/dkms"
	s3=$(date +%s)
	if out=$(dkms build -m vcache -v "$V" -k "$hk" --sourcetree "$T/dd/usr/src" \
			--dkmstree "$T/dkms" --installtree "$T/inst" 2>&1) &&
	   [ -f "$T/dkms/vcache/$V/$hk/x86_64/module/vcache.ko" ]; then
		ok "dkms build from vcache-dkms for $hk ($(( $(date +%s) - s3 )) s)"
	else
		bad "dkms build from vcache-dkms for $hk" "$(tail -20 <<<"$out"; cat "$T/dkms/vcache/$V/build/make.log" 2>/dev/null | tail -20)"
	fi
else
	echo "SKIP dkms build (dkms or headers for $hk missing)"
fi

# --- scriptlets with stubs ----------------------------------------------
mkdir -p "$T/bin" "$T/proc-dirty" "$T/proc-clean"
for c in systemctl dkms depmod udevadm deb-systemd-invoke deb-systemd-helper modprobe; do
	printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\n[ "%s $1" != "systemctl is-system-running" ] || echo "${STUB_STATE:-running}"\nexit 0\n' \
		"$c" "$T" "$c" > "$T/bin/$c"
	chmod +x "$T/bin/$c"
done
printf 'name db\nstate running\nbacking0 db sdb sdb wwn-0x5000 attached 8192\nbackingX.hits 5\n' > "$T/proc-dirty/db"
printf 'name db\nstate running\nbacking0 db sdb sdb wwn-0x5000 attached 0\n' > "$T/proc-clean/db"
run_script() {	# run_script FILE PROCDIR ARGS...
	local f=$1 p=$2
	shift 2
	: > "$T/calls"
	PATH="$T/bin:$PATH" VCACHE_PROC=$p sh "$f" "$@" 2>&1
}
scripts_of() {	# scripts_of PKG: preun/prerm into $T/s-NAME
	local n
	n=$(basename "$1")
	case $1 in
	*.rpm) rpm -qp --qf '%{PREUN}\n' "$1" > "$T/s-$n" ;;
	*.deb) dpkg-deb --ctrl-tarfile "$1" | tar -xO ./prerm > "$T/s-$n" ;;
	esac
	echo "$T/s-$n"
}
for pkg in "$TOOLS" "$DKMS" "$KMOD" "$DT" "$DD"; do
	n=$(basename "$pkg")
	sf=$(scripts_of "$pkg")
	case $pkg in *.rpm) rm=0; up=1 ;; *) rm=remove; up=upgrade ;; esac
	if out=$(run_script "$sf" "$T/proc-dirty" $rm); then
		bad "$n: removal refused while dirty" "$out"
	elif grep -q "cache db: 8192 bytes dirty" <<<"$out" && grep -q "vcache-config flush" <<<"$out" &&
	     ! grep -q "dkms remove\|disable" "$T/calls"; then
		ok "$n: removal refused while a cache is dirty, nothing done"
	else
		bad "$n: removal refused while dirty" "$out $(cat "$T/calls")"
	fi
	if out=$(run_script "$sf" "$T/proc-dirty" $up) && ! grep -q "systemctl.*stop\|disable\|modprobe" "$T/calls"; then
		ok "$n: upgrade goes on while dirty, the unit is not stopped"
	else
		bad "$n: upgrade while dirty" "$out $(cat "$T/calls")"
	fi
	if out=$(run_script "$sf" "$T/proc-clean" $rm) &&
	   out2=$(VCACHE_REMOVE_DIRTY=1 run_script "$sf" "$T/proc-dirty" $rm); then
		ok "$n: removal when clean, or dirty with VCACHE_REMOVE_DIRTY=1"
	else
		bad "$n: removal when clean" "$out ${out2:-}"
	fi
done

boot=$T/rt/usr/libexec/vcache/vcache-boot
mkdir -p "$T/proc-wait"
printf 'name db\nstate waiting\nbacking0 db - - wwn-0x5000c500a1b2 waiting 4096\n' > "$T/proc-wait/db"
s4=$(date +%s)
out=$(VCACHE_WAIT=1 VCACHE_MODPROBE="$T/bin/modprobe" run_script "$boot" "$T/proc-wait" start)
rc=$?
el=$(( $(date +%s) - s4 ))
if [ $rc -eq 0 ] && [ $el -le 3 ] && grep -q "cache db: backing device wwn-0x5000c500a1b2 (for /dev/vcache/db) did not appear within 1s" <<<"$out" &&
   grep -q "modprobe vcache" "$T/calls"; then
	ok "vcache-boot start: bounded wait (${el}s for 1s), the missing device reported, exit 0"
else
	bad "vcache-boot start: bounded wait" "rc $rc, ${el}s: $out"
fi
out=$(VCACHE_WAIT=5 VCACHE_MODPROBE="$T/bin/modprobe" run_script "$boot" "$T/proc-clean" start)
if [ $? -eq 0 ] && [ -z "$out" ]; then ok "vcache-boot start: nothing waits, no wait, no message"; else bad "vcache-boot start: nothing waits" "$out"; fi
out=$(VCACHE_MODPROBE=false run_script "$boot" "$T/proc-clean" start)
if [ $? -ne 0 ] && grep -q "modprobe vcache failed" <<<"$out"; then ok "vcache-boot start: a failed modprobe is an error"; else bad "vcache-boot start: failed modprobe" "$out"; fi
out=$(STUB_STATE=running VCACHE_MODPROBE="$T/bin/modprobe" run_script "$boot" "$T/proc-clean" stop)
if [ $? -eq 0 ] && ! grep -q "modprobe -r" "$T/calls" && grep -q "left loaded" <<<"$out"; then
	ok "vcache-boot stop outside shutdown: module left loaded"
else
	bad "vcache-boot stop outside shutdown" "$out $(cat "$T/calls")"
fi
mkdir -p "$T/sys/module/vcache"
out=$(STUB_STATE=stopping VCACHE_SYSFS="$T/sys" VCACHE_MODPROBE="$T/bin/modprobe" run_script "$boot" "$T/proc-clean" stop)
if [ $? -eq 0 ] && grep -q "modprobe -r vcache" "$T/calls"; then
	ok "vcache-boot stop at shutdown: modprobe -r vcache"
else
	bad "vcache-boot stop at shutdown" "$out $(cat "$T/calls")"
fi
out=$(STUB_STATE=stopping VCACHE_SYSFS="$T/nosys" VCACHE_MODPROBE="$T/bin/modprobe" run_script "$boot" "$T/proc-clean" stop)
if [ $? -eq 0 ] && ! grep -q "modprobe" "$T/calls"; then
	ok "vcache-boot stop at shutdown, module not loaded: nothing to do"
else
	bad "vcache-boot stop, module not loaded" "$out $(cat "$T/calls")"
fi
fi	# static checks

if [ $with_vm = 1 ]; then
	# An installed system, three boots (tests/vm/packages.guest): install
	# and reboot, then boot without the disk.  The guest is Debian 13 with
	# systemd (scripts/pkgvm.sh); DKMS builds the module here, against the
	# guest kernel's headers in the guest's own root, and the guest's
	# postinst loads that build (see scripts/pkgvm.sh).  The three boots
	# share one hold of the VM lock (scripts/pkgvm-boots.sh).
	s5=$(date +%s)
	vmdir=$TOP/build/vm/packages
	make -s firmware >/dev/null 2>&1 || bad "firmware-sim builds for the VM"
	if ! img=$(scripts/pkgvm.sh image); then
		bad "the installed-system image (scripts/pkgvm.sh image)"
	fi
	if [ $static = 1 ] && [ -n "${img:-}" ]; then
		# the RPMs installed, upgraded and erased by rpm in a scratch copy
		# of the image's root (no VM)
		s6=$(date +%s)
		scripts/rpmroot.sh "$R" 2>&1 | tee "$T/rpmroot.log"
		pass=$((pass + $(grep -ac '^PASS ' "$T/rpmroot.log")))
		fail=$((fail + $(grep -ac '^FAIL ' "$T/rpmroot.log")))
		echo "RPM root test: $(( $(date +%s) - s6 )) s"
	fi
	if [ -z "${img:-}" ]; then
		:
	elif ! scripts/pkgvm.sh dkms-tarball "$DD" "$T/vcache-$V.dkms.tar.gz"; then
		bad "dkms build on the host for the guest kernel $(scripts/pkgvm.sh kernel)"
	else
		ok "dkms build and mktarball on the host for the guest kernel $(scripts/pkgvm.sh kernel)"
		rm -rf "$vmdir"
		mkdir -p "$vmdir"
		cp "$T/vcache-$V.dkms.tar.gz" "$DT" "$DD" "$vmdir/"
		[ -e /tmp/vcache-vm.lock ] || { : > /tmp/vcache-vm.lock; chmod 666 /tmp/vcache-vm.lock; }
		echo "# the three boots wait for the VM lock and hold it across them"
		flock /tmp/vcache-vm.lock scripts/pkgvm-boots.sh "$vmdir" "$img" 2>&1 | tee "$T/boots.log"
		pass=$((pass + $(grep -ac '^\[[a-z]*\] ok - \|^PASS ' "$T/boots.log")))
		fail=$((fail + $(grep -ac '^\[[a-z]*\] not ok - \|^FAIL ' "$T/boots.log")))
		for ph in install reboot missing; do
			grep -aq "^\[$ph\] ok - " "$T/boots.log" || bad "VM boot '$ph' ran no check"
		done
	fi
	echo "VM install test: $(( $(date +%s) - s5 )) s"
fi

echo "packages: $pass passed, $fail failed ($(( $(date +%s) - s )) s)"
[ "$fail" -eq 0 ]
