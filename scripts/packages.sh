#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build vcache's packages from the `make dist` tarball.
#
#   scripts/packages.sh rpm   RPMs with rpmbuild (rpm/vcache.spec) into
#                             build/rpm/RPMS: vcache-tools, vcache-dkms,
#                             vcache-firmware-sim and kmod-vcache for
#                             RPM_KERNEL
#   scripts/packages.sh deb   vcache-tools and vcache-dkms .debs with
#                             debhelper (contrib/debian) into build/deb
#
# RPM_KERNEL (kmod-vcache's kernel):
#   trixie (default)  Debian 13's 6.12, the base of RHEL 10, built in its
#                     own build environment (scripts/kernels.sh; fetched by
#                     `make deps-kernels`)
#   NAME              any other kernel of scripts/kernels.sh
#   host              the newest kernel whose headers this host has
#   none              no kmod-vcache
# RPM_KVER with RPM_KDIR instead name any kernel release and build tree.
#
# rpmbuild runs with --nodeps: on a Debian host the rpm database does not
# know the dpkg packages that satisfy the BuildRequires.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
V=$(cat VERSION)
TARBALL=build/vcache-$V.tar.gz
die() { echo "packages: $*" >&2; exit 1; }
[ -f "$TARBALL" ] || die "$TARBALL missing (make dist)"

rpm_pkgs() {
	command -v rpmbuild >/dev/null || die "rpmbuild missing (apt-get install rpm, or scripts/deps.sh --packages)"
	local top=$TOP/build/rpm kver kdir env= args=()
	rm -rf "$top"
	mkdir -p "$top"
	if [ -n "${RPM_KVER:-}" ]; then
		kver=$RPM_KVER
		kdir=${RPM_KDIR:-/lib/modules/$kver/build}
	else
		case ${RPM_KERNEL:=trixie} in
		none) args+=(--without kmod) ;;
		host)
			kver=$(ls /lib/modules | grep -E 'amd64$' | sort -V | tail -n1)
			kdir=/lib/modules/$kver/build
			;;
		*)
			kver=$(scripts/kernels.sh release "$RPM_KERNEL") ||
				die "kernel '$RPM_KERNEL' not fetched (scripts/kernels.sh fetch $RPM_KERNEL, or RPM_KERNEL=host|none)"
			kdir=/lib/modules/$kver/build
			# that kernel's compiler and kbuild tools, in its build root
			env="$TOP/scripts/kernels.sh run $RPM_KERNEL"
			;;
		esac
	fi
	if [ "${RPM_KERNEL:-}" != none ]; then
		args+=(--define "kver $kver" --define "kdir $kdir")
		[ -z "$env" ] || args+=(--define "kbuild_env $env")
		echo "packages: kmod-vcache for kernel $kver"
	fi
	rpmbuild -ta "$TARBALL" --nodeps --define "_topdir $top" "${args[@]}" \
		> build/rpm.log 2>&1 || { tail -40 build/rpm.log; die "rpmbuild failed (build/rpm.log)"; }
	find "$top/RPMS" "$top/SRPMS" -name '*.rpm' | sort
}

deb_pkgs() {
	command -v dpkg-buildpackage >/dev/null || die "dpkg-buildpackage missing (scripts/deps.sh --packages)"
	local out=$TOP/build/deb src
	rm -rf "$out"
	mkdir -p "$out"
	# The upstream tarball under Debian's name, unpacked, with
	# contrib/debian as its debian/ (3.0 (quilt)).
	cp "$TARBALL" "$out/vcache_$V.orig.tar.gz"
	tar -xzf "$TARBALL" -C "$out"
	src=$out/vcache-$V
	cp -a "$src/contrib/debian" "$src/debian"
	(cd "$src" && dpkg-buildpackage -us -uc -b) > build/deb.log 2>&1 ||
		{ tail -40 build/deb.log; die "dpkg-buildpackage failed (build/deb.log)"; }
	find "$out" -maxdepth 1 -name '*.deb' | sort
}

case ${1:-} in
rpm) rpm_pkgs ;;
deb) deb_pkgs ;;
*) die "usage: scripts/packages.sh rpm|deb" ;;
esac
