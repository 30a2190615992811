// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for vc_pidlist, the allow/deny lists of processes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "vc_pidlist.h"

/* An injectable "process table": a pid is alive when its bit is set. */
struct fake_procs {
	unsigned char alive[VC_PID_MAX + 1];
	unsigned long calls;
};

static bool fake_alive(void *ctx, u64 pid)
{
	struct fake_procs *fp = ctx;

	__atomic_add_fetch(&fp->calls, 1, __ATOMIC_RELAXED);
	return pid <= VC_PID_MAX &&
	       __atomic_load_n(&fp->alive[pid], __ATOMIC_RELAXED);
}

static void set_alive(struct fake_procs *fp, s32 pid, bool on)
{
	__atomic_store_n(&fp->alive[pid], on, __ATOMIC_RELAXED);
}

struct fixture {
	struct vc_pidlist pl;
	struct fake_procs procs;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || vc_pidlist_init(&f->pl, 8, fake_alive, &f->procs))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	vc_pidlist_destroy(&f->pl);
	free(f);
	return 0;
}

static void alive_range(struct fixture *f, s32 from, s32 to)
{
	s32 p;

	for (p = from; p <= to; p++)
		set_alive(&f->procs, p, true);
}

static void test_init_validation(void **st)
{
	static struct vc_pidlist pl;

	(void)st;
	assert_int_equal(vc_pidlist_init(&pl, 0, NULL, NULL), -EINVAL);
	assert_int_equal(vc_pidlist_init(&pl, VC_PIDLIST_MAX + 1, NULL, NULL),
			 -EINVAL);
	assert_int_equal(vc_pidlist_init(&pl, VC_PIDLIST_MAX, NULL, NULL), 0);
	assert_int_equal(vc_pidlist_mode(&pl), VC_PID_MODE_CACHE_ALL);
	assert_int_equal(vc_pidlist_count(&pl, VC_PID_ALLOW), 0);
	assert_int_equal(vc_pidlist_count(&pl, VC_PID_DENY), 0);
	/* no callback: nothing expires, adding any valid pid works */
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, 12345), 0);
	assert_int_equal(vc_pidlist_expire(&pl), 0);
	assert_int_equal(vc_pidlist_count(&pl, VC_PID_DENY), 1);
	vc_pidlist_destroy(&pl);
}

static void test_empty_lists(void **state)
{
	struct fixture *f = *state;

	assert_true(vc_pidlist_should_cache(&f->pl, 10, 10));
	assert_true(vc_pidlist_should_cache(&f->pl, 11, 10));
	assert_int_equal(vc_pidlist_set_mode(&f->pl, VC_PID_MODE_CACHE_NONE),
			 0);
	assert_false(vc_pidlist_should_cache(&f->pl, 10, 10));
	assert_int_equal(vc_pidlist_set_mode(&f->pl, (enum vc_pid_mode)7),
			 -EINVAL);
	assert_int_equal(vc_pidlist_mode(&f->pl), VC_PID_MODE_CACHE_NONE);
	assert_int_equal(vc_pidlist_set_mode(&f->pl, VC_PID_MODE_CACHE_ALL),
			 0);
	assert_true(vc_pidlist_should_cache(&f->pl, 10, 10));
}

/* Process 100 with threads 101, 102; process 200 with thread 201. */
static void test_deny_pid_and_tgid(void **state)
{
	struct fixture *f = *state;

	alive_range(f, 100, 300);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 100), 0);
	/* the whole process 100 is denied, through its tgid */
	assert_false(vc_pidlist_should_cache(&f->pl, 100, 100));
	assert_false(vc_pidlist_should_cache(&f->pl, 101, 100));
	assert_false(vc_pidlist_should_cache(&f->pl, 102, 100));
	assert_true(vc_pidlist_should_cache(&f->pl, 200, 200));
	/* denying one thread only covers that thread */
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 201), 0);
	assert_false(vc_pidlist_should_cache(&f->pl, 201, 200));
	assert_true(vc_pidlist_should_cache(&f->pl, 200, 200));
	assert_true(vc_pidlist_should_cache(&f->pl, 202, 200));
	assert_true(vc_pidlist_contains(&f->pl, VC_PID_DENY, 101, 100));
	assert_false(vc_pidlist_contains(&f->pl, VC_PID_ALLOW, 101, 100));
	assert_false(vc_pidlist_contains(&f->pl, (enum vc_pid_list)5, 100,
					 100));
	/* removing the entry lifts the ban */
	assert_int_equal(vc_pidlist_del(&f->pl, VC_PID_DENY, 100), 0);
	assert_true(vc_pidlist_should_cache(&f->pl, 101, 100));
}

static void test_allow_mode(void **state)
{
	struct fixture *f = *state;

	alive_range(f, 1, 1000);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, 500), 0);
	/* allow list means nothing while caching everything */
	assert_true(vc_pidlist_should_cache(&f->pl, 42, 42));
	assert_int_equal(vc_pidlist_set_mode(&f->pl, VC_PID_MODE_CACHE_NONE),
			 0);
	assert_false(vc_pidlist_should_cache(&f->pl, 42, 42));
	assert_true(vc_pidlist_should_cache(&f->pl, 500, 500));
	assert_true(vc_pidlist_should_cache(&f->pl, 501, 500));
	assert_true(vc_pidlist_should_cache(&f->pl, 500, 499));
	assert_false(vc_pidlist_should_cache(&f->pl, 499, 499));
	assert_true(vc_pidlist_should_cache(&f->pl, 499, 500));
	/* deny wins over allow */
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 501), 0);
	assert_false(vc_pidlist_should_cache(&f->pl, 501, 500));
	assert_true(vc_pidlist_should_cache(&f->pl, 502, 500));
	/* and in cache-all mode the deny entry still holds */
	assert_int_equal(vc_pidlist_set_mode(&f->pl, VC_PID_MODE_CACHE_ALL),
			 0);
	assert_false(vc_pidlist_should_cache(&f->pl, 501, 500));
	assert_true(vc_pidlist_should_cache(&f->pl, 42, 42));
}

static void test_errors(void **state)
{
	struct fixture *f = *state;

	alive_range(f, 1, 100);
	set_alive(&f->procs, VC_PID_MAX, true);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 0), -EINVAL);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, -5), -EINVAL);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, VC_PID_MAX + 1),
			 -EINVAL);
	assert_int_equal(vc_pidlist_add(&f->pl,
					(enum vc_pid_list)VC_PID_NR_LISTS, 5),
			 -EINVAL);
	assert_int_equal(vc_pidlist_add(&f->pl, (enum vc_pid_list)-1, 5),
			 -EINVAL);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, VC_PID_MAX), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 7), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 7), -EEXIST);
	/* the same pid may be on both lists */
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, 7), 0);
	/* a process that does not exist */
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, 5000), -ESRCH);
	assert_int_equal(vc_pidlist_del(&f->pl, VC_PID_ALLOW, 8), -ENOENT);
	assert_int_equal(vc_pidlist_del(&f->pl, VC_PID_ALLOW, 0), -EINVAL);
	assert_int_equal(vc_pidlist_del(&f->pl, (enum vc_pid_list)VC_PID_NR_LISTS, 7),
			 -EINVAL);
	assert_int_equal(vc_pidlist_clear(&f->pl, (enum vc_pid_list)VC_PID_NR_LISTS),
			 -EINVAL);
	assert_int_equal(vc_pidlist_get(&f->pl, (enum vc_pid_list)VC_PID_NR_LISTS, NULL, 0),
			 -EINVAL);
	assert_int_equal(vc_pidlist_count(&f->pl, (enum vc_pid_list)VC_PID_NR_LISTS), 0);
	assert_int_equal(vc_pidlist_del(&f->pl, VC_PID_ALLOW, 7), 0);
	assert_int_equal(vc_pidlist_del(&f->pl, VC_PID_ALLOW, 7), -ENOENT);
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_DENY), 2);
}

static void test_full_list(void **state)
{
	struct fixture *f = *state;
	s32 p;

	alive_range(f, 1, 100);
	for (p = 10; p < 18; p++)
		assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, p), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 50), -ENOSPC);
	/* a duplicate is reported as such even when full */
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 12), -EEXIST);
	/* the other list has its own room */
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, 50), 0);
	assert_true(vc_pidlist_should_cache(&f->pl, 50, 50));
	assert_false(vc_pidlist_should_cache(&f->pl, 17, 17));
	assert_int_equal(vc_pidlist_del(&f->pl, VC_PID_DENY, 13), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 50), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 51), -ENOSPC);
	assert_int_equal(vc_pidlist_clear(&f->pl, VC_PID_DENY), 0);
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_DENY), 0);
	assert_true(vc_pidlist_should_cache(&f->pl, 17, 17));
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 51), 0);
}

static void test_max_capacity(void **st)
{
	static struct vc_pidlist pl;
	static u64 out[VC_PIDLIST_MAX];
	s32 p;
	int i;

	(void)st;
	assert_int_equal(vc_pidlist_init(&pl, VC_PIDLIST_MAX, NULL, NULL), 0);
	/* insert in a scrambled order */
	for (i = 0; i < VC_PIDLIST_MAX; i++) {
		p = (s32)((i * 617) % VC_PIDLIST_MAX) * 3 + 1;
		assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, p), 0);
	}
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, 2), -ENOSPC);
	assert_int_equal(vc_pidlist_get(&pl, VC_PID_DENY, out, VC_PIDLIST_MAX),
			 VC_PIDLIST_MAX);
	for (i = 0; i < VC_PIDLIST_MAX; i++)
		assert_int_equal(out[i], i * 3 + 1);
	for (p = 1; p <= VC_PIDLIST_MAX * 3 + 3; p++)
		assert_int_equal(vc_pidlist_should_cache(&pl, p, p),
				 p > VC_PIDLIST_MAX * 3 || p % 3 != 1);
	vc_pidlist_destroy(&pl);
}

static void test_get_sorted_and_truncated(void **state)
{
	struct fixture *f = *state;
	s32 in[] = { 77, 3, 1000, 45, 9 };
	u64 out[8] = { 0 };
	unsigned int i;

	alive_range(f, 1, 1000);
	for (i = 0; i < 5; i++)
		assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, in[i]),
				 0);
	assert_int_equal(vc_pidlist_get(&f->pl, VC_PID_ALLOW, out, 8), 5);
	assert_int_equal(out[0], 3);
	assert_int_equal(out[1], 9);
	assert_int_equal(out[2], 45);
	assert_int_equal(out[3], 77);
	assert_int_equal(out[4], 1000);
	out[2] = -1;
	assert_int_equal(vc_pidlist_get(&f->pl, VC_PID_ALLOW, out, 2), 5);
	assert_int_equal(out[2], -1);	/* not written past max */
	assert_int_equal(vc_pidlist_get(&f->pl, VC_PID_ALLOW, NULL, 0), 5);
}

static void test_expiry(void **state)
{
	struct fixture *f = *state;
	u64 out[8];

	alive_range(f, 1, 100);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 10), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 20), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 30), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, 20), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, 40), 0);
	assert_int_equal(vc_pidlist_expire(&f->pl), 0);
	/* processes 20 and 30 exit */
	set_alive(&f->procs, 20, false);
	set_alive(&f->procs, 30, false);
	assert_int_equal(vc_pidlist_expire(&f->pl), 3);
	assert_int_equal(vc_pidlist_expired(&f->pl), 3);
	assert_int_equal(vc_pidlist_get(&f->pl, VC_PID_DENY, out, 8), 1);
	assert_int_equal(out[0], 10);
	assert_int_equal(vc_pidlist_get(&f->pl, VC_PID_ALLOW, out, 8), 1);
	assert_int_equal(out[0], 40);
	/* a new process reusing a freed pid is no longer denied */
	set_alive(&f->procs, 30, true);
	assert_true(vc_pidlist_should_cache(&f->pl, 30, 30));
	/* the last deny entry expiring restores the no-lock fast path */
	set_alive(&f->procs, 10, false);
	assert_int_equal(vc_pidlist_expire(&f->pl), 1);
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_DENY), 0);
	assert_true(vc_pidlist_should_cache(&f->pl, 10, 10));
	assert_int_equal(vc_pidlist_expire(&f->pl), 0);
	assert_int_equal(vc_pidlist_expired(&f->pl), 4);
}

/* Every entry of a full list dies at once. */
static void test_expire_all(void **state)
{
	struct fixture *f = *state;
	s32 p;

	alive_range(f, 1, 100);
	for (p = 1; p <= 8; p++) {
		assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, p), 0);
		assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_ALLOW, p * 2),
				 0);
	}
	for (p = 1; p <= 100; p++)
		set_alive(&f->procs, p, false);
	assert_int_equal(vc_pidlist_expire(&f->pl), 16);
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_DENY), 0);
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_ALLOW), 0);
}

static void test_tick_interval(void **state)
{
	struct fixture *f = *state;
	const u64 s = 1000000000ULL;

	alive_range(f, 1, 100);
	vc_pidlist_set_expiry_interval(&f->pl, 5 * s);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 10), 0);
	assert_int_equal(vc_pidlist_add(&f->pl, VC_PID_DENY, 11), 0);
	assert_int_equal(vc_pidlist_tick(&f->pl, 100 * s), 0);	/* runs */
	set_alive(&f->procs, 10, false);
	assert_int_equal(vc_pidlist_tick(&f->pl, 102 * s), 0);	/* too soon */
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_DENY), 2);
	assert_int_equal(vc_pidlist_tick(&f->pl, 105 * s), 1);	/* due */
	set_alive(&f->procs, 11, false);
	assert_int_equal(vc_pidlist_tick(&f->pl, 106 * s), 0);
	/* a clock that went backwards does not block expiry forever */
	assert_int_equal(vc_pidlist_tick(&f->pl, 1 * s), 1);
	assert_int_equal(vc_pidlist_count(&f->pl, VC_PID_DENY), 0);
}

/* The real callback shape userspace uses: kill(pid, 0). */
static bool kill_alive(void *ctx, u64 pid)
{
	(void)ctx;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static void test_real_process_expiry(void **st)
{
	static struct vc_pidlist pl;
	pid_t child;

	(void)st;
	assert_int_equal(vc_pidlist_init(&pl, 4, kill_alive, NULL), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, child), 0);
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, getpid()), 0);
	assert_int_equal(vc_pidlist_expire(&pl), 0);
	assert_false(vc_pidlist_should_cache(&pl, child, child));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(vc_pidlist_expire(&pl), 1);
	assert_true(vc_pidlist_should_cache(&pl, child, child));
	assert_false(vc_pidlist_should_cache(&pl, getpid(), getpid()));
	/* and it cannot be added back while it does not exist */
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, child), -ESRCH);
	vc_pidlist_destroy(&pl);
}

/* Random operations against a reference model (a bitmap per list). */
static void test_random_vs_model(void **st)
{
	static struct vc_pidlist pl;
	static struct fake_procs procs;
	static unsigned char model[2][512];
	unsigned int seed = 12345, n[2] = { 0, 0 }, cap = 64;
	int op, i, mode = 0;

	(void)st;
	assert_int_equal(vc_pidlist_init(&pl, cap, fake_alive, &procs), 0);
	for (i = 1; i < 512; i++)
		procs.alive[i] = 1;
	for (op = 0; op < 200000; op++) {
		unsigned int r = rand_r(&seed);
		int l = r & 1;
		s32 pid = (s32)((r >> 1) % 511) + 1;
		s32 tgid = (s32)((r >> 10) % 511) + 1;
		int ret;
		bool want;

		switch ((r >> 20) % 10) {
		case 0: case 1: case 2:
			ret = vc_pidlist_add(&pl, l, pid);
			if (!procs.alive[pid]) {
				assert_int_equal(ret, -ESRCH);
			} else if (model[l][pid]) {
				assert_int_equal(ret, -EEXIST);
			} else if (n[l] >= cap) {
				assert_int_equal(ret, -ENOSPC);
			} else {
				assert_int_equal(ret, 0);
				model[l][pid] = 1;
				n[l]++;
			}
			break;
		case 3: case 4:
			ret = vc_pidlist_del(&pl, l, pid);
			assert_int_equal(ret, model[l][pid] ? 0 : -ENOENT);
			if (model[l][pid]) {
				model[l][pid] = 0;
				n[l]--;
			}
			break;
		case 5:
			procs.alive[pid] = !procs.alive[pid];
			if (r & 0x800000) {
				unsigned int k, dead = 0, j;

				for (k = 0; k < 2; k++)
					for (j = 1; j < 512; j++)
						if (model[k][j] &&
						    !procs.alive[j]) {
							model[k][j] = 0;
							n[k]--;
							dead++;
						}
				assert_int_equal(vc_pidlist_expire(&pl), dead);
			}
			break;
		case 6:
			mode = !mode;
			assert_int_equal(vc_pidlist_set_mode(&pl, mode), 0);
			break;
		default:
			if (model[VC_PID_DENY][pid] || model[VC_PID_DENY][tgid])
				want = false;
			else if (mode)
				want = model[VC_PID_ALLOW][pid] ||
				       model[VC_PID_ALLOW][tgid];
			else
				want = true;
			assert_int_equal(vc_pidlist_should_cache(&pl, pid,
								 tgid), want);
			break;
		}
		if (op % 997 == 0) {
			assert_int_equal(vc_pidlist_count(&pl, 0), n[0]);
			assert_int_equal(vc_pidlist_count(&pl, 1), n[1]);
		}
	}
	vc_pidlist_destroy(&pl);
}

/*
 * Readers look up pids that nobody ever touches (their answer must never
 * change) while writers add, remove and expire other pids.
 */
#define RD_THREADS	4
#define WR_ITERS	5000

struct conc {
	struct vc_pidlist pl;
	struct fake_procs procs;
	int stop;
	long wrong;
};

static void *reader(void *p)
{
	struct conc *c = p;
	long n = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) || n < 1000) {
		/* 5 is denied for good; 6 never listed */
		if (vc_pidlist_should_cache(&c->pl, 5, 5))
			__atomic_add_fetch(&c->wrong, 1, __ATOMIC_RELAXED);
		if (vc_pidlist_should_cache(&c->pl, 6006, 5))
			__atomic_add_fetch(&c->wrong, 1, __ATOMIC_RELAXED);
		if (!vc_pidlist_should_cache(&c->pl, 6, 6))
			__atomic_add_fetch(&c->wrong, 1, __ATOMIC_RELAXED);
		/* leave the writer some CPU on small (or sanitized) machines */
		if (++n % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void *writer(void *p)
{
	struct conc *c = p;
	int i;

	for (i = 0; i < WR_ITERS; i++) {
		s32 pid = 100 + i % 50;

		vc_pidlist_add(&c->pl, VC_PID_DENY, pid);
		if (i % 3 == 0)
			vc_pidlist_del(&c->pl, VC_PID_DENY, pid);
		if (i % 101 == 0) {
			set_alive(&c->procs, pid, false);
			vc_pidlist_expire(&c->pl);
			set_alive(&c->procs, pid, true);
		}
	}
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_concurrent_readers_writers(void **st)
{
	struct conc *c = calloc(1, sizeof(*c));
	pthread_t rd[RD_THREADS], wr;
	int i;

	(void)st;
	assert_non_null(c);
	assert_int_equal(vc_pidlist_init(&c->pl, 64, fake_alive, &c->procs),
			 0);
	for (i = 1; i < 200; i++)
		c->procs.alive[i] = 1;
	assert_int_equal(vc_pidlist_add(&c->pl, VC_PID_DENY, 5), 0);
	for (i = 0; i < RD_THREADS; i++)
		assert_int_equal(pthread_create(&rd[i], NULL, reader, c), 0);
	assert_int_equal(pthread_create(&wr, NULL, writer, c), 0);
	pthread_join(wr, NULL);
	for (i = 0; i < RD_THREADS; i++)
		pthread_join(rd[i], NULL);
	assert_int_equal(c->wrong, 0);
	assert_true(vc_pidlist_contains(&c->pl, VC_PID_DENY, 5, 5));
	vc_pidlist_destroy(&c->pl);
	free(c);
}

/*
 * Keys as the kernel uses them: opaque ids holding a reference each (the
 * put callback must see every entry that leaves, exactly once), and
 * cgroups in a hierarchy: 0x1000 the root, 0x2000 and 0x3000 its
 * children, 0x2100 a child of 0x2000.  Ids beyond VC_PID_MAX are fine.
 */
static int key_refs[8];
static u64 key_alive_mask = ~0ULL;

static int key_slot(u64 k)
{
	return (int)((k >> 40) & 7);
}

static void key_put(int list, u64 id)
{
	(void)list;
	key_refs[key_slot(id)]--;
}

static u64 key_parent(u64 cg)
{
	if (cg == 0x2100)
		return 0x2000;
	return cg == 0x1000 ? 0 : 0x1000;
}

static bool key_alive(void *ctx, u64 id)
{
	(void)ctx;
	return (key_alive_mask >> key_slot(id)) & 1;
}

static void test_keys_and_cgroups(void **st)
{
	static struct vc_pidlist pl;
	const u64 p1 = 1ULL << 40 | 0x10, p2 = 2ULL << 40 | 0x10;
	const u64 p3 = 3ULL << 40 | 0x10;
	int i;

	(void)st;
	assert_int_equal(vc_pidlist_init(&pl, 4, key_alive, NULL), 0);
	vc_pidlist_set_keys(&pl, key_put, key_parent);
	for (i = 1; i <= 3; i++)
		key_refs[i] = 1;
	/* two keys with the same low bits are two processes */
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, p1), 0);
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, p2), 0);
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_DENY, p1), -EEXIST);
	assert_false(vc_pidlist_should_cache(&pl, p1, p1));
	assert_true(vc_pidlist_should_cache(&pl, p3, p3));
	/* the process of p1 exits: dropped, its reference put once */
	key_alive_mask &= ~(1ULL << 1);
	assert_int_equal(vc_pidlist_expire(&pl), 1);
	assert_int_equal(key_refs[1], 0);
	assert_int_equal(vc_pidlist_count(&pl, VC_PID_DENY), 1);
	key_alive_mask = ~0ULL;
	assert_int_equal(vc_pidlist_del(&pl, VC_PID_DENY, p2), 0);
	assert_int_equal(key_refs[2], 0);
	/* cgroups: an entry covers its descendants, not its siblings */
	assert_int_equal(vc_pidlist_add(&pl, VC_CG_DENY, 0x2000), 0);
	assert_false(vc_pidlist_classify(&pl, p3, p3, 0x2000));
	assert_false(vc_pidlist_classify(&pl, p3, p3, 0x2100));
	assert_true(vc_pidlist_classify(&pl, p3, p3, 0x3000));
	assert_true(vc_pidlist_classify(&pl, p3, p3, 0x1000));
	assert_true(vc_pidlist_classify(&pl, p3, p3, 0));
	/* cgroup entries never expire, nor ask whether they are alive */
	key_alive_mask = 0;
	assert_int_equal(vc_pidlist_expire(&pl), 0);
	key_alive_mask = ~0ULL;
	/* cache-none: an allowed cgroup admits, deny still wins */
	assert_int_equal(vc_pidlist_set_mode(&pl, VC_PID_MODE_CACHE_NONE), 0);
	assert_int_equal(vc_pidlist_add(&pl, VC_CG_ALLOW, 0x1000), 0);
	assert_true(vc_pidlist_classify(&pl, p3, p3, 0x3000));
	assert_false(vc_pidlist_classify(&pl, p3, p3, 0x2100));
	assert_false(vc_pidlist_classify(&pl, p3, p3, 0));
	assert_int_equal(vc_pidlist_add(&pl, VC_PID_ALLOW, p3), 0);
	assert_true(vc_pidlist_classify(&pl, p3, p3, 0));
	assert_int_equal(vc_pidlist_clear(&pl, VC_CG_DENY), 0);
	assert_true(vc_pidlist_classify(&pl, p3, p3, 0x2100));
	/* destroy puts what is left: p3 */
	vc_pidlist_destroy(&pl);
	assert_int_equal(key_refs[3], 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_validation),
		T(test_empty_lists),
		T(test_deny_pid_and_tgid),
		T(test_allow_mode),
		T(test_errors),
		T(test_full_list),
		cmocka_unit_test(test_max_capacity),
		T(test_get_sorted_and_truncated),
		T(test_expiry),
		T(test_expire_all),
		T(test_tick_interval),
		cmocka_unit_test(test_real_process_expiry),
		cmocka_unit_test(test_random_vs_model),
		cmocka_unit_test(test_concurrent_readers_writers),
		cmocka_unit_test(test_keys_and_cgroups),
	};

	return cmocka_run_group_tests_name("vc_pidlist", tests, NULL, NULL);
}
