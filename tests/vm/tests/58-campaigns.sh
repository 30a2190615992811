#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The short versions of issue 20's campaigns in one boot (GROUPS): one
# card of 1 GiB (the power-cut replay uses its raw disk as scratch space),
# the simulated HDD (4 GiB, no throttling), 1.5 GiB of RAM.  Members:
# 58-torture (4 replayed crash states), 60-soak (60 s), 61-fault-ack (no
# acknowledged write lost while the card and the disk fail under it), then
# 59-fuzz-metadata (8 corrupted metadata images; it rewrites the card's
# table, so it comes last).  Prints each campaign's figures from the
# summaries its guest part leaves in the run directory.  Arguments: the
# members to run (default all).  The full campaigns: make torture-powercut,
# make soak, make fuzz-metadata (tests/vm/README.md, "Campaigns").
. "$(dirname "$0")/lib.sh"
builds tools/vcache-config tools/vcache-monitor tests/vm/tools
D=$TOP/build/vm/campaigns-$$
rm -rf "$D"
group_run 58-campaigns --keep "$D" --cards 1 --card-size 1G --hdd-size 4G --hdd-model fast \
	--memory 1536M -- "$@"
echo "# ---- campaign figures"
"$TOP/tests/vm/torture/figures" "$D/torture.summary"
for f in torture fuzz soak; do sed 's/^/# /' "$D/$f.summary" 2>/dev/null; done
[ "$VC_FAILS" = 0 ] && rm -rf "$D"
t_done
