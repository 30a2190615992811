# SPDX-License-Identifier: GPL-2.0
# The TAP count of one test run, shared by the host's runner (tests/vm/check:
# one test script a run) and the guest's (guest/bin/vm-group: one member of
# a shared boot a run).  Sourced; bash.

# tap_count NAME LOG RC START: count the "ok"/"not ok" lines in LOG (the
# run's output, removed here); a run that exited RC != 0 without a failed
# check gets one ("not ok - NAME exited with status RC").  Prints
# "# NAME: P passed, F failed in S s" (S from START, epoch seconds) and sets
# TAP_P and TAP_F.
tap_count() {
	local name=$1 log=$2 rc=$3 start=$4
	TAP_P=$(grep -c '^ok ' "$log")
	TAP_F=$(grep -c '^not ok ' "$log")
	rm -f "$log"
	if [ "$rc" -ne 0 ] && [ "$TAP_F" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		TAP_F=1
	fi
	echo "# $name: $TAP_P passed, $TAP_F failed in $(( $(date +%s) - start )) s"
}
