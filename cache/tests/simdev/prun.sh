#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Run one proof, log its output, record PASS/FAIL; never fails itself.
#   prun.sh RESULTS LOGDIR NAME COMMAND...
#   prun.sh --summary RESULTS      prints "N passed, N failed", exit 1 if any failed
if [ "$1" = "--summary" ]; then
	res=$2
	pass=$(grep -c '^PASS ' "$res" 2>/dev/null)
	fail=$(grep -c '^FAIL ' "$res" 2>/dev/null)
	grep '^FAIL ' "$res" 2>/dev/null | sed 's/^/  /'
	echo "${pass:-0} passed, ${fail:-0} failed"
	[ "${fail:-0}" -eq 0 ] && [ "${pass:-0}" -gt 0 ]
	exit $?
fi
res=$1 logdir=$2 name=$3
shift 3
mkdir -p "$logdir"
log=$logdir/$name.log
start=$(date +%s)
"$@" >"$log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
if [ $rc -eq 0 ]; then
	echo "PASS $name (${secs}s)" | tee -a "$res"
	# the figures a proof prints on its last lines
	grep -E '^(model|crash|stress|fuzz|gen-corpus):|^#[0-9]+ *DONE|^Done [0-9]+ runs|stat::number_of_executed_units' "$log" | tail -n 4 | sed 's/^/    /'
else
	echo "FAIL $name (exit $rc, ${secs}s): $*" | tee -a "$res"
	tail -n 25 "$log" | sed 's/^/    /'
fi
exit 0
