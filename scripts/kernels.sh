#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernels vcache supports, from Debian's packages, and a build
# environment for each.
#
#   scripts/kernels.sh fetch [NAME...]   install or update them (idempotent)
#   scripts/kernels.sh list              NAME RELEASE IMAGE ROOT, one a line
#   scripts/kernels.sh release NAME      the kernel release of NAME
#   scripts/kernels.sh image VERSION     the image of a release, a unique
#                                        prefix of one ("6.12") or a NAME
#   scripts/kernels.sh run NAME CMD...   run CMD in NAME's build environment,
#                                        in the current directory
#   scripts/kernels.sh checkpatch NAME   where NAME's own checkpatch.pl is in
#                                        that environment
#   scripts/kernels.sh names             the NAMEs, one line
#   scripts/kernels.sh host              the NAME of the host's own kernel
#
# NAME is a Debian suite; each supported kernel is the one its
# linux-image-amd64 depends on, resolved from the suite's package index on
# every fetch, so "sid" follows new releases by itself:
#
#   bookworm  Debian 12 (the host's own kernel, installed by deps.sh)
#   trixie    Debian 13 (6.12, the base of RHEL 10)
#   sid       the newest kernel Debian ships
#
# A suite other than the host's gets a debootstrap chroot under
# $VCACHE_KERNELS_DIR/NAME/root (default /opt/vcache/kernels) with its own
# compiler, kbuild tools, headers and sparse installed by apt (their
# binaries need that suite's libc); the kernel's image and modules are installed by apt into the same root
# (the host's boot loader and kernel packages are left alone), so the
# guest's kernel is ROOT/boot/vmlinuz-RELEASE and its modules tree
# ROOT/lib/modules/RELEASE.  The source tree is bind-mounted at the same
# path inside, in a private mount namespace that vanishes with the command.  To add a kernel: add its suite to KERNELS
# below (or set VCACHE_KERNELS), run `scripts/kernels.sh fetch`.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BASE=${VCACHE_KERNELS_DIR:-/opt/vcache/kernels}
MIRROR=${VCACHE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
read -r -a KERNELS <<<"${VCACHE_KERNELS:-bookworm trixie sid}"
HOST_SUITE=bookworm
# A mirror may serve a snapshot of a suite whose Release file is past its
# Valid-Until date (sid's is valid for a week); the signature is still
# checked.
APT_OPTS=${VCACHE_KERNELS_APT_OPTS:--o Acquire::Check-Valid-Until=false}
# What a build environment needs besides the kernel's image and headers.
# linux-source: for the suite's own checkpatch.pl.
CHROOT_PKGS="make gcc libc6-dev sparse kmod perl ca-certificates linux-source"
CHECKPATCH_IN_ROOT=/usr/src/vcache-checkpatch

die() { echo "kernels: $*" >&2; exit 1; }
note() { echo "kernels: $*" >&2; }

known() {
	local k
	for k in "${KERNELS[@]}"; do [ "$k" = "$1" ] && return 0; done
	return 1
}

root_of() {
	if [ "$1" = "$HOST_SUITE" ]; then echo /; else echo "$BASE/$1/root"; fi
}

# The release (uname -r) a package's dependency names: linux-X-VER-amd64.
dep_release() {
	sed -nE 's/.*linux-(image|headers)-([^ ,]+-amd64).*/\2/p' | head -n1
}

# in_root ROOT CMD...: CMD chrooted in ROOT, with /proc, /dev and the
# source tree mounted in a private mount namespace.
in_root() {
	local root=$1
	shift
	unshare --mount --propagation private -- \
		sh -ec 'r=$1; top=$2; shift 2
			mount -t proc proc "$r/proc"
			mount --rbind /dev "$r/dev"
			mkdir -p "$r$top"
			mount --bind "$top" "$r$top"
			cwd=$(pwd)
			exec chroot "$r" sh -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"' \
		sh "$root" "$TOP" "$@"
}

fetch_host() {
	local rel
	rel=$(dpkg-query -W -f '${Depends}' linux-image-amd64 2>/dev/null | dep_release)
	[ -n "$rel" ] || die "linux-image-amd64 is not installed (run scripts/deps.sh)"
	[ -f "/boot/vmlinuz-$rel" ] && [ -d "/lib/modules/$rel/build" ] ||
		die "$HOST_SUITE: /boot/vmlinuz-$rel or its headers missing (run scripts/deps.sh)"
	mkdir -p "$BASE/$HOST_SUITE"
	echo "$rel" >"$BASE/$HOST_SUITE/release"
}

fetch_chroot() {
	local suite=$1 dir=$BASE/$1 root=$BASE/$1/root rel old
	mkdir -p "$dir"
	if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -e "$dir/.bootstrapped" ]; then
		command -v debootstrap >/dev/null ||
			die "debootstrap missing (run scripts/deps.sh)"
		note "$suite: debootstrap into $root (a few minutes, once)"
		rm -rf "$root"
		debootstrap --variant=minbase "$suite" "$root" "$MIRROR" \
			>"$dir/debootstrap.log" 2>&1 ||
			die "$suite: debootstrap failed, see $dir/debootstrap.log"
		touch "$dir/.bootstrapped"
	fi
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	old=$(cat "$dir/release" 2>/dev/null || true)
	# shellcheck disable=SC2086
	if ! in_root "$root" apt-get update -qq $APT_OPTS >"$dir/apt.log" 2>&1; then
		[ -n "$old" ] || die "$suite: apt-get update failed, see $dir/apt.log"
		note "$suite: package index not reachable, keeping $old"
		return 0
	fi
	# shellcheck disable=SC2086
	in_root "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends linux-image-amd64 linux-headers-amd64 $CHROOT_PKGS \
		>>"$dir/apt.log" 2>&1 ||
		die "$suite: installing headers and tools failed, see $dir/apt.log"
	# Kernels the suite no longer names (sid moved on) go.
	in_root "$root" env DEBIAN_FRONTEND=noninteractive apt-get autoremove \
		--purge -y -qq >>"$dir/apt.log" 2>&1 || true
	rel=$(in_root "$root" dpkg-query -W -f '${Depends}' linux-headers-amd64 | dep_release)
	[ -n "$rel" ] || die "$suite: cannot tell which kernel linux-headers-amd64 names"
	[ -f "$root/boot/vmlinuz-$rel" ] && [ -f "$root/lib/modules/$rel/modules.dep" ] ||
		die "$suite: linux-image-$rel not installed in $root, see $dir/apt.log"
	[ -d "$root/lib/modules/$rel/build" ] ||
		die "$suite: headers of $rel missing in $root"
	extract_checkpatch "$suite" "$root"
	echo "$rel" >"$dir/release"
	[ "$old" = "$rel" ] || note "$suite: kernel $rel"
}

# The suite's own checkpatch.pl (with its spelling and const_structs
# lists), from its linux-source tarball, into ROOT$CHECKPATCH_IN_ROOT.
extract_checkpatch() {
	local suite=$1 root=$2 tar top cp=$2$CHECKPATCH_IN_ROOT
	tar=$(find "$root/usr/src" -maxdepth 1 -name 'linux-source-*.tar.xz' | sort -V | tail -n1)
	[ -n "$tar" ] || die "$suite: no linux-source tarball in $root/usr/src"
	[ "$cp/checkpatch.pl" -nt "$tar" ] && return 0
	top=$(basename "$tar" .tar.xz)
	rm -rf "$cp"
	mkdir -p "$cp"
	tar -xJf "$tar" -C "$cp" --strip-components=2 "$top/scripts/checkpatch.pl" \
		"$top/scripts/spelling.txt" "$top/scripts/const_structs.checkpatch" ||
		die "$suite: checkpatch.pl not found in $tar"
	touch "$cp/checkpatch.pl"
}

cmd_fetch() {
	local k
	[ $# -gt 0 ] || set -- "${KERNELS[@]}"
	[ "$(id -u)" -eq 0 ] || die "fetch needs root (debootstrap, chroot)"
	mkdir -p "$BASE"
	exec 9>"$BASE/.lock"
	flock 9
	for k in "$@"; do
		known "$k" || die "unknown kernel '$k' (supported: ${KERNELS[*]})"
		if [ "$k" = "$HOST_SUITE" ]; then fetch_host; else fetch_chroot "$k"; fi
	done
}

cmd_release() {
	known "$1" || die "unknown kernel '$1' (supported: ${KERNELS[*]})"
	[ -s "$BASE/$1/release" ] || die "$1 not fetched (scripts/kernels.sh fetch $1)"
	cat "$BASE/$1/release"
}

cmd_list() {
	local k rel root
	for k in "${KERNELS[@]}"; do
		[ -s "$BASE/$k/release" ] || continue
		rel=$(cat "$BASE/$k/release")
		root=$(root_of "$k")
		echo "$k $rel ${root%/}/boot/vmlinuz-$rel $root"
	done
}

# A release, a unique prefix of one, or a NAME -> the image path.
cmd_image() {
	local want=$1 k rel root hits=()
	for k in "${KERNELS[@]}"; do
		[ -s "$BASE/$k/release" ] || continue
		rel=$(cat "$BASE/$k/release")
		root=$(root_of "$k")
		if [ "$want" = "$k" ] || [ "$want" = "$rel" ]; then
			hits=("${root%/}/boot/vmlinuz-$rel")
			break
		fi
		case $rel in "$want".*|"$want"-*|"$want"+*) hits+=("${root%/}/boot/vmlinuz-$rel") ;; esac
	done
	# The host's installed kernels count too (e.g. an older 6.1 ABI).
	if [ ${#hits[@]} -eq 0 ] && [ -f "/boot/vmlinuz-$want" ]; then
		hits=("/boot/vmlinuz-$want")
	fi
	case ${#hits[@]} in
	0) die "no kernel '$want' (have: $(cmd_list | awk '{printf "%s%s (%s)", s, $2, $1; s=", "}'); scripts/kernels.sh fetch)" ;;
	1) echo "${hits[0]}" ;;
	*) die "'$want' is ambiguous: ${hits[*]}" ;;
	esac
}

# The directory of NAME's checkpatch.pl, as seen in its build environment.
cmd_checkpatch() {
	cmd_release "$1" >/dev/null
	if [ "$1" = "$HOST_SUITE" ]; then
		echo "$TOP/build/checkpatch"
	else
		echo "$CHECKPATCH_IN_ROOT"
	fi
}

cmd_run() {
	local k=$1 root
	shift
	[ $# -gt 0 ] || die "run $k: no command"
	cmd_release "$k" >/dev/null
	root=$(root_of "$k")
	if [ "$root" = / ]; then
		"$@"
	else
		[ "$(id -u)" -eq 0 ] || die "run $k needs root (chroot)"
		in_root "$root" "$@"
	fi
}

case ${1:-} in
fetch) shift; cmd_fetch "$@" ;;
list) cmd_list ;;
release) [ $# -eq 2 ] || die "usage: $0 release NAME"; cmd_release "$2" ;;
image) [ $# -eq 2 ] || die "usage: $0 image VERSION"; cmd_image "$2" ;;
checkpatch) [ $# -eq 2 ] || die "usage: $0 checkpatch NAME"; cmd_checkpatch "$2" ;;
run) [ $# -ge 3 ] || die "usage: $0 run NAME CMD..."; shift; cmd_run "$@" ;;
names) echo "${KERNELS[*]}" ;;
host) echo "$HOST_SUITE" ;;
*) sed -n '4,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
