#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/demo.sh [RUNNER-OPTIONS]: boot the bench with one card (flash
# timing), write and verify data on it with fio, print the card's identity
# and counters (driver sysfs health and the firmware's own stats).
# Needs vcache.ko and build/firmware-sim/firmware-sim (`make`).
TOP=$(cd "$(dirname "$0")/.." && pwd)
exec "$TOP/tests/vm/run" --cards 1 --card-size 1G --timing flash \
	--hdd-model none "$@" -- "$TOP/tests/vm/demo/demo.guest"
