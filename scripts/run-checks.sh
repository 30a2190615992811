#!/usr/bin/env bash
# Run every test suite of vcache, one after another, and print one closing
# line that sums them up: "N passed, N failed".
#
# Each suite is a command that prints its own closing line "N passed, N
# failed" (or TAP/cmocka summaries, which it converts itself) and exits
# non-zero on failure.  A suite without a closing line counts as one
# failure, unless it is a build step (no tests of its own: one pass when it
# succeeds).  Suites skipped on purpose (VCACHE_SKIP_VM) are counted as
# skipped in the closing line, never as passes.
#
# Usage: scripts/run-checks.sh [suite...]   (default: all)
#        VCACHE_SKIP_VM=1 skips the suites that boot a VM.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logdir=build/check
mkdir -p "$logdir"

# name | command
build_suites=" build "
suites=(
	"build|make -s all"
	"cache|make -s -C cache check"
	"firmware-sim|make -s -C firmware-sim check"
	"hdd-model|make -s -C tests/hdd-model check"
	"vcache-sim|make -s -C tools/vcache-sim check"
	"vcache-config|make -s -C tools/vcache-config check"
	"vcache-monitor|make -s -C tools/vcache-monitor check"
	"driver-style|make -s -C driver check"
	"packages|scripts/check-packages.sh"
	"kernels|scripts/check-kernels.sh --build-only --others"
	"driver-vm|make -s -C driver vmcheck"
	"vm|make -s -C tests/vm check"
)
vm_suites=" driver-vm vm "

want=" $* "
total_pass=0
total_fail=0
total_skip=0
summary=()
for s in "${suites[@]}"; do
	name=${s%%|*}
	cmd=${s#*|}
	if [ $# -gt 0 ] && [[ "$want" != *" $name "* ]]; then
		continue
	fi
	if [ -n "${VCACHE_SKIP_VM:-}" ] && [[ "$vm_suites" == *" $name "* ]]; then
		summary+=("$(printf '%-14s skipped (VCACHE_SKIP_VM)' "$name")")
		total_skip=$((total_skip + 1))
		continue
	fi
	log="$logdir/$name.log"
	# The VM suites take the machine-wide VM lock (tests/vm/run) once for
	# all their boots instead of queueing behind other users' VMs at each
	# of their 30-odd boots (VCACHE_VM_LOCK=0: queue per boot).
	if [[ "$vm_suites" == *" $name "* ]] && [ "${VCACHE_VM_LOCK:-1}" != 0 ]; then
		cmd="flock /tmp/vcache-vm.lock $cmd"
	fi
	echo "=== $name: $cmd"
	start=$(date +%s)
	set -o pipefail
	bash -c "$cmd" 2>&1 | tee "$log"
	rc=$?
	set +o pipefail
	secs=$(( $(date +%s) - start ))
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
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
	summary+=("$(printf '%-14s %-18s %4d passed %4d failed %5ds' "$name" "$status" "$p" "$f" "$secs")")
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
