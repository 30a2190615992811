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

# builds DIR...: make what the guest runs (directories under the top),
# a TAP failure for each that does not build.
builds() {
	local d
	for d; do make -s -C "$TOP/$d" >/dev/null || t_fail "$d builds"; done
}

# group_members GROUP [NAME...]: the members of GROUP (tests/vm/tests/GROUPS)
# to run, in the group's order: the NAMEs given, or all.
group_members() {
	local g=$1 m
	shift
	for m in $(sed -n "s/^$g: //p" "$TESTS/GROUPS"); do
		if [ $# -eq 0 ] || [[ " $* " == *" $m "* ]]; then echo "$m"; fi
	done
}

# group_of NAME: the group NAME is a member of (nothing if none).
group_of() {
	sed -n "s/^\([^#:]*\): .*\<$1\>.*/\1/p" "$TESTS/GROUPS"
}

# group_run GROUP RUN-OPTION... -- [NAME...]: one boot (tests/vm/run with
# the options) running GROUP's members named, or all, with vm-group; the
# timeout is 900 s a member.  Prints the run's TAP line.
group_run() {
	local g=$1 opts=() members=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	mapfile -t members < <(group_members "$g" "$@")
	"$RUN" "${opts[@]}" --timeout $((900 * ${#members[@]})) -- \
		"$TOP/tests/vm/guest/bin/vm-group" "$TESTS" "${members[@]}"
	vm_status "$g (${members[*]}): guest checks passed and kernel log clean" 0 $?
}
