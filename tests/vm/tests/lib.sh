# SPDX-License-Identifier: GPL-2.0
# Helpers for the host side of tests/vm/tests/*.sh (sourced; bash).
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$TESTS/../../.." && pwd)
RUN="$TOP/tests/vm/run"
VC_FAILS=0

t_ok() { echo "ok - $*"; }
t_fail() { echo "not ok - $*"; VC_FAILS=$((VC_FAILS + 1)); }

# vm_status DESCRIPTION WANT GOT: TAP line for a runner exit status.
vm_status() {
	if [ "$3" = "$2" ]; then t_ok "$1"; else t_fail "$1 (status $3, want $2)"; fi
}

t_done() { exit $((VC_FAILS > 0)); }

# group_members GROUP [NAME...]: the members of GROUP (tests/vm/tests/GROUPS)
# to run, in the group's order: the NAMEs given, or all.
group_members() {
	local g=$1 m
	shift
	for m in $(sed -n "s/^$g: //p" "$TESTS/GROUPS"); do
		if [ $# -eq 0 ] || [[ " $* " == *" $m "* ]]; then echo "$m"; fi
	done
}
