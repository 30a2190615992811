#!/bin/bash
# tools/vcache-config/tests/run.sh OUT - every vcache-config test that
# needs no kernel module: the unit tests (tests/unit.c), the JSON printers
# checked by python3, the command line (refusals before any netlink,
# requests as sent, in a dry run against a fake kernel), the real netlink
# path with vcache.ko absent, the man page and the udev rule.
# Prints "N passed, N failed"; exits non-zero on any failure.
set -u

OUT=${1:?usage: run.sh BUILD_DIR}
VC=$OUT/vcache-config
T=$OUT/test-tmp
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
rm -rf "$T"
mkdir -p "$T"
pass=0
fail=0

ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1${2:+: $2}"; fail=$((fail + 1)); }

# ---------------------------------------------------------------- unit
"$OUT/unit" >"$T/unit.log" 2>&1
cat "$T/unit.log"
up=$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$T/unit.log")
uf=$(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$T/unit.log")
if [ -z "$up" ]; then
	bad unit "no summary line (crashed?)"
else
	pass=$((pass + up))
	fail=$((fail + uf))
fi

# ------------------------------------------------------------- helpers
# expect NAME CODE WANT CMD...: CMD exits CODE with WANT on stderr (WANT
# may be empty); with VCACHE_NL_FORBID, so a refusal that opened the
# netlink socket first exits 99 instead.
expect() {
	local name=$1 code=$2 want=$3 rc
	shift 3
	VCACHE_NL_FORBID=1 "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -ne "$code" ]; then
		bad "$name" "exit $rc, expected $code: $(cat "$T/err")"
	elif [ -n "$want" ] && ! grep -qF -- "$want" "$T/err"; then
		bad "$name" "message '$(cat "$T/err")' lacks '$want'"
	else
		ok "$name"
	fi
}

# pycheck NAME JSONFILE BODY: python3 with d = the parsed document
pycheck() {
	local name=$1 file=$2 body=$3
	if python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
$body" "$file" >"$T/py.log" 2>&1
	then ok "$name"; else bad "$name" "$(tail -n 3 "$T/py.log")"; fi
}

# ----------------------------------------------------- JSON printers
mkdir -p "$T/json"
if "$OUT/unit" --json "$T/json"; then
	pycheck json_show "$T/json/show.json" '
keys = ["name", "state", "mode", "requested_mode", "policy", "cache_dev",
        "cache_disk", "card", "region_start_bytes", "cache_size_bytes",
        "block_size_bytes",
        "dirty_bytes", "pid_default", "flush", "backing", "params", "stats"]
assert sorted(d) == sorted(keys), sorted(d)
assert d["name"] == "db" and d["state"] == "degraded"
assert d["mode"] == "wt" and d["requested_mode"] == "wb"
assert d["policy"] == "fifo" and d["pid_default"] == "cache-none"
assert d["cache_dev"] == "250:0" and d["cache_disk"] == "vflash0"
assert d["card"] is None and d["region_start_bytes"] is None
assert d["cache_size_bytes"] == 1 << 30 and d["block_size_bytes"] == 4096
assert d["dirty_bytes"] == 3 * 1048576
f = d["flush"]
assert f == {"running": True, "target_blocks": 1000, "done_blocks": 250,
             "remaining_blocks": 750, "remaining_bytes": 750 * 4096,
             "last_result_errno": 0, "seq": 3}, f
assert d["params"] == {"dirty_high_pct": 60, "commit_ms": 100}
assert d["stats"] == {"reads": 12345678901, "lost_reads": 0}
b0, b1 = d["backing"]
assert b0 == {"devname": "db", "disk": "vcache0", "backing_disk": "vdb",
              "backing_dev": "254:16", "ident": "serial:vcache-hdd", "id": 0,
              "state": "attached", "size_bytes": 4 << 30,
              "dirty_bytes": 3 * 1048576}, b0
assert b1["state"] == "waiting" and b1["disk"] is None
assert b1["backing_dev"] is None and b1["dirty_bytes"] == 0
for k, v in list(d.items()) + list(b0.items()):
    assert v is None or isinstance(v, (int, str, list, dict)), (k, v)
'
	pycheck json_list "$T/json/list.json" '
assert list(d) == ["caches"] and len(d["caches"]) == 2
e = d["caches"][1]
assert e["name"] == "empty" and e["backing"] == [] and e["mode"] is None
assert e["params"] is None and e["stats"] is None and e["flush"] is None
s = json.load(open(sys.argv[1].replace("list.json", "show.json")))
assert d["caches"][0] == s
'
	pycheck json_pids "$T/json/pids.json" '
assert d == {"name": "db", "default": "cache-all", "allow": [1, 42],
             "deny": [4194304], "allow_hidden": None, "deny_hidden": None,
             "cgroup_allow": [], "cgroup_deny": []}, d
'
	if grep -q "requested mode *wb (lowered by errors)" "$T/json/show.txt" &&
	   grep -q "^  db: /dev/vcache0 -> vdb (254:16), attached" "$T/json/show.txt" &&
	   grep -q "^  reads  *12345678901$" "$T/json/show.txt" &&
	   grep -q "^db  *degraded  *wt  *vflash0 " "$T/json/show.txt" &&
	   grep -q "^  allow   1 42$" "$T/json/show.txt"; then
		ok text_printers
	else
		bad text_printers "$(cat "$T/json/show.txt")"
	fi
else
	bad json_printers "unit --json failed"
fi

# ----------------------------------------------------- usage and help
expect no_args 2 "usage: vcache-config" "$VC"
if "$VC" --help | grep -q "pid NAME default cache-all|cache-none" &&
   "$VC" help flush | grep -q "^usage: vcache-config flush NAME" &&
   "$VC" create --help | grep -q "^usage: vcache-config create NAME" &&
   "$VC" --version | grep -q "^vcache-config .*family vcache version 1"; then
	ok help_version
else
	bad help_version
fi
expect help_unknown 2 "unknown command 'nope'" "$VC" help nope

# ---------------------------------------------------- argument refusals
# (every command; the unit tests check the messages in detail)
for a in "create" "create db" "create db --cache" "attach db" \
	 "detach db --flush --keep-dirty" "delete db --flush --discard-dirty" \
	 "flush" "flush db --keep-dirty" "set db" "set db x=1" "pid db" \
	 "pid db allow add 0" "list x" "show" "hotplug" "ident" "reset-stats" \
	 "repair-table" "salvage" "salvage a b" "salvage db --force"; do
	# shellcheck disable=SC2086
	expect "refused: $a" 2 "" "$VC" $a
done

# ------------------------------------------- a fake sysfs and devices
# Device nodes of our own (mknod needs root); sysfs from VCACHE_SYSFS_ROOT.
S=$T/sys D=$T/dev
mkdir -p "$S/dev/block" "$D"
dev() {	# dev NAME REL MAJ MIN [FILE=VALUE...]
	local n=$1 rel=$2 ma=$3 mi=$4 kv
	shift 4
	mkdir -p "$S/devices/virtual/block/$rel"
	echo "$ma:$mi" >"$S/devices/virtual/block/$rel/dev"
	ln -s "../../devices/virtual/block/$rel" "$S/dev/block/$ma:$mi"
	for kv in "$@"; do
		mkdir -p "$(dirname "$S/devices/virtual/block/$rel/${kv%%=*}")"
		printf '%s\n' "${kv#*=}" >"$S/devices/virtual/block/$rel/${kv%%=*}"
	done
	mknod "$D/$n" b "$ma" "$mi" 2>/dev/null
}
dev vflash0 vflash0 250 0 device/serial=CARD0
dev vflash0p1 vflash0/vflash0p1 250 1 partition=1
dev sdb sdb 8 16 device/wwid=naa.5000c500a1b2c3d4
dev sdb1 sdb/sdb1 8 17 partition=1
dev vdb vdb 254 16 serial=vcache-hdd
dev loop5 loop5 7 5
dev vcache0 vcache0 252 0 serial=X vcache/name=db
LONG=nvme.8086-50484b533735313530303552383030-494e54454c205353445045444d443430304734-00000001
dev nvme0n1 nvme0n1 259 0 "wwid=$LONG"
: >"$D/file"
export VCACHE_SYSFS_ROOT=$S

# dry NAME... : a dry run against the fake kernel in $T/fake.json
dry() { VCACHE_NL_DRYRUN=1 VCACHE_NL_FAKE=$T/fake.json "$@"; }

# fake_flush RUNNING DONE REMAINING SEQ RESULT: the fake kernel's flush
# progress for cache "db" (the file is replaced atomically)
fake_flush() {
	python3 -c '
import json, os, sys
p = sys.argv[1]
d = json.load(open(p))
c = d["caches"][0]
r, done, rem, seq, res = sys.argv[2:]
c["flush"].update(running=r == "1", done_blocks=int(done),
                  remaining_blocks=int(rem), seq=int(seq), last_result_errno=int(res))
c["backing"][0]["dirty_bytes"] = int(rem) * 4096
json.dump(d, open(p + ".new", "w"))
os.rename(p + ".new", p)' "$T/fake.json" "$@"
}

# waited ARGS...: a dry run polling fast while a fake_flush writer runs in
# the background; its exit status in $rc
waited() {
	VCACHE_POLL_MS=50 dry "$VC" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	wait
}

device_tests() {
	local C="$VC create db --cache $D/vflash0" want rc pid pids

	# identity, end to end (the hash checked against python's hashlib)
	want=$(python3 -c "import hashlib; print('wwid:sha256=' + hashlib.sha256(b'wwid:$LONG').hexdigest()[:32])")
	if [ "$("$VC" ident "$D/sdb")" = "wwid:naa.5000c500a1b2c3d4" ] &&
	   [ "$("$VC" ident "$D/sdb1")" = "wwid:naa.5000c500a1b2c3d4-part1" ] &&
	   [ "$("$VC" ident "$D/vdb")" = "serial:vcache-hdd" ] &&
	   [ "$("$VC" ident "$D/nvme0n1")" = "$want" ]; then
		ok ident_command
	else
		bad ident_command "$("$VC" ident "$D/nvme0n1") != $want"
	fi
	expect ident_none 1 "has no stable identity" "$VC" ident "$D/loop5"

	expect create_card_as_backing 2 "is a vcache card" $C --backing "$D/vflash0p1"
	expect create_card_itself_as_backing 2 "vcache card" $C --backing "$D/vflash0"
	expect create_same_device 2 "are the same device" \
		"$VC" create db --cache "$D/sdb" --backing "$D/sdb"
	expect create_backing_part_of_cache 2 "is a partition of the cache device" \
		"$VC" create db --cache "$D/sdb" --backing "$D/sdb1"
	expect create_cache_part_of_backing 2 "is a partition of the backing device" \
		"$VC" create db --cache "$D/sdb1" --backing "$D/sdb"
	expect create_no_identity 2 "no stable identity" $C --backing "$D/loop5"
	expect create_cached_as_backing 2 "is a vcache cached device" $C --backing "$D/vcache0"
	expect create_cached_as_cache 2 "is a vcache cached device" \
		"$VC" create db --cache "$D/vcache0" --backing "$D/vdb"
	expect create_not_blockdev 2 "is not a block device (it is a regular file)" \
		$C --backing "$D/file"
	expect create_missing_dev 3 "No such file" $C --backing "$D/nope"
	expect create_bad_ident 2 "--ident" $C --backing "$D/loop5" --ident "a b"
	expect create_bad_mode_first 2 "bad mode" $C --backing "$D/nope" --mode x
	# accepted: reaches netlink (VCACHE_NL_FORBID then exits 99)
	expect create_valid_reaches_netlink 99 "BUG: netlink socket opened" \
		$C --backing "$D/vdb" --size 512M --mode wt --block-size 16k
	expect create_ident_override 99 "" $C --backing "$D/loop5" --ident my-disk-1
	expect attach_card 2 "is a vcache card" "$VC" attach db --backing "$D/vflash0"
	expect hotplug_no_identity 0 "" "$VC" hotplug "$D/loop5"
	expect hotplug_card 0 "" "$VC" hotplug "$D/vflash0"
	expect repair_not_card 2 "not the raw disk of a vcache card" "$VC" repair-table "$D/sdb"
	expect repair_partition 2 "not the raw disk of a vcache card" "$VC" repair-table "$D/vflash0p1"
	expect repair_two 2 "" "$VC" repair-table "$D/vflash0" "$D/vflash0"
	expect repair_opt 2 "" "$VC" repair-table "$D/vflash0" --flush
	if dry "$VC" repair-table "$D/vflash0" | grep -qx "REPAIR_TABLE cache_dev=250:0" &&
	   dry "$VC" repair-table --force "$D/vflash0" | grep -qx "REPAIR_TABLE cache_dev=250:0 flags=16/u32"
	then ok dry_repair_table; else bad dry_repair_table; fi
	expect hotplug_gone 0 "" "$VC" hotplug "$D/nope"
	expect salvage_card_dev 2 "is a card: name its cache" "$VC" salvage "$D/vflash0"
	expect salvage_missing_dev 3 "No such file" "$VC" salvage "$D/nope"
	expect salvage_bad_name 2 "cache NAME" "$VC" salvage "a b"
	if dry "$VC" salvage db | grep -qx "SALVAGE name=db" &&
	   dry "$VC" salvage "$D/vdb" | grep -qx "HOTPLUG backing={dev=254:16 ident=serial:vcache-hdd} flags=40/u32"
	then ok dry_salvage; else bad dry_salvage; dry "$VC" salvage db; dry "$VC" salvage "$D/vdb"; fi

	# --------------------------- requests as sent (dry run, fake kernel)
	cp "$T/json/list.json" "$T/fake.json"
	dry $C --backing "$D/vdb" --size 512M --mode wt --policy fifo \
		--admit on --flush-period 30 --dirty-high 8G --dirty-low 25 \
		--seq-cutoff 4M --block-size 16k --devname dbdev >"$T/out" 2>"$T/err"
	if head -n1 "$T/out" | grep -qx \
	   "CREATE name=db cache_dev=250:0 backing={dev=254:16 ident=serial:vcache-hdd devname=dbdev} cache_size=536870912/u64 block_size=16384/u32 mode=1/u8 policy=0/u8 params={dirty_low_pct=25 dirty_high_bytes=8589934592 dirty_low_bytes=0 max_dirty_age_ms=30000 seq_enable=1 seq_threshold_kib=4096 admission=1}"
	then ok dry_create_message; else bad dry_create_message "$(cat "$T/out" "$T/err")"; fi

	if dry "$VC" set db mode=wa policy=lru admit=off flush-period=500ms \
		dirty-high=70% dirty-low=1G seq-cutoff=off idle_ms=0 \
		wb_max_inflight=8 wb-max-io-kib=256 clean_interval_ms=100 \
		admit_full_pct=80 pid_mode=1 commit_ms=0 >"$T/out" 2>"$T/err" &&
	   [ "$(wc -l <"$T/out")" = 1 ] && grep -qx \
	   "SET name=db mode=2/u8 policy=1/u8 params={dirty_high_pct=70 dirty_high_bytes=0 dirty_low_bytes=1073741824 max_dirty_age_ms=500 idle_ms=0 wb_max_inflight=8 wb_max_io_kib=256 clean_interval_ms=100 seq_enable=0 admission=0 admit_full_pct=80 pid_mode=1 commit_ms=0}" "$T/out"
	then ok dry_set_one_message; else bad dry_set_one_message "$(cat "$T/out" "$T/err")"; fi

	pids=$(seq 1 2500 | tr '\n' ' ')
	# shellcheck disable=SC2086
	if dry "$VC" pid db deny add $pids >"$T/out" 2>"$T/err" &&
	   [ "$(wc -l <"$T/out")" = 3 ] &&
	   [ "$(sed -n 1p "$T/out" | grep -o 'pid=' | wc -l)" = 1024 ] &&
	   [ "$(sed -n 3p "$T/out" | grep -o 'pid=' | wc -l)" = 452 ] &&
	   sed -n 3p "$T/out" | grep -q "^PID_SET name=db pid_list=1/u8 pid_op=0/u8 pids={pid=2049/u32 " &&
	   sed -n 3p "$T/out" | grep -q "pid=2500/u32}$"
	then ok dry_pid_split; else bad dry_pid_split "$(head -c 300 "$T/out") $(cat "$T/err")"; fi
	if dry "$VC" pid db clear >"$T/out" 2>&1 &&
	   [ "$(cat "$T/out")" = "PID_SET name=db pid_list=0/u8 pid_op=2/u8
PID_SET name=db pid_list=1/u8 pid_op=2/u8
PID_SET name=db pid_list=2/u8 pid_op=2/u8
PID_SET name=db pid_list=3/u8 pid_op=2/u8" ] &&
	   dry "$VC" pid db cgroup-deny del id:77 | grep -qx "PID_SET name=db pid_list=3/u8 pid_op=1/u8 cgroup_id=77/u64" &&
	   dry "$VC" pid db cgroup-allow add / | grep -qx "PID_SET name=db pid_list=2/u8 pid_op=0/u8 cgroup_fd=[0-9]*/u32" &&
	   ! dry "$VC" pid db cgroup-allow add /no/such/cgroup 2>/dev/null &&
	   dry "$VC" pid db default cache-none | grep -qx "PID_SET name=db pid_default=1/u8" &&
	   dry "$VC" pid db allow del 7 | grep -qx "PID_SET name=db pid_list=0/u8 pid_op=1/u8 pids={pid=7/u32}"
	then ok dry_pid_clear_default; else bad dry_pid_clear_default "$(cat "$T/out")"; fi
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["caches"][0]["pids"] = {"default": "cache-none", "allow": [10, 20], "deny": []}
json.dump(d, open(sys.argv[1], "w"))' "$T/fake.json"
	dry "$VC" pid db list --json >"$T/pl.json" 2>"$T/err"
	pycheck dry_pid_list_json "$T/pl.json" '
assert d == {"name": "db", "default": "cache-none", "allow": [10, 20], "deny": [],
             "allow_hidden": None, "deny_hidden": None, "cgroup_allow": [],
             "cgroup_deny": []}, d'

	# list/show: the fake kernel's caches come back as they went in
	dry "$VC" list --json >"$T/l.json" 2>"$T/err"
	pycheck dry_list_round_trip "$T/l.json" '
f = json.load(open(sys.argv[1].replace("l.json", "fake.json")))
for c in f["caches"]:
    c.pop("pids", None)
assert d == f, (d, f)'
	if dry "$VC" show db >"$T/out" 2>"$T/err" && grep -q "^  mode  *wt" "$T/out" &&
	   dry "$VC" list | grep -q "^empty "; then
		ok dry_show_list_text
	else
		bad dry_show_list_text "$(cat "$T/err")"
	fi
	expect dry_show_missing 3 "cache nope" dry "$VC" show nope
	# a waiting backing device: no cached device, no backing disk
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = d["caches"][0]["backing"][0]
b.update(state="waiting", disk=None, backing_disk=None, backing_dev=None)
json.dump(d, open(sys.argv[1] + ".wait", "w"))' "$T/fake.json"
	if VCACHE_NL_DRYRUN=1 VCACHE_NL_FAKE=$T/fake.json.wait "$VC" show db >"$T/out" 2>"$T/err" &&
	   grep -q "no cached device -> backing device not there, waiting" "$T/out" &&
	   ! grep -q "/dev/-\|(0:0)" "$T/out"; then
		ok dry_show_waiting
	else
		bad dry_show_waiting "$(cat "$T/out" "$T/err")"
	fi
	# show: a summary; every counter behind --all
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["caches"][0]
c["cache_size_bytes"] = 1 << 30
c["stats"] = {"read_hits": 900, "read_misses": 100, "write_hits": 300,
              "write_misses": 100, "wb_bytes": 100 << 20,
              "elapsed_ns": 10 * 10**9, "backing_write_errors": 2,
              "wb_rate_bps": 4 << 20, "wb_throttled": 5,
              "evictions": 77}
json.dump(d, open(sys.argv[1] + ".sum", "w"))' "$T/fake.json"
	sdry() { VCACHE_NL_DRYRUN=1 VCACHE_NL_FAKE=$T/fake.json.sum "$VC" "$@"; }
	if sdry show db >"$T/out" 2>"$T/err" &&
	   grep -q "^  read hits  *90.0% (900 of 1000 blocks)$" "$T/out" &&
	   grep -q "^  write hits  *75.0% (300 of 400 blocks)$" "$T/out" &&
	   grep -q "^  write-back  *10.0 MiB/s on average over 10 s (104857600 bytes written back)$" "$T/out" &&
	   grep -q "^  *rate-controlled now at 4.0 MiB/s$" "$T/out" &&
	   grep -q "^  *5 writes slowed at the high watermark$" "$T/out" &&
	   grep -q "^  errors  *cache read 0, cache write 0, backing read 0, backing write 2, lost blocks 0$" "$T/out" &&
	   grep -q "^  dirty share " "$T/out" &&
	   ! grep -q "evictions\|^statistics\|^parameters" "$T/out" &&
	   grep -q "show db --all" "$T/out"; then
		ok dry_show_summary
	else
		bad dry_show_summary "$(cat "$T/out" "$T/err")"
	fi
	if sdry show --all db >"$T/out" 2>"$T/err" &&
	   grep -q "^statistics$" "$T/out" && grep -q "^  evictions  *77$" "$T/out" &&
	   grep -q "^  read hits  *90.0%" "$T/out" &&
	   sdry show db --all --json | python3 -c "import json,sys; d=json.load(sys.stdin); assert d[\"stats\"][\"evictions\"] == 77" &&
	   sdry show db --json | python3 -c "import json,sys; d=json.load(sys.stdin); assert d[\"stats\"][\"evictions\"] == 77"; then
		ok dry_show_all
	else
		bad dry_show_all "$(cat "$T/out" "$T/err")"
	fi
	expect dry_list_all_refused 2 "list: unknown option '--all'" sdry list --all

	# detach / delete with dirty data: refused before anything is sent
	dry "$VC" detach db >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc = 4 ] && [ ! -s "$T/out" ] && grep -q "3.0 MiB (3145728 bytes)" "$T/err" &&
	   grep -q "flush db --backing /dev/vdb" "$T/err"; then
		ok dry_detach_dirty_refused
	else
		bad dry_detach_dirty_refused "exit $rc $(cat "$T/out" "$T/err")"
	fi
	if dry "$VC" detach db --keep-dirty >"$T/out" 2>"$T/err" &&
	   grep -qx "DETACH name=db backing={devname=db} flags=2/u32" "$T/out" &&
	   dry "$VC" detach db-1 | grep -qx "DETACH name=db backing={devname=db-1} flags=0/u32" &&
	   dry "$VC" detach db --backing "$D/vdb" --keep-dirty | grep -qx "DETACH name=db backing={devname=db} flags=2/u32"
	then ok dry_detach_flags; else bad dry_detach_flags "$(cat "$T/out" "$T/err")"; fi
	expect dry_detach_unknown 3 "no cached device named zz" dry "$VC" detach zz
	dry "$VC" delete db >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc = 4 ] && [ ! -s "$T/out" ] && grep -q "discard-dirty" "$T/err"; then
		ok dry_delete_dirty_refused
	else
		bad dry_delete_dirty_refused "exit $rc $(cat "$T/out" "$T/err")"
	fi
	if dry "$VC" delete db --discard-dirty | grep -qx "DELETE name=db flags=4/u32" &&
	   dry "$VC" delete empty | grep -qx "DELETE name=empty flags=0/u32"; then
		ok dry_delete_flags
	else
		bad dry_delete_flags
	fi
	if dry "$VC" hotplug "$D/vdb" | grep -qx "HOTPLUG backing={dev=254:16 ident=serial:vcache-hdd}" &&
	   dry "$VC" flush db --background --backing "$D/vdb" | grep -qx "FLUSH name=db backing={dev=254:16}" &&
	   dry "$VC" reset-stats db | grep -qx "RESET_STATS name=db" &&
	   dry "$VC" attach db --backing "$D/sdb1" | grep -qx "ATTACH name=db backing={dev=8:17 ident=wwid:naa.5000c500a1b2c3d4-part1}"
	then ok dry_hotplug_flush_attach; else bad dry_hotplug_flush_attach; fi
	# udev's second offer of a disk the kernel is attaching (EALREADY)
	# is no error; a disk in use (EBUSY) is
	VCACHE_NL_DRY_ERRNO=114 dry "$VC" hotplug "$D/vdb" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/err" ]; then ok dry_hotplug_ealready_silent
	else bad dry_hotplug_ealready_silent "exit $rc $(cat "$T/err")"; fi
	VCACHE_NL_DRY_ERRNO=16 dry "$VC" hotplug "$D/vdb" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc != 0 ] && grep -qi "busy" "$T/err"; then ok dry_hotplug_ebusy_fails
	else bad dry_hotplug_ebusy_fails "exit $rc $(cat "$T/err")"; fi

	# blocking flush: the fake kernel moves on while the tool polls
	fake_flush 0 0 750 3 0
	( sleep 0.4; fake_flush 1 500 250 4 0; sleep 0.4; fake_flush 0 750 0 4 0 ) &
	waited flush db
	if [ $rc = 0 ] && grep -qx "FLUSH name=db" "$T/out" &&
	   grep -q "flush of db: done" "$T/out"; then
		ok dry_flush_blocking
	else
		bad dry_flush_blocking "exit $rc $(cat "$T/out" "$T/err")"
	fi
	fake_flush 0 0 750 4 0
	( sleep 0.3; fake_flush 0 10 740 5 5 ) &
	waited flush db
	if [ $rc = 1 ] && grep -q "Input/output error" "$T/err"; then
		ok dry_flush_failed
	else
		bad dry_flush_failed "exit $rc $(cat "$T/err")"
	fi
	# Ctrl-C: FLUSH_CANCEL is sent, exit 5, what stays dirty is said
	fake_flush 1 10 740 6 0
	VCACHE_POLL_MS=50 VCACHE_NL_DRYRUN=1 VCACHE_NL_FAKE=$T/fake.json \
		"$VC" flush db >"$T/out" 2>"$T/err" &
	pid=$!
	sleep 0.5
	kill -INT $pid
	wait $pid
	rc=$?
	if [ $rc = 5 ] && grep -qx "FLUSH_CANCEL name=db" "$T/out" &&
	   grep -q "stay dirty" "$T/err"; then
		ok dry_flush_interrupted
	else
		bad dry_flush_interrupted "exit $rc $(cat "$T/out" "$T/err")"
	fi
	# detach --flush: flush that backing device, then DETACH with FLUSH
	fake_flush 0 0 750 7 0
	( sleep 0.3; fake_flush 0 750 0 8 0 ) &
	waited detach db --flush
	if [ $rc = 0 ] && [ "$(sed -n 1p "$T/out")" = "FLUSH name=db backing={devname=db}" ] &&
	   grep -qx "DETACH name=db backing={devname=db} flags=1/u32" "$T/out"; then
		ok dry_detach_flush
	else
		bad dry_detach_flush "exit $rc $(cat "$T/out" "$T/err")"
	fi
}

if [ -b "$D/sdb" ]; then
	device_tests
else
	bad device_tests "mknod not permitted here: the device tests did not run"
fi

# ------------------------------------- the real netlink path, no module
if [ -e /sys/module/vcache ]; then
	bad no_module_tests "vcache.ko is loaded on this host: the no-module tests did not run"
else
	for a in "list" "show db" "flush db" "set db mode=wt" "pid db list"; do
		# shellcheck disable=SC2086
		"$VC" $a >"$T/out" 2>"$T/err"
		rc=$?
		if [ $rc = 6 ] && grep -q "vcache.ko is not loaded (modprobe vcache)" "$T/err"
		then ok "no module: $a"
		else bad "no module: $a" "exit $rc $(cat "$T/err")"; fi
	done
	if [ -b "$D/vdb" ] && "$VC" hotplug "$D/vdb" >"$T/out" 2>&1 && [ ! -s "$T/out" ]
	then ok "no module: hotplug is silent"
	else bad "no module: hotplug is silent" "$(cat "$T/out")"; fi
fi

# ------------------------------------------------ man page, udev rule
# this tool's page and the driver's, vcache(4)
for page in "man_lint vcache-config.8" "man_lint_vcache4 vcache.4"; do
	set -- $page
	if ! command -v mandoc >/dev/null; then
		bad "$1" "mandoc not installed"
	elif out=$(mandoc -T lint -W warning "$top/man/$2" 2>&1) && [ -z "$out" ]; then
		ok "$1"
	else
		bad "$1" "$out"
	fi
done
# every command, parameter and statistic of the header is in the man page
missing=
for w in create attach detach delete flush set pid list show hotplug ident \
	 reset-stats cards repair-table table_damage $(sed -n 's/^\tX([A-Z_0-9]*, \([a-z_0-9]*\)).*/\1/p' \
		"$top/include/vcache/vcache_nl.h"); do
	grep -qs "$w" "$top/man/vcache-config.8" || missing="$missing $w"
done
if [ -z "$missing" ]; then ok man_complete; else bad man_complete "missing:$missing"; fi

# cards: identity, space and health of every card, from a fake sysfs
CS=$T/cardsys
d=$CS/class/block/vflash0/device
mkdir -p "$d/health" "$CS/class/block/vflash0p1" "$CS/class/block/vflash10/device" \
	"$CS/class/block/vflash2/device" "$CS/class/block/sda"
printf 'VC0001\n' >"$d/serial"; echo vcache-sim >"$d/model"; echo 1.0 >"$d/firmware_rev"
echo live >"$d/state"; echo 268435456 >"$d/capacity"; echo 512 >"$d/lba_size"
printf 'table ok generation 3 regions 1 raw_bytes 199229440\nregion db start 199229440 bytes 67108864 block 4096 open 1\n' >"$d/space"
for kv in percent_used=2 media_errors=7 unsafe_shutdowns=1 power_cycles=4 temperature_k=308; do
	echo "${kv#*=}" >"$d/health/${kv%=*}"
done
echo dead >"$CS/class/block/vflash10/device/state"
echo resetting >"$CS/class/block/vflash2/device/state"
printf 'table damaged generation 0 regions 0 raw_bytes 267124736\ndamaged copy_a checksum copy_b none\n' \
	>"$CS/class/block/vflash2/device/space"
out=$(VCACHE_SYSFS_ROOT=$CS VCACHE_NL_FORBID=1 "$VC" cards 2>&1)
if grep -q "^vflash0  serial VC0001  model vcache-sim  firmware 1.0  live$" <<<"$out" &&
   grep -q "capacity 256.0 MiB, raw disk 190.0 MiB, card-space table ok, 1 region$" <<<"$out" &&
   grep -q "cache db: 64.0 MiB at 199229440$" <<<"$out" &&
   grep -q "health: 2% used, 7 media errors, 1 unsafe shutdowns, 4 power cycles, 35 C$" <<<"$out" &&
   grep -q "health: not available" <<<"$out" &&
   grep -q "card-space table damaged (copy A: checksum, copy B: none)" <<<"$out" &&
   grep -q "vcache-config repair-table /dev/vflash2$" <<<"$out" &&
   [ "$(grep -o '^vflash[0-9]*' <<<"$out" | tr '\n' ' ')" = "vflash0 vflash2 vflash10 " ]; then
	ok cards_text
else
	bad cards_text "$out"
fi
VCACHE_SYSFS_ROOT=$CS VCACHE_NL_FORBID=1 "$VC" cards --json >"$T/cards.json" 2>&1
pycheck cards_json "$T/cards.json" '
c = d["cards"]
assert [x["disk"] for x in c] == ["vflash0", "vflash2", "vflash10"], c
a = c[0]
assert a["serial"] == "VC0001" and a["capacity_bytes"] == 268435456 and a["raw_size_bytes"] == 199229440
assert a["regions"] == [{"name": "db", "start_bytes": 199229440, "size_bytes": 67108864,
                         "block_size_bytes": 4096, "open": True}], a["regions"]
assert (a["percent_used"], a["media_errors"], a["unsafe_shutdowns"], a["temperature_c"]) == (2, 7, 1, 35)
assert c[1]["table"] == "damaged" and c[1]["table_damage"] == {"copy_a": "checksum", "copy_b": "none"}, c[1]
assert "table_damage" not in a
b = c[2]
assert b["state"] == "dead" and b["serial"] is None and b["percent_used"] is None and b["regions"] == []
assert set(a) == set(b), (set(a) ^ set(b))'
expect cards_no_sysfs 1 "cannot read" env VCACHE_SYSFS_ROOT=$T/nope "$VC" cards
expect cards_extra_arg 2 "unexpected argument" "$VC" cards x

R=$here/../69-vcache.rules.in
if grep -qF 'RUN+="@SBINDIR@/vcache-config hotplug $devnode"' "$R" &&
   ! grep -q '/usr/sbin' "$R" &&
   grep -qF 'SYMLINK+="disk/by-id/vflash-$attr{serial}"' "$R" &&
   grep -qF 'KERNEL=="vcache[0-9]*", SUBSYSTEM=="block", ATTR{vcache/name}=="?*", SYMLINK+="vcache/$attr{vcache/name}"' "$R" &&
   grep -qF 'KERNEL=="vflash*|vcache*", GOTO="vcache_end"' "$R" &&
   ! grep -vE '^(#.*|LABEL="[a-z_]+"|[A-Z]+(\{[^}]*\})?(==|!=|\+=|=)"[^"]*"(, [A-Z]+(\{[^}]*\})?(==|!=|\+=|=)"[^"]*")*|)$' "$R"; then
	ok udev_rule
else
	bad udev_rule "$(grep -vE '^(#.*|LABEL="[a-z_]+"|[A-Z]+(\{[^}]*\})?(==|!=|\+=|=)"[^"]*"(, [A-Z]+(\{[^}]*\})?(==|!=|\+=|=)"[^"]*")*|)$' "$R")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
