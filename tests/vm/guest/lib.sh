# SPDX-License-Identifier: GPL-2.0
# Helpers for guest-side test scripts (sourced; bash).  Each check prints a
# TAP line "ok - ..." or "not ok - ..."; t_done exits 1 if any failed.
VC_FAILS=0

t_ok() { echo "ok - $*"; }
# Failures are also noted in the run directory: a phase that ends in a
# power cut has no exit status, and tests/vm/run fails it on this file.
t_fail() {
	echo "not ok - $*"
	VC_FAILS=$((VC_FAILS + 1))
	[ -n "${VC_RUN_DIR:-}" ] && echo "$*" >> "$VC_RUN_DIR/failed-checks"
	return 0
}

# check DESCRIPTION CMD...: run CMD, pass if it succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then t_ok "$desc"; else t_fail "$desc"; fi
}

t_done() { exit $((VC_FAILS > 0)); }

# vc_wait_cards: wait up to 30 s for $VC_WAIT_DISKS (default 1) card disks
# (/dev/vflash*) after the module is loaded; prints how many there are and
# fails if fewer.  init.sh (the run's load) and vm-group (its reloads).
vc_wait_cards() {
	local n=0
	for _ in $(seq 300); do
		n=$(ls -d /sys/block/vflash* 2>/dev/null | wc -l)
		[ "$n" -ge "${VC_WAIT_DISKS:-1}" ] && break
		sleep 0.1
	done
	echo "$n"
	[ "$n" -ge "${VC_WAIT_DISKS:-1}" ]
}

# wait_nonempty SECONDS FILE...: each FILE is there and not empty within
# SECONDS of the wait for it.  A power-cut test's writer acknowledges its
# first fsync'd file in under a second to over 20 s under TCG (7.2 and the
# debug kernel the slowest): what the test needs is acknowledged files to
# check after the cut, not a speed.
wait_nonempty() {
	local i f s=$1
	shift
	for f in "$@"; do
		for i in $(seq $((s * 5))); do
			[ -s "$f" ] && break
			sleep 0.2
		done
		[ -s "$f" ] || return 1
	done
}

# vc_rmmod [TRIES]: unload vcache, trying TRIES times (default 20) 0.5 s
# apart (udev's probe of a disk that just changed may hold it a moment);
# fails if it is still loaded.  On the debug kernel every kobject's release
# comes 1-4 s late (DEBUG_KOBJECT_RELEASE): the module's exit itself waits
# for its disks' and kobjects' releases (driver/vc_release.c).
vc_rmmod() {
	local i
	grep -q '^vcache ' /proc/modules || return 0
	for i in $(seq "${1:-20}"); do
		[ "$i" = 1 ] || sleep 0.5
		rmmod vcache 2>/dev/null && return 0
	done
	! grep -q '^vcache ' /proc/modules
}

# vc_faults PROB|on: set every armed fault's probability ($VC_FAULTS, words
# NAME=PROB,INTERVAL,TIMES; init.sh arms them) to PROB, or back to its own
# with "on".  "on" also marks the cards' and the HDD's disks for
# fail_make_request (make-it-fail): a card probed again is a new disk.
vc_faults() {
	local spec d p b
	for spec in ${VC_FAULTS:-}; do
		d=/sys/kernel/debug/${spec%%=*}
		[ -d "$d" ] || continue
		p=$1
		if [ "$p" = on ]; then
			p=${spec#*=}
			p=${p%%,*}
			[ "${spec%%=*}" = fail_make_request ] &&
				for b in /sys/block/vflash* /sys/block/vd*; do
					[ -e "$b/make-it-fail" ] && echo 1 > "$b/make-it-fail"
				done
		fi
		echo "${p:-1}" > "$d/probability"
	done
}

# vc_insmod [PARAM...]: load the module under test ($VC_MODULE) with the
# faults ($VC_FAULTS) off around it, as vm-group's reloads are: failslab's
# cache filter (failslab=P,I,T,vcc_io) fails the module's init, which
# fills its pools' reserves from those caches (a clean ENOMEM refusal,
# docs/debug-kernel-findings.md), so a test that reloads the module would
# find none.  What the reload sets going (probes, caches loading) runs on
# under the faults once insmod returns.
vc_insmod() {
	local rc
	[ -z "${VC_FAULTS:-}" ] || vc_faults 0
	insmod "${VC_MODULE:-$VC_TOP/vcache.ko}" "$@"
	rc=$?
	[ -z "${VC_FAULTS:-}" ] || vc_faults on
	return $rc
}

# fwstat CARD KEY: one counter of the card's firmware (vcfw stats --json).
fwstat() {
	vcfw -c "$1" stats --json |
		python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

# card_bdf CARD: the guest PCI address of card CARD (the host's index, as
# vcfw -c takes it), which stays the same across removal and rescan.
card_bdf() { vm-request bdf "$1"; }

# bdf_disk BDF [TENTHS]: the card's disk (/dev/vflashN: the name may change
# across removal and rescan), waiting up to TENTHS tenths of a second
# (default 100) for it to appear.
bdf_disk() {
	local d=/sys/bus/pci/devices/$1 n
	for _ in $(seq "${2:-100}"); do
		n=$(cat "$d/disk" 2>/dev/null)
		[ -n "$n" ] && [ -b "/dev/$n" ] && { echo "/dev/$n"; return 0; }
		sleep 0.1
	done
	return 1
}

# carddir DISK: sysfs directory of the card (PCI function) behind DISK.
carddir() {
	local n=${1#/dev/} d
	for d in /sys/bus/pci/devices/*; do
		if [ -e "$d/disk" ] && [ "$(cat "$d/disk")" = "$n" ]; then
			echo "$d"
			return 0
		fi
	done
	echo "carddir: no card behind $n" >&2
	return 1
}

# sysattr DISK ATTR: a vcache sysfs attribute of the card behind DISK.
sysattr() {
	local d
	d=$(carddir "$1") && cat "$d/$2"
}

# expect_eio CMD...: CMD must fail with EIO (Input/output error).
expect_eio() {
	local out
	if out=$("$@" 2>&1); then
		echo "  unexpected success: $*"
		return 1
	fi
	if ! grep -q "Input/output error" <<<"$out"; then
		echo "  failed, but not with EIO: $out"
		return 1
	fi
}

# dead_io_refused DEV: new I/O on a disk whose card is dead gets nowhere:
# EIO, or, on kernels whose blk_mark_disk_dead() zeroes the capacity (6.12
# and later), the disk is empty and a read returns no data.
dead_io_refused() {
	if [ "$(blockdev --getsize64 "$1")" = 0 ]; then
		[ "$(dd if="$1" bs=4k count=1 iflag=direct status=none | wc -c)" = 0 ]
	else
		expect_eio dd if="$1" of=/dev/null bs=4k count=1 iflag=direct status=none
	fi
}

# fio_verify DEV NAME FIO-ARGS...: a verified fio run (crc32c), pass if fio
# succeeds and reports no verify error.
fio_verify() {
	local dev=$1 name=$2 out
	shift 2
	out=$(fio --output-format=terse --terse-version=3 --direct=1 \
		--ioengine=libaio --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 \
		--filename="$dev" --group_reporting=0 --name="$name" "$@" 2>&1)
	local rc=$?
	if [ $rc -ne 0 ] || grep -qi "verify.*fail\|bad magic\|crc32c: wanted" <<<"$out"; then
		echo "$out" | tail -20
		return 1
	fi
}

# wait_gone PID SECONDS: wait for PID to exit; fail if still alive.
wait_gone() {
	local i
	for i in $(seq $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}
