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
#   make check-debug   the driver and cached-device VM suites on a debug
#                      kernel (KASAN, lockdep, kmemleak, KFENCE, ...; built
#                      once, cached under /opt/vcache/debug-kernel);
#                      FAULTS=1 with failslab/fail_make_request; SUITES=
#   make torture-powercut  the power-cut campaign: TRIALS crash states replayed
#                      from a dm-log-writes log (default 200) + REBOOTS real
#                      power cuts (default 5)
#   make fuzz-metadata corrupted metadata images brought up by the kernel
#                      (CASES, default 1000)
#   make fuzz-netlink  malformed generic netlink requests under I/O, root and
#                      unprivileged (MESSAGES, default 1000000)
#   make soak          fio verify on two caches, admin loop, unprivileged
#                      readers, memory curve (SOAK_S, default 3600)
#   make bench         vcache vs bcache, dm-cache, dm-writecache on the
#                      throttled HDD and the seek model (bench/README.md;
#                      BENCH_OPTS=--quick for short windows)
#   make bench-knobs   vcache's defaults against one knob changed at a time
#                      (the OLTP mix and its drain; bench/knobs)
#   make bench-card    fio on the card vs null_blk vs virtio-blk, in one VM
#   make bench-cache   4K read hits on the cached device vs the raw card and
#                      vs bcache on the same card; metadata writes per write
#   make bench-engine  hit ratios vs OPT, flash writes, CPU per hit
#
#   make install       tools, man pages (vcache(4) too), udev rules, systemd
#                      unit, bash completion, JSON schema (DESTDIR, PREFIX;
#                      also SBINDIR, BINDIR, MANDIR, LIBEXECDIR, UDEVDIR,
#                      UNITDIR, PRESETDIR); make uninstall removes them
#   make install-module        vcache.ko into /lib/modules/KVER/extra
#   make install-firmware-sim  the simulated card (vcache-firmware-sim)
#   make install-dkms-src      the module's source and dkms.conf in
#                              /usr/src/vcache-VERSION
#   make dist          build/vcache-VERSION.tar.gz from the committed tree
#   make rpm           the RPMs from that tarball (rpm/vcache.spec; kmod-vcache
#                      for RPM_KERNEL, default trixie: 6.12, RHEL 10's base)
#   make deb           vcache-tools and vcache-dkms .debs (contrib/debian)
#   make check-packages  build both, rpmlint, lintian, scriptlet tests, and
#                      an installed system in a VM: apt install, a cache in
#                      fstab, reboot, boot without the backing disk
#
# KDIR= builds the module against another kernel tree; KVER= picks another
# installed Debian kernel (default: the newest installed *-amd64).

KVER ?= $(shell ls /lib/modules 2>/dev/null | grep -E 'amd64$$' | sort -V | tail -n1)
KDIR ?= /lib/modules/$(KVER)/build
export KVER KDIR

VERSION := $(shell cat VERSION)
PREFIX     ?= /usr
SBINDIR    ?= $(PREFIX)/sbin
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
LIBEXECDIR ?= $(PREFIX)/libexec
# udev and systemd read only their own directories, whatever PREFIX is.
UDEVDIR    ?= $(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/lib/udev)
UNITDIR    ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
PRESETDIR  ?= $(or $(shell pkg-config --variable=systemdsystempresetdir systemd 2>/dev/null),/lib/systemd/system-preset)
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
MODDIR     ?= /lib/modules/$(KVER)/extra
DKMSDIR    ?= /usr/src/vcache-$(VERSION)
# The module's source, as DKMS and the kmod package build it.
MODULE_SRC := Kbuild $(wildcard include/vcache/*.h) \
	driver/Kbuild.inc $(wildcard driver/*.[ch] driver/cached/*.[ch] driver/netlink/*.[ch]) \
	cache/Kbuild.inc $(wildcard cache/*.[ch] cache/include/*.h cache/env/linux/*.[ch])
SUBST = sed -e 's,@SBINDIR@,$(SBINDIR),g' -e 's,@LIBEXECDIR@,$(LIBEXECDIR),g' \
	-e 's,@VERSION@,$(VERSION),g'

.PHONY: all deps deps-bench deps-kernels deps-packages module firmware cache tools tools-bin hdd-model check \
	check-fast check-kernels check-debug demo bench \
	torture-powercut fuzz-metadata fuzz-netlink soak model-sweep vm-tools \
	bench-knobs bench-card bench-cache bench-engine checkpatch clean install \
	uninstall install-module install-firmware-sim install-dkms-src dist \
	rpm deb check-packages

all: module firmware tools hdd-model

deps:
	@scripts/deps.sh

# deps and PostgreSQL (pgbench in make bench).
deps-bench:
	@scripts/deps.sh --bench

# deps and every supported kernel with its build environment.
deps-kernels:
	@scripts/deps.sh --kernels

# deps and the packaging tools (rpmbuild, rpmlint, debhelper, dh-dkms,
# lintian).
deps-packages:
	@scripts/deps.sh --packages

module:
	$(MAKE) -C driver KDIR=$(KDIR)

firmware:
	$(MAKE) -C firmware-sim

cache:
	$(MAKE) -C cache

hdd-model:
	$(MAKE) -C tests/hdd-model

tools: cache tools-bin

# The tools alone (not the engine's unit tests): what install and the
# packages build.  CPPFLAGS, CFLAGS and LDFLAGS from the environment are
# added to the project's own (the packages' hardening flags).
tools-bin:
	$(MAKE) -C tools/vcache-sim
	$(MAKE) -C tools/vcache-config
	$(MAKE) -C tools/vcache-monitor

# Every test.  The closing line is "N passed, N failed".
check:
	@scripts/deps.sh --kernels --packages
	@scripts/run-checks.sh

# Everything that needs no VM (seconds to minutes).
check-fast:
	@scripts/deps.sh --kernels --packages
	@VCACHE_SKIP_VM=1 scripts/run-checks.sh

# The module on every supported kernel: build, style, VM suite, smoke test.
check-kernels: deps-kernels all
	@scripts/check-kernels.sh

# The driver and cached-device VM suites on a debug kernel (KASAN, lockdep,
# kmemleak, KFENCE, ...; built once under /opt/vcache/debug-kernel, see
# scripts/debug-kernel.sh).  Not part of `make check`.  FAULTS=1: again
# with failslab and fail_make_request; SUITES= picks suites.
check-debug: all
	@scripts/deps.sh --debug-kernel
	@scripts/check-debug.sh $(if $(FAULTS),--faults) $(SUITES)

demo: deps all
	@scripts/demo.sh

# The campaigns of issue 20 (tests/vm/README.md, "Campaigns"); a short
# version of each runs in `make check`.
vm-tools:
	$(MAKE) -s -C tests/vm/tools

torture-powercut: deps all vm-tools
	@TRIALS=$(or $(TRIALS),200) REBOOTS=$(or $(REBOOTS),5) tests/vm/torture-powercut

fuzz-metadata: deps all vm-tools
	@CASES=$(or $(CASES),1000) tests/vm/fuzz-metadata

fuzz-netlink: deps all vm-tools
	@MESSAGES=$(or $(MESSAGES),1000000) tests/vm/fuzz-netlink

# The engine's model over many seeds and every policy (no VM; about 3 s
# a run, 800 runs by default): SWEEP_SEEDS=, SWEEP_FIRST=, SWEEP_OPS=,
# SWEEP_ERRORS= (cache, backing, lossy, none: that mode for every seed)
model-sweep: deps
	@$(MAKE) -s -f cache/tests/simdev/proofs.mk model-sweep

soak: deps all vm-tools
	@SOAK_S=$(or $(SOAK_S),3600) tests/vm/soak

# vcache vs bcache, dm-cache, dm-writecache on the throttled HDD and the
# seek model; BENCH_OPTS=--quick for short windows (bench/README.md)
bench: deps-bench all
	@bench/run $(BENCH_OPTS)

bench-knobs: deps-bench all
	@bench/knobs $(KNOBS_OPTS)

bench-card: deps all
	@tests/vm/bench-card

bench-cache: deps all
	@tests/vm/bench-cache

bench-engine: deps cache
	$(MAKE) -C bench/engine bench

checkpatch:
	$(MAKE) -C driver checkpatch

install: tools-bin
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man4 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UDEVDIR)/rules.d \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(PRESETDIR) \
		$(DESTDIR)$(LIBEXECDIR)/vcache $(DESTDIR)$(COMPLETIONDIR) \
		$(DESTDIR)$(DATADIR)/vcache
	install -m 755 build/vcache-config/vcache-config \
		build/vcache-monitor/vcache-monitor build/vcache-sim/vcache-sim \
		$(DESTDIR)$(SBINDIR)/
	install -m 644 man/vcache.4 $(DESTDIR)$(MANDIR)/man4/
	install -m 644 man/vcache-config.8 man/vcache-monitor.8 man/vcache-sim.8 \
		$(DESTDIR)$(MANDIR)/man8/
	$(SUBST) tools/vcache-config/69-vcache.rules.in > \
		$(DESTDIR)$(UDEVDIR)/rules.d/69-vcache.rules
	$(SUBST) contrib/systemd/vcache.service.in > $(DESTDIR)$(UNITDIR)/vcache.service
	install -m 644 contrib/systemd/50-vcache.preset $(DESTDIR)$(PRESETDIR)/
	$(SUBST) contrib/systemd/vcache-boot.in > $(DESTDIR)$(LIBEXECDIR)/vcache/vcache-boot
	chmod 755 $(DESTDIR)$(LIBEXECDIR)/vcache/vcache-boot
	chmod 644 $(DESTDIR)$(UDEVDIR)/rules.d/69-vcache.rules $(DESTDIR)$(UNITDIR)/vcache.service
	install -m 644 contrib/bash-completion/vcache $(DESTDIR)$(COMPLETIONDIR)/vcache-config
	ln -sf vcache-config $(DESTDIR)$(COMPLETIONDIR)/vcache-monitor
	ln -sf vcache-config $(DESTDIR)$(COMPLETIONDIR)/vcache-sim
	install -m 644 tools/vcache-monitor/schema.json \
		$(DESTDIR)$(DATADIR)/vcache/vcache-monitor.schema.json
	@if [ -z "$(DESTDIR)" ]; then \
		udevadm control --reload 2>/dev/null; \
		systemctl daemon-reload 2>/dev/null; \
		echo "installed; enable the boot unit with: systemctl enable vcache.service"; \
	fi; true

uninstall:
	rm -f $(addprefix $(DESTDIR)$(SBINDIR)/,vcache-config vcache-monitor vcache-sim) \
		$(DESTDIR)$(MANDIR)/man4/vcache.4 \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,vcache-config.8 vcache-monitor.8 vcache-sim.8) \
		$(DESTDIR)$(UDEVDIR)/rules.d/69-vcache.rules \
		$(DESTDIR)$(UNITDIR)/vcache.service $(DESTDIR)$(PRESETDIR)/50-vcache.preset \
		$(DESTDIR)$(LIBEXECDIR)/vcache/vcache-boot \
		$(addprefix $(DESTDIR)$(COMPLETIONDIR)/,vcache-config vcache-monitor vcache-sim) \
		$(DESTDIR)$(DATADIR)/vcache/vcache-monitor.schema.json
	-rmdir $(DESTDIR)$(LIBEXECDIR)/vcache $(DESTDIR)$(DATADIR)/vcache 2>/dev/null

install-module: module
	install -D -m 644 vcache.ko $(DESTDIR)$(MODDIR)/vcache/vcache.ko
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

install-firmware-sim: firmware
	install -D -m 755 build/firmware-sim/firmware-sim $(DESTDIR)$(BINDIR)/vcache-firmware-sim
	ln -sf vcache-firmware-sim $(DESTDIR)$(BINDIR)/vcfw-ctl

install-dkms-src:
	install -d $(DESTDIR)$(DKMSDIR)
	tar -cf - $(MODULE_SRC) | tar -xf - -C $(DESTDIR)$(DKMSDIR)
	$(SUBST) contrib/dkms/dkms.conf.in > $(DESTDIR)$(DKMSDIR)/dkms.conf
	chmod -R u=rwX,go=rX $(DESTDIR)$(DKMSDIR)

# One source tarball of the committed tree (HEAD; what is not committed is
# not in it), for rpmbuild -ta and the packages.
dist:
	@mkdir -p build
	@git diff --quiet HEAD 2>/dev/null || echo "dist: uncommitted changes are not in the tarball" >&2
	git archive --format=tar.gz --prefix=vcache-$(VERSION)/ \
		-o build/vcache-$(VERSION).tar.gz HEAD
	@echo "build/vcache-$(VERSION).tar.gz"

rpm: deps-packages dist
	@scripts/packages.sh rpm

deb: deps-packages dist
	@scripts/packages.sh deb

# Build, lint and check the packages (the `packages` suite of make check),
# then an installed Debian 13 system with systemd in a VM, three boots
# (tests/vm/packages.guest, scripts/pkgvm.sh; tests/vm/README.md).
check-packages: deps-packages deps
	@scripts/check-packages.sh --vm

clean:
	-$(MAKE) -C driver clean KDIR=$(KDIR)
	-$(MAKE) -C firmware-sim clean
	-$(MAKE) -C cache clean
	-$(MAKE) -C tools/vcache-sim clean
	-$(MAKE) -C tools/vcache-config clean
	rm -rf build
