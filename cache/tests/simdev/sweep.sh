#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make model-sweep: the model (cache/tests/model) over many seeds, every
# replacement policy, queued completions and power cuts, and one seed in
# eight with injected errors.  A failing seed is a reproduction: its
# command line is printed; add it to proofs.mk's model-check once fixed.
#   sweep.sh MODEL FIRST_SEED SEEDS OPS [ERRORS]
# ERRORS: "sparse" (the default: lossy errors one seed in eight), or one of
# the model's modes for every seed: none, cache (cache write errors),
# backing (backing device errors), both (cache write and backing errors
# at once), lossy (cache data lost).
model=$1 first=$2 n=$3 ops=$4 errors=${5:-sparse}
case $errors in
sparse|none|cache|backing|lossy|both) ;;
*) echo "sweep.sh: unknown errors mode '$errors' (sparse, none, cache, backing, both, lossy)" >&2
   exit 2 ;;
esac
pass=0 fail=0 start=$(date +%s)
seed=$first
while [ "$seed" -lt $((first + n)) ]; do
	for pol in lru tinylfu s3fifo fifo; do
		extra=
		if [ "$errors" = sparse ]; then
			[ $((seed % 8)) = 0 ] && extra="--errors lossy"
		elif [ "$errors" != none ]; then
			extra="--errors $errors"
		fi
		# shellcheck disable=SC2086
		if out=$("$model" --seed "$seed" --ops "$ops" --queued --crash --policy $pol $extra 2>&1 | tail -n 1) &&
		   [ "$out" = "model: OK" ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: $model --seed $seed --ops $ops --queued --crash --policy $pol $extra"
			echo "  $out"
		fi
	done
	seed=$((seed + 1))
done
echo "model-sweep: seeds $first..$((first + n - 1)), 4 policies, errors $errors, $ops ops each: $((pass + fail)) runs in $(( $(date +%s) - start )) s"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
