#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cached-device tests that need the same VM, in one boot (GROUPS): one
# card of 512 MiB, the simulated HDD (1 GiB, no throttling), 1.5 GiB of
# RAM, io_timeout 5 s.  Members: 50-config (every vcache-config command
# through the kernel), 51-cached-io (the cached device under load),
# 54-monitor, 55-boot (boot integration), then 53-cached-failure (failures
# under a cached device; its card dies).  Arguments: the members to run
# (default all).
. "$(dirname "$0")/lib.sh"
builds tools/vcache-config tools/vcache-monitor tests/vm/tools
group_run 50-cached --cards 1 --card-size 512M --hdd-size 1G --hdd-model fast \
	--memory 1536M --modparams io_timeout=5 -- "$@"
t_done
