#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the bench itself (no card needed): exit status, HDD, bad
# options, kernel-log scan, timeout, power cut and unplug plumbing.
. "$(dirname "$0")/lib.sh"

"$RUN" --cards 3 -q --nonsense -- true 2>/dev/null
vm_status "bad option refused before booting" 2 $?
"$RUN" --cards 1 --lba-size 1024 --no-load -q -- true 2>/dev/null
vm_status "bad --lba-size refused before booting" 125 $?

# The campaigns' checker can fail (host side, no VM): vc-torture verify
# passes what its writer wrote, and catches a lost acknowledged block, an
# older generation, a torn block and another run's data.
if make -s -C "$TOP/tests/vm/tools" >/dev/null; then
	T=$TOP/build/vm-tools/vc-torture
	img=$(mktemp)
	truncate -s 4M "$img"
	$T write "$img" 1024 5 1 "$img.ack" >/dev/null
	a=$($T lastack "$img.ack")
	$T verify "$img" 1024 5 "$a" >/dev/null
	vm_status "vc-torture verify passes its writer's data (gen $a acknowledged)" 0 $?
	$T verify "$img" 1024 6 "$a" >/dev/null
	vm_status "... and refuses another run's data" 1 $?
	cp "$img" "$img.2"
	b=$(python3 -c "
import struct, sys
d = open(sys.argv[1], 'rb').read()
for b in range(1024):
    m, _, seed, blk, gen = struct.unpack_from('<IIQQQ', d, b * 4096)
    if m == 0x42544356 and gen > 1:
        print(b); break" "$img")
	dd if=/dev/zero of="$img.2" bs=4096 seek="$b" count=1 conv=notrunc status=none
	$T verify "$img.2" 1024 5 "$a" >/dev/null
	vm_status "... a lost acknowledged block (zeroes at block $b)" 1 $?
	cp "$img" "$img.2"
	printf 'X' | dd of="$img.2" bs=1 seek=$((b * 4096 + 2000)) conv=notrunc status=none
	$T verify "$img.2" 1024 5 "$a" >/dev/null
	vm_status "... a torn block" 1 $?
	# a failed write (ERRFILE) after a block's last acknowledged one
	# leaves it unspecified: zeroes there are counted apart, not bad;
	# the same failed write does not excuse another block, nor a torn one
	read -r g fb < <(for g in $(seq $((a + 1)) $((a + 3000))); do
		read -r st _ < <($T plan 5 1024 "$g")
		python3 -c "
import struct, sys
d = open(sys.argv[1], 'rb').read(); b = int(sys.argv[2])
m, _, _, _, gen = struct.unpack_from('<IIQQQ', d, b * 4096)
sys.exit(0 if m == 0x42544356 and 0 < gen <= int(sys.argv[3]) else 1)" "$img" "$st" "$a" &&
			{ echo "$g $st"; break; }
	done)
	echo "$g" > "$img.err"
	cp "$img" "$img.2"
	dd if=/dev/zero of="$img.2" bs=4096 seek="$fb" count=1 conv=notrunc status=none
	out=$($T verify "$img.2" 1024 5 "$a" "$img.err")
	vm_status "... zeroes at block $fb under a failed write (gen $g): unspecified, not bad" 0 $?
	echo "$out" | grep -q "unspecified_older=1 " && t_ok "... counted: 1 unspecified" ||
		t_fail "... counted: 1 unspecified: $(echo "$out" | tail -1)"
	$T verify "$img.2" 1024 5 "$a" >/dev/null
	vm_status "... without that failed write: bad" 1 $?
	cp "$img" "$img.2"
	printf 'X' | dd of="$img.2" bs=1 seek=$((fb * 4096 + 2000)) conv=notrunc status=none
	$T verify "$img.2" 1024 5 "$a" "$img.err" >/dev/null
	vm_status "... a torn block under a failed write: still bad" 1 $?
	# an older generation of the block: the state before the last
	# acknowledged writes, with every later acknowledgement kept
	head -c 4M /dev/zero > "$img.2"
	$T write "$img.2" 1024 5 0.3 "$img.ack2" >/dev/null
	a2=$($T lastack "$img.ack2")
	[ "$a2" -lt "$a" ] && $T verify "$img.2" 1024 5 "$a" >/dev/null
	vm_status "... older generations than acknowledged (gen $a2 < $a)" 1 $?
	rm -f "$img" "$img.2" "$img.ack" "$img.ack2" "$img.err"
else
	t_fail "tests/vm/tools build"
fi

# The log scan catches a WARNING (a fake one, written to /dev/kmsg).
"$RUN" --cards 0 --hdd-model none -q --expect-fail -- sh -c 'echo "<4>WARNING: CPU: 0 PID: 1 at fake.c:1 vcache_selftest" > /dev/kmsg' 2>/dev/null
vm_status "kernel log scan fails a run with a WARNING" 123 $?

# A stuck guest is killed at --timeout (time measured by the runner, from
# the start of the firmware, not counting a wait for the VM lock).
err=$(mktemp)
"$RUN" --cards 0 --hdd-model none -q --expect-fail --timeout 25 -- sleep 1000 2>"$err"
vm_status "stuck VM killed at --timeout" 124 $?
e=$(sed -n 's/.* in \([0-9]*\) s, status.*/\1/p' "$err")
rm -f "$err"
[ -n "$e" ] && [ "$e" -lt 100 ] && t_ok "timeout took ${e}s" || t_fail "timeout took ${e}s"

# A guest kernel hung at boot (its console silent, guest/init.sh never
# run) is killed after --boot-silence, not at --timeout: here QEMU starts
# with its CPUs stopped (-S), as the debug kernel's hangs under TCG left
# them halted.  Every boot hangs here: it is booted again once
# (--boot-retries 1), then the run ends with status 122.
err=$(mktemp)
"$RUN" --cards 0 --hdd-model none -q --expect-fail --timeout 300 \
	--boot-silence 10 --boot-retries 1 --qemu-opts=-S -- true 2>"$err"
vm_status "guest hung at boot: killed, status 122" 122 $?
e=$(sed -n 's/.* in \([0-9]*\) s, status.*/\1/p' "$err")
grep -q 'hung at boot' "$err" && [ -n "$e" ] && [ "$e" -lt 90 ] &&
	t_ok "... says so, after ${e}s" || t_fail "... says so, after ${e}s: $(tail -3 "$err")"
grep -q 'booting again (1 of 1)' "$err" && t_ok "... after booting again once" ||
	t_fail "... after booting again once: $(tail -3 "$err")"
rm -f "$err"

# Only the first boot hangs (a QEMU wrapper adds -S to its first guest
# start): the second boot runs the command, the run passes, and the hung
# boot's console (empty here: its CPUs never ran) is kept.
mkdir -p "$TOP/build/vm"
w=$(mktemp -d "$TOP/build/vm/selftest-hang.XXXXXX")
cat >"$w/qemu" <<EOF
#!/bin/sh
case " \$* " in *" -kernel "*)
	if [ ! -e "$w/hung" ]; then touch "$w/hung"; exec qemu-system-x86_64 -S "\$@"; fi
esac
exec qemu-system-x86_64 "\$@"
EOF
chmod +x "$w/qemu"
err=$(mktemp)
"$RUN" --cards 0 --hdd-model none -q --keep "$w/run" --timeout 300 \
	--boot-silence 10 --qemu "$w/qemu" -- sh -c 'echo second boot >"$VC_RUN_DIR/ran"' 2>"$err"
vm_status "first boot hung, second ran the command" 0 $?
grep -q 'booting again (1 of 2)' "$err" && t_ok "... said so: booting again (1 of 2)" ||
	t_fail "... said so: booting again (1 of 2): $(tail -3 "$err")"
grep -q 'second boot' "$w/run/ran" 2>/dev/null && t_ok "... the command ran" ||
	t_fail "... the command ran"
[ -e "$w/run/console-hung1.log" ] && t_ok "... the hung boot's console kept" ||
	t_fail "... the hung boot's console kept"
rm -rf "$w" "$err"

# One boot: the HDD attached and throttled, env, helpers; power cut and
# unplug plumbing with stand-in cards (no driver involved).
D="$TOP/build/vm/selftest-pc-$$"
rm -rf "$D"
"$RUN" --fw fake --cards 2 --no-load --hdd-size 1G --hdd-latency 5 \
	--keep "$D" --expect-powercut -- bash -c '
	. "$VC_TOP/tests/vm/guest/lib.sh"
	check "HDD attached ($VC_HDD)" test -b "$VC_HDD"
	check "HDD size is 1 GiB" [ "$(blockdev --getsize64 "$VC_HDD")" = 1073741824 ]
	check "HDD latency layer is dm-delay" [ "$VC_HDD" = /dev/mapper/vchdd ]
	out=$(fio --name=hdd --filename="$VC_HDD" --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=1 --runtime=4 --time_based --output-format=json |
		python3 -c "import json,sys; j=json.load(sys.stdin)[\"jobs\"][0][\"read\"]; print(int(j[\"iops\"]), int(j[\"clat_ns\"][\"mean\"]/1000))")
	set -- $out
	echo "# HDD model: 4k randread QD1 $1 IOPS, mean latency $2 us"
	check "HDD is HDD-like: QD1 randread <= 200 IOPS ($1)" [ "$1" -le 200 ]
	check "HDD latency >= 5 ms ($2 us)" [ "$2" -ge 5000 ]
	check "vcfw refuses a card that does not exist" bash -c "! vcfw -c 5 stats 2>/dev/null"
	check "taint is 0 without the module" [ "$(cat /proc/sys/kernel/tainted)" = 0 ]
	n() { grep -l 0x1110 /sys/bus/pci/devices/*/device | wc -l; }
	check "two ivshmem cards visible" [ "$(n)" = 2 ]
	check "vm-unplug 1 (surprise)" vm-unplug 1
	check "one card left" [ "$(n)" = 1 ]
	check "vm-unplug --orderly 0" vm-unplug --orderly 0
	check "no card left" [ "$(n)" = 0 ]
	echo written > "$VC_RUN_DIR/before-cut"
	vm-powercut
	echo "not ok - still running after vm-powercut"'
vm_status "power cut ends the run with status 0" 0 $?
[ -e "$D/powercut" ] && [ -e "$D/before-cut" ] && [ ! -e "$D/rc" ] &&
	t_ok "power cut recorded, guest never finished" ||
	t_fail "power cut not recorded"
"$RUN" --fw fake --cards 2 --no-load --reuse "$D" -q --expect-fail -- sh -c 'exit 7'
vm_status "boot again with --reuse after a power cut; guest exit status passed through" 7 $?
# a check that failed before the cut fails the run (no exit status there)
"$RUN" --fw fake --cards 2 --no-load --reuse "$D" -q --expect-powercut \
	--expect-fail -- bash -c '. "$VC_TOP/tests/vm/guest/lib.sh"
	check "a failing check before the cut" false
	vm-powercut' >/dev/null 2>&1
vm_status "a check failed before a power cut fails the run" 1 $?
rm -rf "$D"
t_done
