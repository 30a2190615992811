#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of tests/vm/run: runs as root inside the VM (virtme-ng --exec).
# Sets up the environment, loads vcache.ko, runs the command, unloads the
# module and leaves the kernel log and taint flags in the run directory for
# the host to scan.  Everything the command prints goes to stdout; the kernel
# console goes to the host's console.log.
RUN=$1
# for the host's boot watchdog (tests/vm/run --boot-silence): we got here
: >"$RUN/init-started"
# shellcheck source=/dev/null
. "$RUN/guest.env" || exit 125
export PATH="$VC_TOP/tests/vm/guest/bin:$VC_TOP/build/vm-tools:$PATH"
exec 2>&1
# vc_wait_cards, vc_faults
. "$VC_TOP/tests/vm/guest/lib.sh"

say() { echo "vm-guest: $*"; }

# The simulated HDD: the virtio disk with serial vcache-hdd.
VC_HDD=
VC_BENCH_DISK=
for d in /sys/block/vd*; do
	[ -e "$d/serial" ] || continue
	case $(cat "$d/serial") in
	vcache-hdd) VC_HDD=/dev/${d##*/} ;;
	vcache-bench) VC_BENCH_DISK=/dev/${d##*/} ;;
	esac
done
if [ -n "$VC_HDD" ] && [ "${VC_HDD_LATENCY_MS:-0}" -gt 0 ]; then
	sz=$(blockdev --getsz "$VC_HDD")
	if dmsetup create vchdd --noudevsync \
		--table "0 $sz delay $VC_HDD 0 $VC_HDD_LATENCY_MS"; then
		# Without udev sync the node may come a moment later.
		for _ in $(seq 50); do
			[ -b /dev/mapper/vchdd ] && break
			sleep 0.1
		done
		[ -b /dev/mapper/vchdd ] || dmsetup mknodes vchdd
		VC_HDD=/dev/mapper/vchdd
	else
		say "dm-delay for the HDD failed"; exit 125
	fi
fi
export VC_HDD VC_BENCH_DISK

# vcache-config and its udev rule as a package installs them, from the
# build tree: /dev/vcache/NAME links, and late backing devices attached.
VCC_BIN=$VC_TOP/build/vcache-config/vcache-config
if [ -x "$VCC_BIN" ] && [ -d /run/udev ]; then
	mkdir -p /run/udev/rules.d /run/vcache/bin
	ln -sf "$VCC_BIN" /run/vcache/bin/vcache-config
	[ -x "$VC_TOP/build/vcache-monitor/vcache-monitor" ] &&
		ln -sf "$VC_TOP/build/vcache-monitor/vcache-monitor" \
			/run/vcache/bin/vcache-monitor
	export PATH="/run/vcache/bin:$PATH"
	sed "s,@SBINDIR@/vcache-config,$VCC_BIN," \
		"$VC_TOP/tools/vcache-config/69-vcache.rules.in" \
		> /run/udev/rules.d/69-vcache.rules
	udevadm control --reload 2>/dev/null
fi

# The debug kernel (scripts/debug-kernel.sh) has kmemleak: forget what
# boot left unreferenced, so that the scan at the end reports only what this
# run leaked (the module, or the kernel paths it drove).
KMEMLEAK=/sys/kernel/debug/kmemleak
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w "$KMEMLEAK" ]; then
	echo scan > "$KMEMLEAK" 2>/dev/null
	echo clear > "$KMEMLEAK" 2>/dev/null
fi

loaded=0
if [ "$VC_LOAD" = 1 ] && [ "$VC_CARDS" -gt 0 ]; then
	# shellcheck disable=SC2086
	if ! insmod "$VC_MODULE" $VC_MODPARAMS; then
		say "insmod $VC_MODULE failed"
		dmesg > "$RUN/dmesg.txt"
		cat /proc/sys/kernel/tainted > "$RUN/tainted"
		echo 125 > "$RUN/rc"
		exit 125
	fi
	loaded=1
	n=$(vc_wait_cards) ||
		say "only $n of $VC_WAIT_DISKS /dev/vflash* disks appeared in 30 s"
fi

VC_CARD_DISKS=$(ls -d /sys/block/vflash* 2>/dev/null | sed 's,.*/,/dev/,' | tr '\n' ' ')
export VC_CARD_DISKS

# $VC_FAULTS (make check-debug FAULTS=1; the debug kernel's fault
# injection, Documentation/fault-injection): words NAME=PROB,INTERVAL,TIMES
# for NAME failslab or fail_make_request.  failslab fails slab allocations
# (sleeping ones too) made by the test programs that mark themselves for
# its task filter around their calls into the module (vc-make-it-fail.h:
# vc-torture's writer around the device's writes and syncs, vc-nlfuzz's
# root run around send()), so that those calls meet the failures and
# nothing else does (their own files are on the 9p root: finding 11).
# Not the test's shell and tools: marking the whole command made its own
# exec fail with ENOMEM and the shell segfault before any test ran, and a
# marked fio's failure outside the module (its files on the guest's 9p
# root) left every exec in the guest failing with EINVAL
# (docs/debug-kernel-findings.md, 8 and 9); 6.1 has no stack-trace filter
# on x86_64 to keep the failures to the module's code.  fail_make_request
# fails bios submitted to the cards and the HDD (their make-it-fail), i.e.
# the cache's own I/O below it.  verbose=1: one line per injected failure,
# no stack (rate-limited: not a count).  TIMES -1 (no limit) is set as
# $FI_UNLIMITED, so that what is left of it after the command counts the
# failures injected (printed, and kept as NAME.injected in the run
# directory).  The probabilities are set (vc_faults on) last; off again
# before rmmod.
#
# failslab=PROB,INTERVAL,TIMES,CACHES (CACHES: slab cache names, ':'-
# separated, e.g. vcc_io): failslab's cache filter instead of its task
# filter, i.e. only those caches fail, in every task (the module's
# kworkers and completion paths too), nothing else in the guest.  The
# caches carry the mark from their creation (tests/vm/run boots with
# slub_debug=FZPU;FZPUA,CACHES: 6.1's /sys/kernel/slab/*/failslab is
# read-only), so a reloaded module's are marked too.
FI_UNLIMITED=1000000000
faults_set() {
	local spec name vals prob interval times caches d c f
	for spec in $VC_FAULTS; do
		name=${spec%%=*}
		vals=${spec#*=}
		IFS=, read -r prob interval times caches <<<"$vals"
		d=/sys/kernel/debug/$name
		[ -d "$d" ] || { say "fault injection: no $d (not the debug kernel?)"; continue; }
		[ "${times:--1}" = -1 ] && times=$FI_UNLIMITED
		echo "${interval:-1}" > "$d/interval"
		echo "$times" > "$d/times"
		echo "$times" > "$RUN/$name.times-set"
		echo 0 > "$d/space"
		echo 1 > "$d/verbose"
		[ "$name" = failslab ] && echo N > "$d/ignore-gfp-wait"
		if [ "$name" = failslab ] && [ -n "$caches" ]; then
			echo N > "$d/task-filter"
			echo Y > "$d/cache-filter"
			for c in ${caches//:/ }; do
				f=/sys/kernel/slab/$c/failslab
				[ -e "$f" ] && say "fault injection: slab cache $c: failslab mark $(cat "$f")"
			done
		elif [ "$name" = failslab ]; then
			echo Y > "$d/task-filter"
			echo N > "$d/cache-filter"
		fi
		say "fault injection: $name probability ${prob:-1}% interval ${interval:-1} times ${times:--1}${caches:+ slab caches $caches}"
	done
	vc_faults on
}
faults_off() {
	local spec name d set left
	vc_faults 0
	for spec in $VC_FAULTS; do
		name=${spec%%=*}
		d=/sys/kernel/debug/$name
		[ -d "$d" ] && [ -f "$RUN/$name.times-set" ] || continue
		read -r set < "$RUN/$name.times-set"
		read -r left < "$d/times"
		echo "$left" > "$RUN/$name.times-left"
		echo $((set - left)) > "$RUN/$name.injected"
		say "fault injection: $name: $((set - left)) failures injected"
	done
}

mapfile -d '' -t cmd < "$RUN/cmd"
cd "$VC_CWD" 2>/dev/null || cd /
if [ -n "${VC_FAULTS:-}" ]; then
	faults_set
	"${cmd[@]}"
	rc=$?
	faults_off
else
	"${cmd[@]}"
	rc=$?
fi

cd /
if [ "$loaded" = 1 ] && [ "$VC_UNLOAD" = 1 ] && grep -q '^vcache ' /proc/modules; then
	# udev probes a disk that just changed (a cache deleted, the raw
	# card grown back) with it open for a moment: let it finish first
	udevadm settle --timeout=10 2>/dev/null
	for _ in 1 2 3 4 5; do
		grep -q '^vcache .* 0 ' /proc/modules && break
		sleep 0.2
	done
	# one try: a module still busy now is a failure
	if ! vc_rmmod 1; then
		say "rmmod vcache failed"
		touch "$RUN/unload-failed"
	fi
fi
[ -e /dev/mapper/vchdd ] && dmsetup remove --noudevsync vchdd
if [ -w "$KMEMLEAK" ]; then
	# Objects younger than 5 s are not reported yet; two scans (the
	# kmemleak documentation's advice against transient false positives).
	sleep 5
	echo scan > "$KMEMLEAK" 2>/dev/null
	echo scan > "$KMEMLEAK" 2>/dev/null
	cat "$KMEMLEAK" > "$RUN/kmemleak.txt" 2>/dev/null
	if [ -s "$RUN/kmemleak.txt" ]; then
		say "kmemleak: $(grep -c '^unreferenced object' "$RUN/kmemleak.txt") unreferenced objects (kmemleak.txt)"
	fi
fi
dmesg > "$RUN/dmesg.txt"
cat /proc/sys/kernel/tainted > "$RUN/tainted"
echo "$rc" > "$RUN/rc"
exit "$rc"
