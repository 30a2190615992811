#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/demo.sh [RUNNER-OPTIONS]: boot the bench with one card (flash
# timing) and the simulated HDD (throttled like a real disk), create a
# write-back cache on the card in front of the HDD, run fio with crc32c
# verify on the cached device (reads of data the disk already held, random
# writes read back while writing), then print `vcache-config show`, flush
# the dirty data to the HDD and print the card's counters.  About 1.5 min.
# Needs vcache.ko, build/firmware-sim/firmware-sim and vcache-config
# (`make`).
TOP=$(cd "$(dirname "$0")/.." && pwd)
exec "$TOP/tests/vm/run" --cards 1 --card-size 1G --timing flash \
	--hdd-model hdd --timeout 600 "$@" -- "$TOP/tests/vm/demo/demo.guest"
