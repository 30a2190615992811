#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/pkgvm-boots.sh DIR IMG: the three boots of `make check-packages`
# (tests/vm/packages.guest) on the run directory DIR, which holds the .debs
# and the DKMS tarball (scripts/check-packages.sh puts them there), from the
# installed-system image IMG (scripts/pkgvm.sh image):
#
#   install  fresh media and root overlay (tests/vm/run --keep DIR)
#   reboot   the same root, card and disk (--reuse DIR)
#   missing  the same, without the disk at boot (--reuse DIR --hdd-late)
#
# The boots share their state, so they run under one hold of the VM lock:
# scripts/check-packages.sh runs this under `flock /tmp/vcache-vm.lock`,
# and tests/vm/run, finding the lock held by an ancestor, runs under it
# (no other VM between two boots of the same installed system).
#
# A boot follows the previous one when that one's guest ran to its end
# (its phase finished and powered the system off), whatever its checks
# said: every failure is still counted, and the next boot's checks say
# more than a run that stops at the first failure.
#
# Prints each boot's TAP lines as "[PHASE] ok - ..." and a PASS or FAIL
# line for what the host checks; scripts/check-packages.sh counts both.
set -u
[ $# = 2 ] || { echo "usage: scripts/pkgvm-boots.sh DIR IMG" >&2; exit 2; }
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
vmdir=$1
img=$2
GUEST=$TOP/tests/vm/packages.guest
ok() { echo "PASS $1"; }
bad() { echo "FAIL $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /'; }

# vmrun PHASE RUNNER-OPTS...: one boot; true when its guest ran to the end
# (the phase's status in DIR/rc), whatever its checks said
vmrun() {
	local ph=$1 rc vf t0=$SECONDS log=$vmdir/../packages-$1.log
	shift
	tests/vm/run "$@" --timeout 1200 -- "$GUEST" "$ph" > "$log" 2>&1
	rc=$?
	grep -aE '^(ok|not ok) - |^# ' "$log" | sed "s/^/[$ph] /"
	vf=$(grep -ac '^not ok - ' "$log")
	echo "# [$ph] tests/vm/run exit $rc in $((SECONDS - t0)) s (log: $log)"
	if [ $rc != 0 ] && [ "$vf" = 0 ]; then
		bad "VM boot '$ph' (tests/vm/run exit $rc)" "$(tail -40 "$log")"
	fi
	[ -f "$vmdir/rc" ]
}

opts=(--kernel trixie --cards 1 --card-size 256M --hdd-size 512M --hdd-model fast --memory 1G)
vmrun install "${opts[@]}" --root-image "$img" --keep "$vmdir" || exit 0
# systemd's lines and the kernel's, on the serial console: the file system
# unmounted, then the cache stopped and the card shut down clean (systemd
# colours the unit names: its escape sequences removed first)
console=$(sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' "$vmdir/console.log")
seq=$(grep -an 'Unmounted srv-db.mount\|vcache: db: stopped\|clean shutdown, write buffer durable' \
	<<<"$console" | cut -d: -f1 | tr '\n' ' ')
if awk '/Unmounted srv-db.mount/ {u = NR} /vcache: db: stopped/ {s = NR}
	/clean shutdown, write buffer durable/ {c = NR}
	END {exit !(u && s > u && c > s)}' <<<"$console"; then
	ok "power-off: /srv/db unmounted, then the cache stopped, then the card shut down clean (console lines $seq)"
else
	bad "power-off order on the console" "$(grep -a 'srv-db\|vcache\|vflash' <<<"$console" | tail -20)"
fi
cp "$vmdir/console.log" "$vmdir/../packages-install-console.log" 2>/dev/null
# the install boot left files to compare with: without them the next boots
# have nothing to find
[ -f "$vmdir/sums" ] || { bad "the install boot wrote no files (no $vmdir/sums): reboot and missing not run"; exit 0; }
vmrun reboot --kernel trixie --reuse "$vmdir" || exit 0
cp "$vmdir/console.log" "$vmdir/../packages-reboot-console.log" 2>/dev/null
vmrun missing --kernel trixie --reuse "$vmdir" --hdd-late
cp "$vmdir/console.log" "$vmdir/../packages-missing-console.log" 2>/dev/null
exit 0
