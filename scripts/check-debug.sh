#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-debug`: the driver's and the cached device's VM suites on the
# debug kernel (scripts/debug-kernel.sh: KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
# DEBUG_KOBJECT_RELEASE, KFENCE, kmemleak, debugobjects, fault injection).
#
#   scripts/check-debug.sh [--faults] [SUITE...]
#
# SUITE: "driver" (driver/tests/run: driver, remove, harden) or a VM test
# of tests/vm/tests (50-config, 51-cached-io, ...).  Default: driver and
# every cached-device test (tests/vm/tests/5[0-9]-*.sh).
#
# Builds the debug kernel if it is not built (once; cached under
# /opt/vcache/debug-kernel), builds vcache.ko against it (a private copy
# of the sources in build/debug/src, the module in build/debug/vcache.ko),
# and runs each suite with VC_KERNEL/VC_MODULE pointing at them.  Every VM
# run's kernel log is scanned by tests/vm/run: a KASAN or KFENCE report, a
# lockdep splat, "sleeping function called from invalid context", a
# debugobjects or list-corruption report, and any object kmemleak reports
# at the end of the run (guest/init.sh clears what boot left, scans twice
# after rmmod) fail that run.  The debug kernel is several times slower
# under TCG: every --timeout and the hung-task timeout are scaled by
# VC_TIMEOUT_SCALE (default 4) and guests get at least VC_MIN_MEMORY (2G).
#
# --faults (make check-debug FAULTS=1): the same suites with fault
# injection around each test's command (VC_FAULTS, guest/init.sh):
# failslab on the test programs that mark themselves (vc-torture's writer:
# the submit path; vc-nlfuzz's root run: the netlink admin path), not the
# shell around them; and fail_make_request on the cards and the HDD (the cache's own I/O below
# it).  Default
#   VC_FAULTS="failslab=1,1,-1 fail_make_request=1,10,-1"
# (percent, interval, times).  failslab=P,I,T,CACHES fails only the slab
# caches named (e.g. vcc_io, the cached device's per-I/O cache behind its
# mempool), in every task, instead of the marked programs.  Tests' own checks are expected to fail then
# (ENOMEM, EIO); what must hold is a clean kernel log (no oops, no KASAN,
# no lockdep, no leak), no hang, and the suite running to its end: the
# summary counts runs with a kernel log problem (status 123) or a timeout
# (124) as failures, and a run with fewer than 9 in 10 of the checks of
# the suite's last run without faults (it stopped).  Except the
# members whose checks are written to hold under the faults ($STRICT:
# 61-fault-ack, no acknowledged write lost): their failed checks count.
#
# A boot that hangs before the guest's init (about 1 in 10 here, in
# bursts) is booted again by tests/vm/run itself (--boot-retries, 2 by
# default); a suite whose run still ended hung (status 122) runs again, 3
# times at most.  The table counts both kinds of hang.
#
# Logs: build/debug/NAME.log (NAME-faults.log).  Ends with "N passed, N
# failed" and exits non-zero on any failure.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
faults=0
if [ "${1:-}" = --faults ]; then faults=1; shift; fi
if [ $# -eq 0 ]; then
	set -- driver
	for t in tests/vm/tests/5[0-9]-*.sh; do
		t=${t##*/}
		set -- "$@" "${t%.sh}"
	done
fi

scripts/debug-kernel.sh build || exit 1
KDIR=$(scripts/debug-kernel.sh kdir)
IMAGE=$(scripts/debug-kernel.sh image) || exit 1
REL=$(scripts/debug-kernel.sh release)

out=build/debug
mkdir -p "$out"
rm -rf "$out/src"
mkdir -p "$out/src"
cp -a Kbuild include driver cache "$out/src/"
echo "=== vcache.ko for $REL (KDIR=$KDIR)"
if ! make -C "$KDIR" M="$TOP/$out/src" modules >"$out/build.log" 2>&1 ||
	[ ! -f "$out/src/vcache.ko" ]; then
	tail -n 40 "$out/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi
cp "$out/src/vcache.ko" "$out/vcache.ko"

export VC_KERNEL=$IMAGE VC_MODULE=$TOP/$out/vcache.ko
export VC_TIMEOUT_SCALE=${VC_TIMEOUT_SCALE:-4}
export VC_MIN_MEMORY=${VC_MIN_MEMORY:-2G}
# No 5-level paging in the guest (no5lvl; QEMU's -cpu max offers LA57):
# with KASAN, an interrupt taken while identify_boot_cpu() has cleared
# boot_cpu_data's capabilities makes pgtable_l5_enabled() false for a
# moment, KASAN's shadow range shrinks to 47 bits, and its check of any
# direct-map address (0xff11...) reports a "wild-memory-access" and panics
# (tests/vm/boot-probe: 5 of 150 boots with LA57, 0 of 50 without;
# docs/debug-kernel-findings.md).  A 6.1 race before any module loads, not
# ours; without LA57 the shadow range does not change.
export VC_APPEND="${VC_APPEND:+$VC_APPEND }no5lvl"
suffix=
STRICT=${STRICT:-61-fault-ack}
if [ $faults = 1 ]; then
	export VC_FAULTS=${VC_FAULTS:-"failslab=1,1,-1 fail_make_request=1,10,-1"}
	suffix=-faults
else
	unset VC_FAULTS
fi

pass=0
fail=0
rows=()
start=$(date +%s)
for s in "$@"; do
	log=$out/$s$suffix.log
	case $s in
	driver) cmd=(driver/tests/run) ;;
	*) cmd=(tests/vm/check "$s") ;;
	esac
	echo "=== $s on $REL${VC_FAULTS:+ (faults: $VC_FAULTS)}"
	t0=$(date +%s)
	# A run whose every boot hung before the guest's init (tests/vm/run,
	# status 122, after its own --boot-retries) is no result: the suite
	# runs again, 3 times at most.
	hangs=0 reruns=0
	rm -f "${log%.log}"-boot-hang*.log
	while :; do
		"${cmd[@]}" 2>&1 | tee "$log"
		# hung boots tests/vm/run booted again itself (--boot-retries)
		hangs=$((hangs + $(grep -c '^vm: boot [0-9]* hung: .*booting again' "$log")))
		grep -q '^vm: the guest kernel hung at boot' "$log" || break
		reruns=$((reruns + 1))
		hangs=$((hangs + 1))
		cp "$log" "${log%.log}-boot-hang$reruns.log"
		[ $reruns -lt 3 ] || break
		echo "=== $s: the guest kernel hung at boot ($reruns); running it again"
	done
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
	p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line")
	f=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
	[ -n "$line" ] || { p=0; f=1; }
	# What the kernel log scanner found, by kind (tests/vm/run).
	kinds=$(grep -oE '^vm:   [a-z.]+:[0-9]+: [^:]+:' "$log" |
		sed -E 's/^vm:   [a-z.]+:[0-9]+: //; s/:$//' | sort | uniq -c |
		awk '{n=$1; $1=""; printf "%s%s x%d", sep, substr($0, 2), n; sep=", "}')
	logfails=$(grep -c 'guest kernel log is not clean' "$log")
	timeouts=$(grep -c 'did not finish within --timeout' "$log")
	if [ $faults = 1 ]; then
		# Under injected faults the tests' own checks may fail; the
		# kernel must stay clean and nothing may hang, and the
		# $STRICT members' checks hold ("# NAME: P passed, F failed").
		strict=$(grep -E "^# ($STRICT): [0-9]+ passed, [0-9]+ failed" "$log" |
			sed -E 's/.* ([0-9]+) failed.*/\1/' | awk '{n += $1} END {print n + 0}')
		p=$((p + f))
		f=$((logfails + timeouts + strict))
		# A suite that stopped running (the driver suite's guest lost
		# every exec to a fault outside the module) is no pass either:
		# fewer than 9 in 10 of the checks its run without faults had
		# (build/debug/NAME.log) counts as a failure.
		ran=$p clean=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/$s.log" 2>/dev/null |
			tail -n1 | awk '{print $1 + $3}')
		if [ -n "$clean" ] && [ $((ran * 10)) -lt $((clean * 9)) ]; then
			f=$((f + 1))
			kinds="${kinds:+$kinds, }stopped: $ran of $clean checks ran"
		fi
		# A run that never reached its guest (the runner's own error:
		# a part not built, no VM) or whose guest ran no check at all
		# is no pass, with or without a run to compare with.
		guest=$(grep -E '^(not )?ok - ' "$log" |
			grep -cv 'guest checks passed and kernel log clean')
		if grep -q '^vm: error:' "$log" || [ "$guest" = 0 ]; then
			f=$((f + 1))
			kinds="${kinds:+$kinds, }no guest check ran"
		fi
		p=$((p - f < 0 ? 0 : p - f))
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	[ $hangs = 0 ] || kinds="${kinds:+$kinds, }boot hangs x$hangs"
	# the failures the guest injected, by kind (guest/init.sh faults_off)
	inj=$(grep -oE 'fault injection: [a-z_]+: [0-9]+ failures injected' "$log" |
		awk '{n[$3] += $4} END {for (k in n) {printf "%s%s %d", sep, k, n[k]; sep = " "}}')
	[ -z "$inj" ] || kinds="${kinds:+$kinds, }injected: $inj"
	rows+=("$(printf '%-20s %4d %4d %5d %5d %6ds  %s' "$s" "$p" "$f" "$logfails" "$timeouts" \
		$(($(date +%s) - t0)) "${kinds:--}")")
done

echo
echo "debug kernel $REL${VC_FAULTS:+, faults: $VC_FAULTS}"
printf '%-20s %4s %4s %5s %5s %7s  %s\n' suite pass fail klog tmout time "kernel log findings"
printf '%s\n' "${rows[@]}"
echo "# check-debug: $(($(date +%s) - start)) s"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
