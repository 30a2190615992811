#!/usr/bin/env bash
# vcache-monitor's tests without a kernel: every output format from canned
# readings (VCACHE_NL_DRYRUN with VCACHE_NL_FAKE, fixture.py), checked
# against the numbers the readings imply; the JSON schema (jsonschema),
# Prometheus text (promtool), the live view under tmux, argument errors,
# and the man page.  The kernel path is tests/vm/tests/54-monitor.
#
# Usage: tests/run.sh BUILD/vcache-monitor   -> "N passed, N failed"
set -u
M=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'tmux kill-session -t vcm-$$ 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: ${2:-}"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else bad "$n" "$*"; fi; }

python3 "$here/fixture.py" "$tmp/fx" 12 || { echo "0 passed, 1 failed"; exit 1; }
R0=$tmp/fx/r0.json
SEQ=$(ls "$tmp"/fx/r*.json | sort -V | paste -sd:)
dry() { env VCACHE_NL_DRYRUN=1 VCACHE_NL_FAKE="$1" "$M" "${@:2}"; }
width_ok() { ! awk 'length($0) > 80 { bad = 1 } END { exit !bad }' "$1"; }

# ---------------------------------------------------------- arguments
for args in "--bogus" "--watch 0" "--watch 5000" "--count 3" "--count 0 --watch" \
	    "--json --csv" "--csv --prometheus" "--detail" "--reset-stats" \
	    "--reset-stats db --json" "--events db" "--events --csv" \
	    "bad/name" "db other" "--detail db other" ".hidden"; do
	out=$(VCACHE_NL_FORBID=1 "$M" $args 2>&1); rc=$?
	if [ $rc -eq 2 ] && [[ "$out" == vcache-monitor:* ]]; then
		ok "usage: $args"
	else
		bad "usage: $args" "rc=$rc out=$out"
	fi
done
for args in "--watch=0" "--count=0 --watch" "--json=1" "--detail=" "-x"; do
	out=$(VCACHE_NL_FORBID=1 "$M" $args 2>&1); rc=$?
	if [ $rc -eq 2 ] && [[ "$out" == vcache-monitor:* ]]; then
		ok "usage (getopt_long): $args"
	else
		bad "usage (getopt_long): $args" "rc=$rc out=$out"
	fi
done
check "help" bash -c "'$M' --help | grep -q -- '--prometheus'"
check "version" bash -c "'$M' --version | grep -q 'netlink family vcache'"
out=$(env -u VCACHE_NL_DRYRUN "$M" 2>&1); rc=$?
if [ $rc -eq 6 ] && [[ "$out" == *"vcache.ko is not loaded"* ]]; then
	ok "no module: exit 6"
else
	bad "no module: exit 6" "rc=$rc out=$out"
fi
out=$(dry "$R0" nosuch 2>&1); rc=$?
check "no such cache: exit 3" test "$rc" -eq 3

# --------------------------------------------------------------- text
dry "$R0" > "$tmp/t0" 2>&1
check "text: read hits per second since load" grep -qE '^  read hit +10\.0 ' "$tmp/t0"
check "text: hit ratio" grep -q 'hit ratio  read  90.9% write  75.0%' "$tmp/t0"
check "text: second cache and its state" grep -q '^logs-2: waiting, wt, fifo' "$tmp/t0"
check "text: backing device" grep -q '  device db (vcache0 on vdb): attached' "$tmp/t0"
check "text: bypass by reason" grep -qE '^  bypass seq +0\.3 +0\.02' "$tmp/t0"
check "text: 80 columns" width_ok "$tmp/t0"
dry "$R0" --detail db > "$tmp/d0" 2>&1
check "detail: latency p50 of read hits" grep -qE '^  read_hit +100 +80 us +82 us' "$tmp/d0"
check "detail: only that cache" bash -c "! grep -q logs-2 '$tmp/d0'"
check "detail: 80 columns" width_ok "$tmp/d0"
dry "$SEQ" --watch 0.1 --count 2 > "$tmp/w" 2>&1
check "watch piped: interval rates" bash -c \
	"grep -E '^  read hit ' '$tmp/w' | awk '{print \$3}' | paste -sd' ' | grep -qx '20.0 20.0 0.0 0.0 30.0 30.0 0.0 0.0'"
check "watch piped: two readings" test "$(grep -c '^vcache-monitor ' "$tmp/w")" -eq 2
check "watch: 80 columns" width_ok "$tmp/w"

# ---------------------------------------------------------------- csv
dry "$SEQ" --watch 0.1 --count 3 --csv > "$tmp/c" 2>&1
check "csv: header and 4 rows per reading" test "$(wc -l < "$tmp/c")" -eq 13
check "csv: one header" test "$(grep -c '^time_ns,' "$tmp/c")" -eq 1
check "csv: every row as wide as the header" bash -c \
	"awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' '$tmp/c'"
col() { awk -F, -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
	$2 == "db" && $3 == "" { print $k }' "$tmp/c" | paste -sd' '; }
check "csv: read hits per interval" test "$(col read_hit_ops)" = "200 300 400"
check "csv: window" test "$(col window_ns)" = "10000000000 10000000000 10000000000"
check "csv: backing write errors (total)" test "$(col backing_write_errors)" = "1 2 3"
check "csv: latency over the interval" test "$(col read_miss_p999_ns)" = "469762048 469762048 469762048"

# --------------------------------------------------------------- json
validate() {
	python3 - "$top/tools/vcache-monitor/schema.json" "$@" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    for line in open(path).read().strip().split("\n") if path.endswith(".jl") else [open(path).read()]:
        jsonschema.validate(json.loads(line), schema)
PY
}
dry "$R0" --json > "$tmp/j0.json" 2>&1
check "json: schema (one reading)" validate "$tmp/j0.json"
dry "$SEQ" --watch 0.1 --count 2 --json > "$tmp/j.jl" 2>&1
# the same with --opt=value and the options after the name
dry "$SEQ" db --json --watch=0.1 --count=2 > "$tmp/j2.jl" 2>&1
check "getopt_long: NAME --json --watch=0.1 --count=2: two documents, db only" \
	python3 -c "
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert len(docs) == 2, docs
assert all([c['name'] for c in d['caches']] == ['db'] for d in docs)
" "$tmp/j2.jl"
dry "$R0" --detail=db --json > "$tmp/dj" 2>&1
check "getopt_long: --detail=db --json" \
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [c['name'] for c in d['caches']] == ['db']" "$tmp/dj"
check "json: schema (--watch, one document per line)" validate "$tmp/j.jl"
check "json: two lines" test "$(wc -l < "$tmp/j.jl")" -eq 2
# jq_ FILE EXPR: EXPR over d, the list of documents of FILE (JSON or JSON Lines)
jq_() { python3 -c "
import json
t = open('$1').read()
try:
    d = [json.loads(t)]
except ValueError:
    d = [json.loads(l) for l in t.splitlines()]
print($2)"; }
check "json: interval figures" test "$(jq_ "$tmp/j.jl" "' '.join(str(x['caches'][0]['paths']['read_hit']['ops']) for x in d)")" = "200 300"
check "json: latency quantiles" test "$(jq_ "$tmp/j.jl" "d[0]['caches'][0]['latency']['read_miss']['p50_ns'], d[0]['caches'][0]['latency']['read_hit']['p50_ns']")" = "6291456 81920"
check "json: hit ratio ppm" test "$(jq_ "$tmp/j0.json" "d[0]['caches'][0]['read_hit_ratio_ppm'], d[0]['caches'][1]['read_hit_ratio_ppm']")" = "909091 None"
check "json: backing counters" test "$(jq_ "$tmp/j0.json" "d[0]['caches'][0]['backing'][0]['counters']['read_hits']")" = "100"
printf '{"time_ns": 1, "interval": false, "caches": [{"name": "x"}]}' > "$tmp/bad.json"
check "json: the schema refuses an incomplete cache" bash -c "! validate_() { :; }; ! python3 -c \"
import json, jsonschema
jsonschema.validate(json.load(open('$tmp/bad.json')), json.load(open('$top/tools/vcache-monitor/schema.json')))\" 2>/dev/null"

# --------------------------------------------------------- prometheus
dry "$R0" --prometheus > "$tmp/p" 2>&1
# promlint: what `promtool check metrics` runs, without the Prometheus
# server (tests/promlint, built by scripts/deps.sh)
PROMLINT=${VCACHE_PROMLINT:-/opt/vcache/bin/promlint}
if [ -x "$PROMLINT" ]; then
	check "prometheus: promlint (promtool check metrics) accepts it" bash -c "'$PROMLINT' < '$tmp/p'"
	check "prometheus: ... and refuses text that does not parse" \
		bash -c "! printf 'vcache_x{cache=\"db\" 1\n' | '$PROMLINT' 2>/dev/null"
	check "prometheus: ... and a counter named without _total (lint, exit 3)" \
		bash -c "printf '# HELP vcache_reads Reads.\n# TYPE vcache_reads counter\nvcache_reads 1\n' | '$PROMLINT' 2>/dev/null; [ \$? = 3 ]"
else
	bad "prometheus: promlint" "$PROMLINT not built (scripts/deps.sh)"
fi
check "prometheus: blocks by path" grep -qx 'vcache_io_blocks_total{cache="db",path="read_hit"} 100' "$tmp/p"
check "prometheus: per backing device" grep -qx 'vcache_io_blocks_total{cache="db",backing="db",path="read_hit"} 100' "$tmp/p"
check "prometheus: latency quantile in seconds" grep -qx 'vcache_latency_seconds{cache="db",path="read_hit",quantile="0.5"} 0.000081920' "$tmp/p"
check "prometheus: latency count" grep -qx 'vcache_latency_seconds_count{cache="db",path="read_miss"} 10' "$tmp/p"
check "prometheus: label escaping" bash -c "! grep -q 'cache=\"[^\"]*[\\\\][^\"n\\\\]' '$tmp/p'"

# ------------------------------------------------------------- others
out=$(dry "$R0" --reset-stats db 2>&1); rc=$?
check "reset-stats: one RESET_STATS request" test "$rc:$out" = "0:RESET_STATS name=db"

# ------------------------------------------------------- tmux: live view
if command -v tmux >/dev/null; then
	s=vcm-$$
	tmux new-session -d -s "$s" -x 80 -y 60 \
		"env TERM=xterm VCACHE_NL_DRYRUN=1 VCACHE_NL_FAKE='$SEQ' '$M' --watch 0.5"
	sleep 1.8
	tmux capture-pane -p -t "$s" > "$tmp/s1"
	sleep 1.5
	tmux capture-pane -p -t "$s" > "$tmp/s2"
	check "tmux: the table is on screen" grep -qE '^  read hit ' "$tmp/s1"
	check "tmux: counters move" bash -c \
		"test \"\$(grep -E '^  read hit ' '$tmp/s1' | head -1)\" != \"\$(grep -E '^  read hit ' '$tmp/s2' | head -1)\""
	check "tmux: redrawn in place (one header)" test "$(grep -c '^vcache-monitor ' "$tmp/s2")" -eq 1
	check "tmux: 80 columns" width_ok "$tmp/s2"
	tmux send-keys -t "$s" q
	sleep 1
	check "tmux: q quits" bash -c "! tmux has-session -t '$s' 2>/dev/null"
else
	bad "tmux" "tmux not installed (scripts/deps.sh)"
fi

# ----------------------------------------------------------- man page
page=$top/man/vcache-monitor.8
if ! command -v mandoc >/dev/null; then
	bad man_lint "mandoc not installed"
elif out=$(mandoc -T lint -W warning "$page" 2>&1) && [ -z "$out" ]; then
	ok man_lint
else
	bad man_lint "$out"
fi
missing=
for w in $(python3 -c "
import json
s = json.load(open('$top/tools/vcache-monitor/schema.json'))
keys = set()
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ('properties', 'patternProperties'):
                keys.update(x for x in v if x[0] != '^')
            walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(s)
print(' '.join(sorted(keys)))") \
	 $(grep -o '^vcache_[a-z_]*' "$tmp/p" | sed 's/_sum$\|_count$//' | sort -u) \
	 $(head -1 "$tmp/c" | tr , ' '); do
	grep -qs -- "$w" "$page" || missing="$missing $w"
done
if [ -z "$missing" ]; then ok man_complete; else bad man_complete "missing:$missing"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
