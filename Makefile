# SPDX-License-Identifier: GPL-2.0
#
# vcache top-level Makefile.
#
#   make               build vcache.ko, firmware-sim, the engine library and tools
#   make demo          install what is missing, boot the bench, cache the
#                      simulated HDD on the card, fio verify on the cached
#                      device, print the cache (vcache-config show) and counters
#   make check         install what is missing, run every test (unit, model,
#                      crash, fuzz smoke, sanitizers, VM tests; the module
#                      built on every supported kernel)
#   make check-kernels build the module on every supported kernel
#                      (scripts/kernels.sh) and run the driver's VM suite and
#                      the smoke test on each; one table
#   make bench         vcache vs bcache, dm-cache, dm-writecache on the
#                      throttled HDD and the seek model (bench/README.md;
#                      BENCH_OPTS=--quick for short windows)
#   make bench-card    fio on the card vs null_blk vs virtio-blk, in one VM
#   make bench-cache   4K read hits on the cached device vs the raw card and
#                      vs bcache on the same card; metadata writes per write
#   make bench-engine  hit ratios vs OPT, flash writes, CPU per hit
#
# KDIR= builds the module against another kernel tree; KVER= picks another
# installed Debian kernel (default: the newest installed *-amd64).

KVER ?= $(shell ls /lib/modules 2>/dev/null | grep -E 'amd64$$' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
export KVER KDIR

.PHONY: all deps deps-kernels module firmware cache tools hdd-model check \
	check-fast check-kernels demo bench \
	bench-card bench-cache bench-engine checkpatch clean

all: module firmware tools hdd-model

deps:
	@scripts/deps.sh

# deps and every supported kernel with its build environment.
deps-kernels:
	@scripts/deps.sh --kernels

module:
	$(MAKE) -C driver KDIR=$(KDIR)

firmware:
	$(MAKE) -C firmware-sim

cache:
	$(MAKE) -C cache

hdd-model:
	$(MAKE) -C tests/hdd-model

tools: cache
	$(MAKE) -C tools/vcache-sim
	$(MAKE) -C tools/vcache-config
	$(MAKE) -C tools/vcache-monitor

# Every test.  The closing line is "N passed, N failed".
check: deps-kernels
	@scripts/run-checks.sh

# Everything that needs no VM (seconds to minutes).
check-fast: deps-kernels
	@VCACHE_SKIP_VM=1 scripts/run-checks.sh

# The module on every supported kernel: build, style, VM suite, smoke test.
check-kernels: deps-kernels all
	@scripts/check-kernels.sh

demo: deps all
	@scripts/demo.sh

# vcache vs bcache, dm-cache, dm-writecache on the throttled HDD and the
# seek model; BENCH_OPTS=--quick for short windows (bench/README.md)
bench: deps all
	@bench/run $(BENCH_OPTS)

bench-card: deps all
	@tests/vm/bench-card

bench-cache: deps all
	@tests/vm/bench-cache

bench-engine: deps cache
	$(MAKE) -C bench/engine bench

checkpatch:
	$(MAKE) -C driver checkpatch

clean:
	-$(MAKE) -C driver clean KDIR=$(KDIR)
	-$(MAKE) -C firmware-sim clean
	-$(MAKE) -C cache clean
	-$(MAKE) -C tools/vcache-sim clean
	-$(MAKE) -C tools/vcache-config clean
	rm -rf build
