#!/bin/sh
# bench/engine/bench.sh - run by `make -C bench/engine bench`.
#
# For zipf 0.9 / 1.1 / 1.2, pareto 0.9, scan 0.9 (zipf + one-time scans)
# and shift 0.9 (zipf whose hot set moves) traces (BENCH_REQUESTS 4 KiB
# requests, 80% reads, over BENCH_BLOCKS blocks of data, seed 1) with the
# cache at 10% of the data: hit ratios of the engine's FIFO, LRU,
# LRU+admission, S3-FIFO, S3-FIFO+admission and TinyLFU next to the exact
# OPT and the static oracle LFU on the same trace, flash writes and
# backing I/Os per host I/O; then the engine's instructions per 4 KiB read
# hit (callgrind) and its metadata RAM per block.
set -eu

: "${OUT:?}" "${SIM:?}" "${HITLOOP:?}"
BLOCKS=${BENCH_BLOCKS:-262144}
REQS=${BENCH_REQUESTS:-1000000}
HITS=${BENCH_HITS:-200000}
here=$(cd "$(dirname "$0")" && pwd)
CACHE_BYTES=$((BLOCKS / 10 * 4096))

mkdir -p "$OUT"
start=$(date +%s)
POLICIES=fifo,lru,lru+admit,s3fifo,s3fifo+admit,tinylfu
for d in zipf:0.9 zipf:1.1 zipf:1.2 pareto:0.9 scan:0.9 shift:0.9; do
	f="$OUT/$(echo "$d" | tr : _).iolog"
	"$SIM" gen -d "$d" -n "$BLOCKS" -r "$REQS" -R 80 -S 1 -o "$f"
	"$SIM" --json --reference --sizes "$CACHE_BYTES" --policies "$POLICIES" \
		--modes wb,wt "$f" >"$f.json"
done

# CPU per read hit: callgrind counts only inside hit_loop().
for p in lru fifo s3fifo tinylfu; do
	"$HITLOOP" --policy "$p" --hits 1000 >/dev/null
	if command -v valgrind >/dev/null 2>&1; then
		valgrind --tool=callgrind --toggle-collect=hit_loop \
			--callgrind-out-file="$OUT/callgrind.$p.out" \
			"$HITLOOP" --policy "$p" --hits "$HITS" \
			>"$OUT/hitloop.$p.txt" 2>"$OUT/valgrind.$p.log" || {
			echo "bench: valgrind failed, see $OUT/valgrind.$p.log" >&2
			exit 1
		}
	fi
done
"$HITLOOP" --mem >"$OUT/mem.txt"

python3 "$here/report.py" --out "$OUT" --blocks "$BLOCKS" \
	--requests "$REQS" --hits "$HITS" --cache-bytes "$CACHE_BYTES"
echo "bench-engine: $(( $(date +%s) - start )) s"
