# SPDX-License-Identifier: GPL-2.0
#
# The engine's proofs: unit tests of vc_seq / vc_pidlist, the simulated
# devices, the model-based test, crash at every metadata write, the
# metadata-loader fuzz smoke, and the multi-threaded stress under TSan and
# ASan+UBSan.
#
# Included by cache/Makefile (`-include tests/simdev/proofs.mk`) or run on
# its own:   make -f cache/tests/simdev/proofs.mk proofs-check
#
# Every variant compiles the engine sources itself (cache/*.c and the
# posix environment) with its own flags, into build/cache-proofs/<variant>/
# - the sanitizers need the engine instrumented too.
#
# Targets:
#   proofs-check      everything below, then "N passed, N failed"
#   proofs-unit       cmocka tests of vc_seq, vc_pidlist, simdev
#   model-check       model-based runs (CI sizes; MODEL_OPS=, MODEL_SEED=)
#   model-long        a long run (MODEL_LONG_OPS=, default 3 million)
#   model-sweep       SWEEP_SEEDS seeds (200) from SWEEP_FIRST (1) x every
#                     policy, queued, power cuts, errors one seed in eight
#                     (sweep.sh; make model-sweep); SWEEP_ERRORS=cache,
#                     backing, lossy or none: that mode for every seed
#   crash-check       cut at every metadata write of every scenario, and
#                     (strided) at every write / completion, with errors
#                     (cache writes, FLUSHes, allocations, lossy), a damaged
#                     superblock copy, lazy records at shutdown
#   crash-long        every write and completion, every error mode,
#                     damaged superblocks
#   fuzz-smoke        libFuzzer on the loader for FUZZ_SECONDS (30)
#   stress-check      stress under TSan and under ASan+UBSan (STRESS_OPS=)
#   proofs-all        build every binary, run nothing
#   proofs-clean

PROOFS_MK := $(lastword $(MAKEFILE_LIST))
PROOFS_TOP := $(abspath $(dir $(PROOFS_MK))/../../..)
PT := $(PROOFS_TOP)
PB := $(PT)/build/cache-proofs
PROOFS_RESULTS := $(PB)/results.txt

# Sizes (CI defaults; raise them for longer runs).
MODEL_SEED ?= 1
MODEL_OPS ?= 150000
MODEL_LONG_OPS ?= 3000000
CRASH_STRIDE ?= 1
CRASH_RANDOM_STRIDE ?= 4
FUZZ_SECONDS ?= 30
STRESS_OPS ?= 4000
STRESS_THREADS ?= 4

PROOFS_CC ?= gcc
PROOFS_CLANG ?= clang
PROOFS_INC := -I$(PT)/cache/include -I$(PT)/cache/env/posix \
	-I$(PT)/cache/tests/simdev -I$(PT)/cache/tests/model \
	-I$(PT)/cache/tests/fuzz
PROOFS_WARN := -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
PROOFS_BASE := -std=gnu11 -g $(PROOFS_WARN) $(PROOFS_INC)

ENGINE_SRCS := $(wildcard $(PT)/cache/*.c) $(wildcard $(PT)/cache/env/posix/*.c)
PROOFS_HDRS := $(wildcard $(PT)/cache/include/*.h $(PT)/cache/*.h \
	$(PT)/cache/env/posix/*.h $(PT)/cache/tests/simdev/*.h \
	$(PT)/cache/tests/model/*.h $(PT)/cache/tests/fuzz/*.h)
SIMDEV_SRC := $(PT)/cache/tests/simdev/simdev.c
HARNESS_SRC := $(PT)/cache/tests/model/harness.c

# variant -> compiler and flags
V_plain_CC := $(PROOFS_CC)
V_plain_CFLAGS := $(PROOFS_BASE) -O2
V_plain_LDFLAGS :=
V_asan_CC := $(PROOFS_CLANG)
V_asan_CFLAGS := $(PROOFS_BASE) -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all
V_asan_LDFLAGS := -fsanitize=address,undefined
V_tsan_CC := $(PROOFS_CLANG)
V_tsan_CFLAGS := $(PROOFS_BASE) -O1 -fsanitize=thread
V_tsan_LDFLAGS := -fsanitize=thread
V_fuzz_CC := $(PROOFS_CLANG)
V_fuzz_CFLAGS := $(PROOFS_BASE) -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
V_fuzz_LDFLAGS := -fsanitize=fuzzer,address,undefined

objs_of = $(patsubst $(PT)/%.c,$(PB)/$(1)/%.o,$(2))

define PROOFS_VARIANT
$(PB)/$(1)/%.o: $(PT)/%.c $(PROOFS_HDRS)
	@mkdir -p $$(dir $$@)
	@echo "  CC [$(1)] $$(patsubst $(PT)/%,%,$$<)"
	@$$(V_$(1)_CC) $$(V_$(1)_CFLAGS) -c $$< -o $$@
$(1)_ENGINE_OBJS := $$(call objs_of,$(1),$(ENGINE_SRCS))
endef
$(foreach v,plain asan tsan fuzz,$(eval $(call PROOFS_VARIANT,$(v))))
# objects made by the pattern rules are not intermediate: keep them
.PRECIOUS: $(PB)/%.o

PROOFS_LIBS := -lpthread -lm

# ---------------------------------------------------------------- binaries
U := $(PB)/plain
POSIX_ENV_SRCS := $(wildcard $(PT)/cache/env/posix/*.c)

$(U)/test_seq: $(call objs_of,plain,$(PT)/cache/tests/unit/test_seq.c \
		$(PT)/cache/vc_seq.c $(POSIX_ENV_SRCS))
	$(V_plain_CC) -o $@ $^ -lcmocka $(PROOFS_LIBS)

$(U)/test_pidlist: $(call objs_of,plain,$(PT)/cache/tests/unit/test_pidlist.c \
		$(PT)/cache/vc_pidlist.c $(POSIX_ENV_SRCS))
	$(V_plain_CC) -o $@ $^ -lcmocka $(PROOFS_LIBS)

# the classifiers' concurrency tests under ThreadSanitizer too
$(PB)/tsan/test_seq: $(call objs_of,tsan,$(PT)/cache/tests/unit/test_seq.c \
		$(PT)/cache/vc_seq.c $(POSIX_ENV_SRCS))
	$(V_tsan_CC) $(V_tsan_LDFLAGS) -o $@ $^ -lcmocka $(PROOFS_LIBS)

$(PB)/tsan/test_pidlist: $(call objs_of,tsan,$(PT)/cache/tests/unit/test_pidlist.c \
		$(PT)/cache/vc_pidlist.c $(POSIX_ENV_SRCS))
	$(V_tsan_CC) $(V_tsan_LDFLAGS) -o $@ $^ -lcmocka $(PROOFS_LIBS)

$(U)/test_simdev: $(call objs_of,plain,$(PT)/cache/tests/simdev/test_simdev.c \
		$(SIMDEV_SRC) $(POSIX_ENV_SRCS))
	$(V_plain_CC) -o $@ $^ -lcmocka $(PROOFS_LIBS)

$(U)/model: $(call objs_of,plain,$(PT)/cache/tests/model/model.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(plain_ENGINE_OBJS)
	$(V_plain_CC) -o $@ $^ $(PROOFS_LIBS)

$(U)/test_regress: $(call objs_of,plain,$(PT)/cache/tests/model/test_regress.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(plain_ENGINE_OBJS)
	$(V_plain_CC) -o $@ $^ -lcmocka $(PROOFS_LIBS)

# the checkers refuse what a broken engine would return
$(U)/test_oracles: $(call objs_of,plain,$(PT)/cache/tests/model/test_oracles.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(plain_ENGINE_OBJS)
	$(V_plain_CC) -o $@ $^ -lcmocka $(PROOFS_LIBS)

# the regressions under ASan+UBSan too (memory errors of the engine)
$(PB)/asan/test_regress: $(call objs_of,asan,$(PT)/cache/tests/model/test_regress.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(asan_ENGINE_OBJS)
	$(V_asan_CC) $(V_asan_LDFLAGS) -o $@ $^ -lcmocka $(PROOFS_LIBS)

$(U)/crash: $(call objs_of,plain,$(PT)/cache/tests/crash/crash.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(plain_ENGINE_OBJS)
	$(V_plain_CC) -o $@ $^ $(PROOFS_LIBS)

$(U)/gen-corpus: $(call objs_of,plain,$(PT)/cache/tests/fuzz/gen_corpus.c \
		$(SIMDEV_SRC)) $(plain_ENGINE_OBJS)
	$(V_plain_CC) -o $@ $^ $(PROOFS_LIBS)

# model under ASan+UBSan too (short run in CI)
$(PB)/asan/model: $(call objs_of,asan,$(PT)/cache/tests/model/model.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(asan_ENGINE_OBJS)
	$(V_asan_CC) $(V_asan_LDFLAGS) -o $@ $^ $(PROOFS_LIBS)

$(PB)/asan/crash: $(call objs_of,asan,$(PT)/cache/tests/crash/crash.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $(asan_ENGINE_OBJS)
	$(V_asan_CC) $(V_asan_LDFLAGS) -o $@ $^ $(PROOFS_LIBS)

STRESS_OBJS = $(call objs_of,$(1),$(PT)/cache/tests/stress/stress.c \
		$(HARNESS_SRC) $(SIMDEV_SRC)) $($(1)_ENGINE_OBJS)

$(PB)/tsan/stress: $(call STRESS_OBJS,tsan)
	$(V_tsan_CC) $(V_tsan_LDFLAGS) -o $@ $^ $(PROOFS_LIBS)

$(PB)/asan/stress: $(call STRESS_OBJS,asan)
	$(V_asan_CC) $(V_asan_LDFLAGS) -o $@ $^ $(PROOFS_LIBS)

FUZZ_COMMON = $(call objs_of,$(1),$(PT)/cache/tests/fuzz/fuzz_load.c \
		$(SIMDEV_SRC)) $($(1)_ENGINE_OBJS)

$(PB)/fuzz/fuzz-load: $(call FUZZ_COMMON,fuzz) \
		$(call objs_of,fuzz,$(PT)/cache/tests/fuzz/fuzz_libfuzzer.c)
	$(V_fuzz_CC) $(V_fuzz_LDFLAGS) -o $@ $^ $(PROOFS_LIBS)

# Fallback when libFuzzer is missing: the same target, ASan+UBSan, with a
# built-in random mutator.
$(PB)/asan/fuzz-load-standalone: $(call FUZZ_COMMON,asan) \
		$(call objs_of,asan,$(PT)/cache/tests/fuzz/fuzz_main.c)
	$(V_asan_CC) $(V_asan_LDFLAGS) -o $@ $^ $(PROOFS_LIBS)

PROOFS_BINS := $(U)/test_seq $(U)/test_pidlist $(U)/test_simdev $(U)/model \
	$(U)/test_regress $(U)/test_oracles \
	$(U)/crash $(U)/gen-corpus $(PB)/asan/model $(PB)/asan/crash $(PB)/tsan/stress \
	$(PB)/asan/stress

.PHONY: proofs-all proofs-check proofs-unit model-check model-long crash-long \
	crash-check fuzz-smoke stress-check proofs-clean proofs-results-reset

proofs-all: $(PROOFS_BINS)

# ---------------------------------------------------------------- running
# $(call prun,NAME,COMMAND): run, log, record PASS/FAIL, never stop make.
PRUN := $(PT)/cache/tests/simdev/prun.sh
prun = @$(PRUN) $(PROOFS_RESULTS) $(PB)/logs $(1) $(2)

proofs-results-reset:
	@mkdir -p $(PB)/logs
	@: > $(PROOFS_RESULTS)

proofs-unit: $(U)/test_seq $(U)/test_pidlist $(U)/test_simdev \
		$(PB)/tsan/test_seq $(PB)/tsan/test_pidlist
	$(call prun,unit-seq,$(U)/test_seq)
	$(call prun,unit-pidlist,$(U)/test_pidlist)
	$(call prun,unit-seq-tsan,env TSAN_OPTIONS=halt_on_error=1 $(PB)/tsan/test_seq)
	$(call prun,unit-pidlist-tsan,env TSAN_OPTIONS=halt_on_error=1 $(PB)/tsan/test_pidlist)
	$(call prun,unit-simdev,$(U)/test_simdev)

model-check: $(U)/model $(PB)/asan/model $(U)/test_regress $(PB)/asan/test_regress \
		$(U)/test_oracles
	$(call prun,oracle-self-tests,$(U)/test_oracles)
	$(call prun,engine-regressions,$(U)/test_regress)
	$(call prun,engine-regressions-asan,$(PB)/asan/test_regress)
	$(call prun,model-inline,$(U)/model --seed $(MODEL_SEED) --ops $(MODEL_OPS))
	$(call prun,model-queued,$(U)/model --seed $(MODEL_SEED) --ops $(MODEL_OPS) --queued)
	$(call prun,model-crash,$(U)/model --seed $(MODEL_SEED) --ops $(MODEL_OPS) --crash)
	$(call prun,model-3dev-16k,$(U)/model --seed $(MODEL_SEED) --ops $(MODEL_OPS) --ndev 3 --block-size 16384 --queued --crash)
	$(call prun,model-err-cache,$(U)/model --seed $(MODEL_SEED) --ops 60000 --errors cache)
	$(call prun,model-err-backing,$(U)/model --seed $(MODEL_SEED) --ops 60000 --errors backing)
	$(call prun,model-err-lossy,$(U)/model --seed $(MODEL_SEED) --ops 40000 --errors lossy --crash)
	$(call prun,model-asan,$(PB)/asan/model --seed $(MODEL_SEED) --ops 30000 --queued --crash)
	$(call prun,model-s3fifo,$(U)/model --seed $(MODEL_SEED) --ops $(MODEL_OPS) --queued --crash --policy s3fifo)
	$(call prun,model-tinylfu,$(U)/model --seed $(MODEL_SEED) --ops $(MODEL_OPS) --queued --crash --policy tinylfu)
	$(call prun,model-s3fifo-err,$(U)/model --seed $(MODEL_SEED) --ops 40000 --errors lossy --crash --policy s3fifo)
	$(call prun,model-tinylfu-asan,$(PB)/asan/model --seed $(MODEL_SEED) --ops 30000 --queued --crash --policy tinylfu)
	@# seeds that found bugs in make model-sweep (2026-11-27): a discard
	@# racing readahead (engine), a pending discard across a detach (model)
	$(call prun,model-sweep-seed1-tinylfu,$(U)/model --seed 1 --ops 150000 --queued --crash --policy tinylfu)
	$(call prun,model-sweep-seed11,$(U)/model --seed 11 --ops 150000 --queued --crash)
	@# (2026-11-27, second sweep) the model: requests in flight when an
	@# error window opens may fail like the window's own
	@# (the same sweep) engine: a write over a lost marker cleared its
	@# record before its data was durable (test_regress has the case)
	$(call prun,model-sweep-seed32-lossy,$(U)/model --seed 32 --ops 150000 --queued --crash --policy lru --errors lossy)
	$(call prun,model-sweep-seed120-lossy,$(U)/model --seed 120 --ops 150000 --queued --crash --policy fifo --errors lossy)
	@# (2026-11-28, cache and backing error sweeps) the model: a forced
	@# detach's resync forgot a discard still in the disk's volatile cache
	@# under a later unflushed write (simdev_pending_zeroes)
	$(call prun,model-sweep-seed10-cache,$(U)/model --seed 10 --ops 150000 --queued --crash --policy lru --errors cache)
	$(call prun,model-sweep-seed5-backing,$(U)/model --seed 5 --ops 150000 --queued --crash --policy lru --errors backing)

model-long: $(U)/model
	$(U)/model --ops $(MODEL_LONG_OPS) --crash
	$(U)/model --ops $(MODEL_LONG_OPS) --queued --crash

model-sweep: $(U)/model
	@sh $(PT)/cache/tests/simdev/sweep.sh $(U)/model $(or $(SWEEP_FIRST),1) \
		$(or $(SWEEP_SEEDS),200) $(or $(SWEEP_OPS),150000) \
		$(or $(SWEEP_ERRORS),sparse)

crash-check: $(U)/crash $(PB)/asan/crash
	$(call prun,crash-drop,$(U)/crash --stride $(CRASH_STRIDE) --cut-mode drop)
	$(call prun,crash-random,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode random --seed 2)
	$(call prun,crash-torn,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode torn --seed 3)
	$(call prun,crash-queued,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode torn --queued --seed 4)
	$(call prun,crash-16k,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode random --queued --block-size 16384 --seed 6)
	$(call prun,crash-asan,$(PB)/asan/crash --stride 5 --cut-mode torn --queued --seed 7)
	$(call prun,crash-every-write-errors,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at write --errors single --cut-mode torn --queued --seed 8)
	$(call prun,crash-every-completion-errors,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at completion --errors single --cut-mode torn --queued --seed 9)
	$(call prun,crash-repeated-errors,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at write --errors repeated --cut-mode random --queued --seed 10)
	$(call prun,crash-enomem,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at write --errors enomem --cut-mode torn --queued --seed 11)
	$(call prun,crash-every-completion,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at completion --cut-mode torn --seed 5)
	$(call prun,crash-s3fifo,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode torn --queued --seed 12 --policy s3fifo)
	$(call prun,crash-tinylfu,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode torn --queued --seed 13 --policy tinylfu)
	$(call prun,crash-flush-errors,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at write --errors flush --cut-mode torn --queued --seed 14)
	$(call prun,crash-flush-errors-9,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at write --errors flush --cut-mode torn --queued --seed 9 --scenario workload-clean)
	$(call prun,crash-lossy,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-at completion --errors lossy --cut-mode random --queued --seed 19)
	$(call prun,crash-damaged-sb,$(U)/crash --stride $(CRASH_RANDOM_STRIDE) --cut-mode torn --seed 15 --damage-sb)
	$(call prun,crash-lazy-shutdown,$(U)/crash --scenario lazy-shutdown --stride 1 --cut-at completion --cut-mode random --seed 16)
	$(call prun,crash-lazy-shutdown-torn,$(U)/crash --scenario lazy-shutdown --stride 1 --cut-at completion --cut-mode torn --queued --seed 17)

# Every cut point of every kind, with and without errors (~10-20 min).
crash-long: $(U)/crash
	$(U)/crash --stride 1 --cut-at write --cut-mode torn --queued --seed 21
	$(U)/crash --stride 1 --cut-at completion --cut-mode torn --queued --seed 22
	$(U)/crash --stride 1 --cut-at write --errors single --cut-mode torn --queued --seed 23
	$(U)/crash --stride 1 --cut-at completion --errors repeated --cut-mode random --queued --seed 24
	$(U)/crash --stride 1 --cut-at write --errors enomem --cut-mode torn --queued --seed 25
	$(U)/crash --stride 1 --cut-at write --errors flush --cut-mode torn --queued --seed 26
	$(U)/crash --stride 1 --cut-at completion --errors flush --cut-mode random --queued --seed 27
	$(U)/crash --stride 1 --cut-at write --errors lossy --cut-mode torn --queued --seed 30
	$(U)/crash --stride 1 --cut-mode torn --queued --seed 28 --damage-sb
	$(U)/crash --stride 1 --cut-at write --errors single --cut-mode torn --queued --seed 29 --damage-sb

FUZZ_CORPUS := $(PB)/fuzz-corpus
FUZZ_WORK := $(PB)/fuzz-work

$(FUZZ_CORPUS)/.done: $(U)/gen-corpus
	@rm -rf $(FUZZ_CORPUS) && mkdir -p $(FUZZ_CORPUS)
	$(U)/gen-corpus $(FUZZ_CORPUS)
	@touch $@

# libFuzzer if clang can link it, else the built-in mutator.
fuzz-smoke: $(FUZZ_CORPUS)/.done
	@mkdir -p $(PB)/logs
	@if $(MAKE) -s -f $(PROOFS_MK) $(PB)/fuzz/fuzz-load >$(PB)/logs/fuzz-build.log 2>&1; then \
		rm -rf $(FUZZ_WORK); mkdir -p $(FUZZ_WORK); \
		$(PRUN) $(PROOFS_RESULTS) $(PB)/logs fuzz-libfuzzer \
		  $(PB)/fuzz/fuzz-load -max_total_time=$(FUZZ_SECONDS) \
		  -max_len=32769 -timeout=10 -rss_limit_mb=1024 \
		  -artifact_prefix=$(PB)/fuzz-crash- -print_final_stats=1 \
		  $(FUZZ_WORK) $(FUZZ_CORPUS); \
	else \
		echo "fuzz-smoke: libFuzzer unavailable (see $(PB)/logs/fuzz-build.log), using the built-in mutator"; \
		$(MAKE) -s -f $(PROOFS_MK) $(PB)/asan/fuzz-load-standalone && \
		$(PRUN) $(PROOFS_RESULTS) $(PB)/logs fuzz-standalone \
		  $(PB)/asan/fuzz-load-standalone --seconds $(FUZZ_SECONDS) $(FUZZ_CORPUS); \
	fi

stress-check: $(PB)/tsan/stress $(PB)/asan/stress
	$(call prun,stress-tsan,env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(PB)/tsan/stress --seed 1 --ops $(STRESS_OPS) --threads $(STRESS_THREADS))
	$(call prun,stress-asan,$(PB)/asan/stress --seed 1 --ops $(STRESS_OPS) --threads $(STRESS_THREADS))
	$(call prun,stress-tsan-shared-blocks,env TSAN_OPTIONS=halt_on_error=1 $(PB)/tsan/stress --seed 2 --ops $(STRESS_OPS) --threads $(STRESS_THREADS) --interleave)
	$(call prun,stress-asan-shared-blocks,$(PB)/asan/stress --seed 2 --ops $(STRESS_OPS) --threads $(STRESS_THREADS) --interleave)
	$(call prun,stress-tsan-s3fifo,env TSAN_OPTIONS=halt_on_error=1 $(PB)/tsan/stress --seed 3 --ops $(STRESS_OPS) --threads $(STRESS_THREADS) --policy s3fifo)
	$(call prun,stress-asan-tinylfu,$(PB)/asan/stress --seed 4 --ops $(STRESS_OPS) --threads $(STRESS_THREADS) --policy tinylfu)

# Each step records its result.  With PROOFS_JOBS of 2 or more (the
# default: make check's time) every binary is built first with that many
# jobs, then crash-check runs beside the other steps (about half the
# time each; they share no file once built); its output follows theirs.
PROOFS_JOBS ?= 2
proofs-check: proofs-results-reset
	@if [ $(PROOFS_JOBS) -gt 1 ]; then \
		$(MAKE) --no-print-directory -f $(PROOFS_MK) -j$(PROOFS_JOBS) proofs-all || \
			echo "FAIL proofs-build (make -j$(PROOFS_JOBS) proofs-all)" >> $(PROOFS_RESULTS); \
	fi
	@steps() { for t in "$$@"; do \
		$(MAKE) --no-print-directory -f $(PROOFS_MK) $$t || \
			echo "FAIL $$t (did not build or run)" >> $(PROOFS_RESULTS); \
	done; }; \
	if [ $(PROOFS_JOBS) -gt 1 ]; then \
		steps crash-check > $(PB)/logs/crash-check.out 2>&1 & \
		steps proofs-unit model-check fuzz-smoke stress-check; \
		wait; cat $(PB)/logs/crash-check.out; \
	else \
		steps proofs-unit model-check crash-check fuzz-smoke stress-check; \
	fi
	@$(PRUN) --summary $(PROOFS_RESULTS)

proofs-clean:
	rm -rf $(PB)
