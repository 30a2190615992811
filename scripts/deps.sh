#!/usr/bin/env bash
# Install what vcache needs to build and test, on Debian 12.  Idempotent and
# quiet when everything is present.  Builds /opt/vcache/bin/promlint (the
# Prometheus metrics check, tests/promlint) with the machine's Go.  Used by `make deps` (and so by `make
# demo`).  With --kernels (`make check`, `make check-kernels`) it also
# fetches every supported kernel with its build environment
# (scripts/kernels.sh fetch: Debian 12's, 13's and the newest).  With
# --packages (`make check`, `make rpm`, `make deb`, `make check-packages`)
# it also installs what builds and lints the packages: rpm (rpmbuild),
# rpmlint, debhelper, dh-dkms with dkms, lintian, and dnf with createrepo-c
# (scripts/rpmroot.sh).  With --debug-kernel
# (`make check-debug`) what builds a kernel from linux-source-6.1 (flex,
# bison, bc, libelf-dev, libssl-dev; scripts/debug-kernel.sh).  With
# --bench (`make bench`) Debian's postgresql (the server, initdb, pg_ctl,
# pgbench and psql, which the guest runs from the host's root filesystem).
set -euo pipefail

kernels=0
for a in "$@"; do
	case $a in
	--kernels) kernels=1 ;;
	--packages) pkgs_packages=1 ;;
	--debug-kernel) pkgs_debug_kernel=1 ;;
	--bench) pkgs_bench=1 ;;
	*) echo "usage: scripts/deps.sh [--kernels] [--packages] [--debug-kernel] [--bench]" >&2; exit 2 ;;
	esac
done

VENV=${VCACHE_VENV:-/opt/vcache/venv}
KVER=${VCACHE_KVER:-}

pkgs=(
	build-essential pkg-config gcc make
	qemu-system-x86 qemu-system-data qemu-utils
	linux-image-amd64 linux-headers-amd64
	fio kmod busybox-static udev bcache-tools
	libnl-3-dev libnl-genl-3-dev libjson-c-dev libssl-dev libcmocka-dev
	python3-venv python3-pip
	clang llvm lld valgrind sparse mandoc linux-source-6.1
	libclang-rt-14-dev debootstrap
	tmux python3-jsonschema
	nbdkit nbdkit-plugin-dev python3-matplotlib
	curl unzip ca-certificates
)
if [ -n "${pkgs_packages:-}" ]; then
	pkgs+=(rpm rpmlint debhelper dh-dkms dkms lintian cpio dnf createrepo-c)
fi
if [ -n "${pkgs_bench:-}" ]; then
	# postgresql-15 and postgresql-client-15 through the metapackage;
	# Debian's postinst creates the postgres user the guest runs it as
	pkgs+=(postgresql)
fi
if [ -n "${pkgs_debug_kernel:-}" ]; then
	pkgs+=(flex bison bc libelf-dev libssl-dev xz-utils)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/vng" ]; then
	echo "deps: installing virtme-ng into $VENV"
	mkdir -p "$(dirname "$VENV")"
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check virtme-ng
fi

# promlint: `promtool check metrics` without the Prometheus server (Debian
# 12 ships promtool only inside the server's package): the linter of the
# Prometheus Go client library that promtool runs, in a few lines of Go
# (tests/promlint), its modules pinned by go.sum and fetched from the Go
# module proxy, built with the machine's Go (1.21 or later: an older one
# fetches the go.mod's toolchain, itself a module, from the same proxy).
PROMLINT=${VCACHE_PROMLINT:-/opt/vcache/bin/promlint}
src=$(cd "$(dirname "$0")/../tests/promlint" && pwd)
want=$(cat "$src/go.mod.in" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)
if [ ! -x "$PROMLINT" ] || [ "$(cat "$PROMLINT.stamp" 2>/dev/null)" != "$want" ]; then
	GO=$(command -v go || echo /usr/local/go/bin/go)
	if ! [ -x "$GO" ] || ! "$GO" version | grep -qE 'go1\.(2[1-9]|[3-9][0-9])'; then
		# Debian 12's Go is 1.19 (too old for the modules): the Go
		# toolchain itself from the Go module proxy, as GOTOOLCHAIN
		# fetches it, pinned by its checksum
		tc=v0.0.1-go1.23.4.linux-amd64
		tc_sha=e1e33fbe9bdeed9d1eec878f90eaf9a1dc856b9197d89e6745373b8c61a57c87
		GO=/opt/vcache/go/bin/go
		if [ "$(cat /opt/vcache/go.stamp 2>/dev/null)" != "$tc" ]; then
			[ "$(dpkg --print-architecture)" = amd64 ] || { echo "deps: install Go 1.21 or later to build promlint" >&2; exit 1; }
			echo "deps: fetching the Go toolchain ($tc) from the Go module proxy"
			z=$(mktemp /tmp/vcache-go.XXXXXX)
			d=$(mktemp -d /tmp/vcache-go.XXXXXX)
			if ! curl -sSfL -o "$z" "https://proxy.golang.org/golang.org/toolchain/@v/$tc.zip" ||
			   ! echo "$tc_sha  $z" | sha256sum -c --quiet ||
			   ! unzip -q "$z" -d "$d"; then
				rm -rf "$z" "$d"
				echo "deps: cannot fetch the Go toolchain for promlint" >&2
				exit 1
			fi
			rm -rf /opt/vcache/go
			mkdir -p /opt/vcache
			mv "$d/golang.org/toolchain@$tc" /opt/vcache/go
			rm -rf "$z" "$d"
			echo "$tc" > /opt/vcache/go.stamp
		fi
	fi
	echo "deps: building promlint into $PROMLINT"
	mkdir -p "$(dirname "$PROMLINT")"
	# (go.mod.in: kbuild's `make clean` over this tree deletes *.mod)
	b=$(mktemp -d /tmp/vcache-promlint.XXXXXX)
	cp "$src/main.go" "$src/go.sum" "$b/"
	cp "$src/go.mod.in" "$b/go.mod"
	(cd "$b" && GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=auto \
		nice "$GO" build -trimpath -o "$PROMLINT.tmp" .) || { rm -rf "$b"; echo "deps: building promlint failed" >&2; exit 1; }
	rm -rf "$b"
	mv "$PROMLINT.tmp" "$PROMLINT"
	echo "$want" > "$PROMLINT.stamp"
fi

# The guest kernel: Debian's, matching the installed headers.
if [ -z "$KVER" ]; then
	KVER=$(ls /lib/modules | grep -E 'amd64$' | sort -V | tail -n1)
fi
if [ ! -f "/boot/vmlinuz-$KVER" ] || [ ! -d "/lib/modules/$KVER/build" ]; then
	echo "deps: kernel $KVER image or headers missing" >&2
	exit 1
fi

if [ "$kernels" = 1 ]; then
	"$(dirname "$0")/kernels.sh" fetch
fi
