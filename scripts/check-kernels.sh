#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build and test vcache.ko on every supported kernel (scripts/kernels.sh).
#
#   scripts/check-kernels.sh [--build-only] [--others] [NAME...]
#
# For each kernel, in that kernel's build environment: a W=1 build with no
# warning in driver/, that kernel's own checkpatch --strict and sparse
# (`make -C driver check`), on a private copy of the sources, leaving the module in
# build/kernels/NAME/vcache.ko.  Then, unless --build-only, on that kernel
# in the VM bench: the driver's VM suite (driver/tests/run) and the smoke
# test (tests/vm/smoke: fio verify through the card, power cut, the data
# after it, rmmod), and the cached device's suites (tests/vm/tests 50-54,
# KERNEL_CACHED_TESTS= to choose).  Prints one table (kernel, build, tests passed/failed)
# and closes with "N passed, N failed" over all of it; exits non-zero on
# any failure.  Logs: build/kernels/NAME/*.log.
# --others: every kernel but the host's own (make check: its driver-style
# suite already builds, checkpatches and sparses the host's kernel, and
# its VM suites run on it).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
K=scripts/kernels.sh
build_only=0
others=0
while [ $# -gt 0 ]; do
	case $1 in
	--build-only) build_only=1; shift ;;
	--others) others=1; shift ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	read -r -a names <<<"$($K names)"
	set -- "${names[@]}"
fi
if [ $others = 1 ]; then
	host=$($K host)
	keep=()
	for k in "$@"; do [ "$k" = "$host" ] || keep+=("$k"); done
	set -- "${keep[@]}"
fi

# The host kernel's checkpatch.pl comes from its linux-source (see
# driver/Makefile); the others' from their suite's (scripts/kernels.sh).
make -s -C driver checkpatch-script || exit 1

pass=0
fail=0
rows=()
for k in "$@"; do
	out=build/kernels/$k
	if ! rel=$($K release "$k"); then
		rows+=("$(printf '%-9s %-26s %-6s %s' "$k" "?" "FAIL" "not fetched (scripts/kernels.sh fetch $k)")")
		fail=$((fail + 1))
		continue
	fi
	rm -rf "$out"
	mkdir -p "$out/src"
	# the sources only: the host's objects may be half-written by a
	# build of the host's module running beside this one (make check)
	tar -c --exclude='*.o' --exclude='.*.cmd' --exclude='*.ko' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude='*.a' \
		Kbuild include driver cache | tar -x -C "$out/src"
	echo "=== $k ($rel): build, W=1, checkpatch, sparse"
	$K run "$k" make -s -C "$TOP/$out/src/driver" check \
		KDIR="/lib/modules/$rel/build" \
		CHECKPATCH_DIR="$($K checkpatch "$k")" >"$out/build.log" 2>&1
	brc=$?
	grep -E '^(PASS|FAIL|SKIP) ' "$out/build.log" | sed 's/^/  /'
	bp=$(grep -c '^PASS ' "$out/build.log")
	bf=$(grep -c '^FAIL ' "$out/build.log")
	if [ $brc -ne 0 ] || [ ! -f "$out/src/vcache.ko" ]; then
		[ "$bf" -gt 0 ] || bf=1
		tail -40 "$out/build.log"
		build="FAIL"
	else
		cp "$out/src/vcache.ko" "$out/vcache.ko"
		build="ok"
	fi
	pass=$((pass + bp))
	fail=$((fail + bf))
	tests="-"
	if [ $build_only = 0 ]; then
		tp=0
		tf=0
		if [ "$build" = ok ]; then
			for t in driver smoke cached; do
				case $t in
				driver) cmd=(driver/tests/run) ;;
				smoke) cmd=(tests/vm/smoke) ;;
				# the cached device's suites (issue 20): every kernel
				cached) cmd=(tests/vm/check ${KERNEL_CACHED_TESTS:-50-config 51-cached-io 52-cached-powercut 53-cached-failure 54-monitor}) ;;
				esac
				echo "=== $k ($rel): $t in the VM"
				VC_KERNEL=$($K image "$k") VC_MODULE=$TOP/$out/vcache.ko \
					"${cmd[@]}" 2>&1 | tee "$out/$t.log"
				line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/$t.log" | tail -n1)
				p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line")
				f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
				if [ -z "$line" ]; then p=0; f=1; fi
				tp=$((tp + p))
				tf=$((tf + f))
			done
		else
			tf=1
		fi
		tests="$tp passed, $tf failed"
		pass=$((pass + tp))
		fail=$((fail + tf))
	fi
	rows+=("$(printf '%-9s %-26s %-6s %s' "$k" "$rel" "$build" "$tests")")
done

echo
printf '%-9s %-26s %-6s %s\n' name kernel build "VM tests (driver suite + smoke + cached-device suites 50-54)"
printf '%s\n' "${rows[@]}"
echo "kernels: $pass passed, $fail failed"
[ $fail -eq 0 ]
