#!/usr/bin/env bash
# Run every test suite of vcache and print one closing line that sums them
# up: "N passed, N failed".
#
# Each suite is a command that prints its own closing line "N passed, N
# failed" (or TAP/cmocka summaries, which it converts itself) and exits
# non-zero on failure.  A suite without a closing line counts as one
# failure, unless it is a build step (no tests of its own: one pass when it
# succeeds).  Suites skipped on purpose (VCACHE_SKIP_VM) are counted as
# skipped in the closing line, never as passes.
#
# Three lanes:
#   pre   the build and the short suites, one after another;
#   vm    the suites that boot VMs (one VM at a time: the machine-wide VM
#         lock, taken once per suite), one after another;
#   bg    the long suites that need no VM and touch nothing the VM suites
#         use (the engine's proofs in build/cache, packages from the `make
#         dist` tarball, the other kernels' builds in build/kernels), run
#         beside the vm lane at nice 19: a VM under TCG leaves a third of
#         the CPU idle (waits for its disks, timeouts, boots), and at nice 19
#         these take only that.  Their output is shown when the vm lane
#         ends, each suite's whole log at once.
# VCACHE_CHECK_SERIAL=1 runs every suite in turn (the bg lane after the vm
# lane), for timings or when nothing may run beside a VM.
#
# Usage: scripts/run-checks.sh [suite...]   (default: all)
#        VCACHE_SKIP_VM=1 skips the suites that boot a VM.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logdir=build/check
mkdir -p "$logdir"

# name | lane | command
build_suites=" build "
suites=(
	"build|pre|make -s all"
	"firmware-sim|pre|make -s -C firmware-sim check"
	"hdd-model|pre|make -s -C tests/hdd-model check"
	"vcache-sim|pre|make -s -C tools/vcache-sim check"
	"vcache-config|pre|make -s -C tools/vcache-config check"
	"vcache-monitor|pre|make -s -C tools/vcache-monitor check"
	"driver-style|pre|make -s -C driver check"
	"cache|bg|make -s -C cache check"
	"packages|bg|scripts/check-packages.sh"
	"kernels|bg|scripts/check-kernels.sh --build-only --others"
	"driver-vm|vm|make -s -C driver vmcheck"
	"vm|vm|make -s -C tests/vm check"
)

want=" $* "
names=()
declare -A lane cmd_of
for s in "${suites[@]}"; do
	name=${s%%|*}
	rest=${s#*|}
	if [ $# -gt 0 ] && [[ "$want" != *" $name "* ]]; then
		continue
	fi
	names+=("$name")
	lane[$name]=${rest%%|*}
	cmd_of[$name]=${rest#*|}
done

# run_suite NAME: runs it, its output to the terminal and to its log (or to
# the log only when $quiet), and leaves "rc secs" in $logdir/NAME.rc.
run_suite() {
	local name=$1 cmd=${cmd_of[$1]} log="$logdir/$1.log" start rc
	# The VM suites take the machine-wide VM lock (tests/vm/run) once for
	# all their boots instead of queueing behind other users' VMs at each
	# of their 30-odd boots (VCACHE_VM_LOCK=0: queue per boot).
	if [ "${lane[$name]}" = vm ] && [ "${VCACHE_VM_LOCK:-1}" != 0 ]; then
		cmd="flock /tmp/vcache-vm.lock $cmd"
	fi
	start=$(date +%s)
	if [ -n "${quiet:-}" ]; then
		bash -c "$cmd" >"$log" 2>&1
		rc=$?
	else
		echo "=== $name: $cmd"
		set -o pipefail
		bash -c "$cmd" 2>&1 | tee "$log"
		rc=$?
		set +o pipefail
	fi
	echo "$rc $(( $(date +%s) - start ))" > "$logdir/$name.rc"
}

rm -f "$logdir"/*.rc
for name in "${names[@]}"; do
	[ "${lane[$name]}" = pre ] && run_suite "$name"
done
run_vm=()
run_bg=()
for name in "${names[@]}"; do
	case ${lane[$name]} in
	vm)
		[ -n "${VCACHE_SKIP_VM:-}" ] || run_vm+=("$name") ;;
	bg)
		run_bg+=("$name") ;;
	esac
done
bg_pid=
if [ ${#run_vm[@]} -gt 0 ] && [ ${#run_bg[@]} -gt 0 ] && [ -z "${VCACHE_CHECK_SERIAL:-}" ]; then
	echo "=== ${run_bg[*]}: beside the VM suites (nice 19); their logs follow the VM suites"
	# the lane renices itself first: the suites' processes inherit it
	( renice -n 19 -p "$BASHPID" >/dev/null
	  quiet=1
	  for name in "${run_bg[@]}"; do run_suite "$name"; done ) &
	bg_pid=$!
	for name in "${run_vm[@]}"; do run_suite "$name"; done
	wait "$bg_pid"
	for name in "${run_bg[@]}"; do
		echo "=== $name: ${cmd_of[$name]} (ran beside the VM suites)"
		cat "$logdir/$name.log"
	done
else
	for name in "${run_bg[@]}" "${run_vm[@]}"; do run_suite "$name"; done
fi

total_pass=0
total_fail=0
total_skip=0
summary=()
for name in "${names[@]}"; do
	if [ "${lane[$name]}" = vm ] && [ -n "${VCACHE_SKIP_VM:-}" ]; then
		summary+=("$(printf '%-14s skipped (VCACHE_SKIP_VM)' "$name")")
		total_skip=$((total_skip + 1))
		continue
	fi
	log="$logdir/$name.log"
	read -r rc secs < "$logdir/$name.rc" 2>/dev/null || { rc=1; secs=0; }
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" 2>/dev/null | tail -n1)
	if [ -n "$line" ]; then
		p=$(sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	else
		p=0; f=0
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		if [[ "$build_suites" == *" $name "* ]]; then
			p=1
		else
			echo "$name: no closing line and no test counted: a failure"
			f=1
		fi
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	status=ok
	[ "$rc" -eq 0 ] || status="FAILED (exit $rc)"
	where=
	[ -n "$bg_pid" ] && [ "${lane[$name]}" = bg ] && where=" (beside vm)"
	summary+=("$(printf '%-14s %-18s %4d passed %4d failed %5ds%s' "$name" "$status" "$p" "$f" "$secs" "$where")")
done

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
if [ "$total_skip" -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
