// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace implementation of the vcache environment (see vc_env.h and
 * vc_posix.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <signal.h>
#include <errno.h>

#include "vc_posix.h"
#include "vc_pidlist.h"

/* ---------------------------------------------------------------- log */
static int log_level = 1;
static unsigned long log_errors;
static char last_error[256];
static pthread_mutex_t last_error_lock = PTHREAD_MUTEX_INITIALIZER;

void vc_posix_set_log_level(int level)
{
	log_level = level;
}

unsigned long vc_posix_log_errors(void)
{
	return __atomic_load_n(&log_errors, __ATOMIC_RELAXED);
}

void vc_posix_last_error(char *buf, size_t size)
{
	pthread_mutex_lock(&last_error_lock);
	snprintf(buf, size, "%s", last_error);
	pthread_mutex_unlock(&last_error_lock);
}

int vc_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

static void vlog(int level, const char *pfx, const char *fmt, va_list ap)
{
	if (log_level < level)
		return;
	fprintf(stderr, "vcache: %s", pfx);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void vc_log_err(const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&log_errors, 1, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	pthread_mutex_lock(&last_error_lock);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	pthread_mutex_unlock(&last_error_lock);
	va_end(ap);
	va_start(ap, fmt);
	vlog(1, "error: ", fmt, ap);
	va_end(ap);
}

void vc_log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(2, "warning: ", fmt, ap);
	va_end(ap);
}

void vc_log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(3, "", fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------- memory */
/* Fault point: I/O-path allocations (not VC_GFP_KERNEL) left to fail. */
static _Atomic unsigned long fail_io_allocs;

void vc_posix_fail_io_allocs(unsigned long n)
{
	atomic_store(&fail_io_allocs, n);
}

/* Count one off @left if it is not 0: true if it was not. */
static bool take_one(_Atomic unsigned long *left)
{
	unsigned long n = atomic_load(left);

	while (n)
		if (atomic_compare_exchange_weak(left, &n, n - 1))
			return true;
	return false;
}

static bool alloc_fails(unsigned int gfp)
{
	return gfp != VC_GFP_KERNEL && take_one(&fail_io_allocs);
}

void *vc_malloc(size_t size, unsigned int gfp)
{
	if (alloc_fails(gfp))
		return NULL;
	return malloc(size ? size : 1);
}

void *vc_zalloc(size_t size, unsigned int gfp)
{
	if (alloc_fails(gfp))
		return NULL;
	return calloc(1, size ? size : 1);
}

void vc_free(void *p)
{
	free(p);
}

int vc_pcpu_init(vc_pcpu_t *p, u32 n)
{
	p->n = n;
	p->v = calloc(n ? n : 1, sizeof(u64));
	return p->v ? 0 : -ENOMEM;
}

void vc_pcpu_exit(vc_pcpu_t *p)
{
	free(p->v);
	p->v = NULL;
}

void vc_pcpu_reset(vc_pcpu_t *p)
{
	u32 i;

	for (i = 0; i < p->n; i++)
		__atomic_store_n(&p->v[i], 0, __ATOMIC_RELAXED);
}

int vc_mempool_init(vc_mempool_t *p, u32 min_nr, size_t size)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->m, NULL);
	p->size = size;
	p->min_nr = min_nr;
	p->reserve = calloc(min_nr ? min_nr : 1, sizeof(void *));
	if (!p->reserve)
		return -ENOMEM;
	while (p->nr < min_nr) {
		p->reserve[p->nr] = calloc(1, size);
		if (!p->reserve[p->nr])
			return -ENOMEM;
		p->nr++;
	}
	return 0;
}

void vc_mempool_exit(vc_mempool_t *p)
{
	while (p->reserve && p->nr)
		free(p->reserve[--p->nr]);
	free(p->reserve);
	p->reserve = NULL;
	pthread_mutex_destroy(&p->m);
}

/* Fresh memory, else the reserve; NULL if neither has an object. */
static void *pool_take(vc_mempool_t *p)
{
	void *o = alloc_fails(VC_GFP_NOIO) ? NULL : calloc(1, p->size);

	if (o)
		return o;
	pthread_mutex_lock(&p->m);
	if (p->nr) {
		o = p->reserve[--p->nr];
		p->reserve_used++;
	}
	pthread_mutex_unlock(&p->m);
	if (o)
		memset(o, 0, p->size);
	return o;
}

void *vc_mempool_alloc(vc_mempool_t *p)
{
	void *o = pool_take(p);

	if (o)
		return o;
	o = calloc(1, p->size);
	if (!o)
		abort();
	return o;
}

/* Fault point: the next @n vc_mempool_try_alloc() calls find nothing. */
static _Atomic unsigned long fail_try_allocs;

void vc_posix_fail_try_allocs(unsigned long n)
{
	atomic_store(&fail_try_allocs, n);
}

unsigned long vc_posix_try_allocs_left(void)
{
	return atomic_load(&fail_try_allocs);
}

void *vc_mempool_try_alloc(vc_mempool_t *p)
{
	return take_one(&fail_try_allocs) ? NULL : pool_take(p);
}

void vc_mempool_free(vc_mempool_t *p, void *obj)
{
	if (!obj)
		return;
	pthread_mutex_lock(&p->m);
	if (p->nr < p->min_nr) {
		p->reserve[p->nr++] = obj;
		obj = NULL;
	}
	pthread_mutex_unlock(&p->m);
	free(obj);
}

void *vc_large_zalloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

void vc_large_free(void *p)
{
	free(p);
}

/* ---------------------------------------------------------- processes */
static bool (*pid_alive_fn)(void *ctx, u64 pid);
static void *pid_alive_ctx;

void vc_posix_set_pid_alive(bool (*fn)(void *ctx, u64 pid), void *ctx)
{
	pid_alive_ctx = ctx;
	__atomic_store_n(&pid_alive_fn, fn, __ATOMIC_SEQ_CST);
}

bool vc_posix_pid_alive_kill(void *ctx, u64 pid)
{
	(void)ctx;
	return pid <= VC_PID_MAX &&
	       (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Process numbers as they are: nothing to hold, no cgroup hierarchy. */
void vc_env_pidlist_keys(struct vc_pidlist *pl)
{
	(void)pl;
}

bool vc_env_pid_alive(void *ctx, u64 pid)
{
	bool (*fn)(void *ctx, u64 pid) =
		__atomic_load_n(&pid_alive_fn, __ATOMIC_SEQ_CST);

	(void)ctx;
	return fn ? fn(pid_alive_ctx, pid) : true;
}

/* --------------------------------------------------------------- time */
static u64 (*clock_fn)(void *ctx);
static void *clock_ctx;

void vc_posix_set_clock(u64 (*fn)(void *ctx), void *ctx)
{
	clock_ctx = ctx;
	__atomic_store_n(&clock_fn, fn, __ATOMIC_SEQ_CST);
}

u64 vc_now_ns(void)
{
	u64 (*fn)(void *ctx) = __atomic_load_n(&clock_fn, __ATOMIC_SEQ_CST);
	struct timespec ts;

	if (fn)
		return fn(clock_ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* --------------------------------------------------------------- work */
static pthread_mutex_t wq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wq_cv = PTHREAD_COND_INITIALIZER;	/* queue changed */
static pthread_cond_t wq_done_cv = PTHREAD_COND_INITIALIZER; /* item done */
static vc_work_t *wq_head;		/* sorted by due_ns, FIFO on ties */
static bool wq_manual;
static bool wq_thread_started;
static pthread_t wq_thread;
static bool (*pump_fn)(void *ctx);
static void *pump_ctx;
static int interrupted;

void vc_posix_set_pump(bool (*pump)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&wq_lock);
	pump_fn = pump;
	pump_ctx = ctx;
	pthread_mutex_unlock(&wq_lock);
}

void vc_posix_interrupt(void)
{
	__atomic_store_n(&interrupted, 1, __ATOMIC_SEQ_CST);
}

void vc_posix_clear_interrupt(void)
{
	__atomic_store_n(&interrupted, 0, __ATOMIC_SEQ_CST);
}

static void wq_unlink(vc_work_t *w)
{
	vc_work_t **pp;

	for (pp = &wq_head; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			w->next = NULL;
			w->queued = false;
			return;
		}
	}
}

static void wq_insert(vc_work_t *w, u64 due)
{
	vc_work_t **pp;

	if (w->queued) {
		if (w->due_ns <= due)
			return;
		wq_unlink(w);
	}
	w->due_ns = due;
	w->queued = true;
	for (pp = &wq_head; *pp && (*pp)->due_ns <= due; pp = &(*pp)->next)
		;
	w->next = *pp;
	*pp = w;
}

/* Pop the first due item and mark it running; wq_lock held. */
static vc_work_t *wq_pop_due(u64 now)
{
	vc_work_t **pp;

	for (pp = &wq_head; *pp; pp = &(*pp)->next) {
		vc_work_t *w = *pp;

		if (w->due_ns > now)
			return NULL;
		if (w->running)
			continue;	/* runs again once the current run ends */
		*pp = w->next;
		w->next = NULL;
		w->queued = false;
		w->running = true;
		return w;
	}
	return NULL;
}

static void wq_run_one(vc_work_t *w)
{
	pthread_mutex_unlock(&wq_lock);
	w->fn(w);
	pthread_mutex_lock(&wq_lock);
	w->running = false;
	pthread_cond_broadcast(&wq_done_cv);
}

static void *wq_thread_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wq_lock);
	for (;;) {
		vc_work_t *w;
		struct timespec ts;

		if (wq_manual) {
			pthread_cond_wait(&wq_cv, &wq_lock);
			continue;
		}
		w = wq_pop_due(vc_now_ns());
		if (w) {
			wq_run_one(w);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		if (!wq_head) {
			ts.tv_sec += 1;
		} else if (clock_fn) {
			ts.tv_nsec += 1000000;	/* poll the virtual clock */
		} else {
			u64 now = vc_now_ns(), d = wq_head->due_ns - now;

			if (wq_head->due_ns <= now)
				d = 100000;
			if (d > 1000000000ull)
				d = 1000000000ull;
			ts.tv_nsec += (long)d;
		}
		while (ts.tv_nsec >= 1000000000L) {
			ts.tv_nsec -= 1000000000L;
			ts.tv_sec++;
		}
		pthread_cond_timedwait(&wq_cv, &wq_lock, &ts);
	}
	return NULL;
}

static void wq_start_thread(void)
{
	if (wq_thread_started || wq_manual)
		return;
	if (pthread_create(&wq_thread, NULL, wq_thread_fn, NULL) == 0) {
		pthread_detach(wq_thread);
		wq_thread_started = true;
	}
}

void vc_posix_set_manual_work(bool manual)
{
	pthread_mutex_lock(&wq_lock);
	wq_manual = manual;
	if (!manual)
		wq_start_thread();
	pthread_cond_broadcast(&wq_cv);
	pthread_mutex_unlock(&wq_lock);
}

unsigned int vc_posix_run_work(void)
{
	unsigned int n = 0;
	vc_work_t *w;

	pthread_mutex_lock(&wq_lock);
	while ((w = wq_pop_due(vc_now_ns())) != NULL) {
		wq_run_one(w);
		n++;
	}
	pthread_mutex_unlock(&wq_lock);
	return n;
}

u64 vc_posix_next_work_ns(void)
{
	u64 due = ~0ull;
	vc_work_t *w;

	pthread_mutex_lock(&wq_lock);
	for (w = wq_head; w; w = w->next) {
		if (!w->running && w->due_ns < due)
			due = w->due_ns;
	}
	pthread_mutex_unlock(&wq_lock);
	return due;
}

void vc_work_init(vc_work_t *w, void (*fn)(vc_work_t *w))
{
	w->fn = fn;
	w->next = NULL;
	w->due_ns = 0;
	w->queued = false;
	w->running = false;
}

void vc_work_queue_delayed(vc_work_t *w, u64 delay_ns)
{
	pthread_mutex_lock(&wq_lock);
	wq_insert(w, vc_now_ns() + delay_ns);
	wq_start_thread();
	pthread_cond_broadcast(&wq_cv);
	pthread_mutex_unlock(&wq_lock);
}

void vc_work_queue(vc_work_t *w)
{
	vc_work_queue_delayed(w, 0);
}

void vc_work_cancel_sync(vc_work_t *w)
{
	pthread_mutex_lock(&wq_lock);
	if (w->queued)
		wq_unlink(w);
	while (w->running)
		pthread_cond_wait(&wq_done_cv, &wq_lock);
	if (w->queued)	/* requeued itself while running */
		wq_unlink(w);
	pthread_mutex_unlock(&wq_lock);
}

void vc_work_destroy(vc_work_t *w)
{
	vc_work_cancel_sync(w);
}

/* ------------------------------------------------------------ waiting */
void vc_waitq_init(vc_waitq_t *q)
{
	pthread_mutex_init(&q->m, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->gen = 0;
}

void vc_waitq_destroy(vc_waitq_t *q)
{
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->m);
}

void vc_waitq_wake_all(vc_waitq_t *q)
{
	pthread_mutex_lock(&q->m);
	q->gen++;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->m);
}

int vc_waitq_wait(vc_waitq_t *q, bool (*cond)(void *arg), void *arg,
		  bool interruptible, u64 timeout_ns)
{
	u64 start = vc_now_ns();

	for (;;) {
		bool manual, (*pump)(void *ctx);
		void *pctx;
		u64 gen;

		if (cond(arg))
			return 0;
		if (interruptible && __atomic_load_n(&interrupted, __ATOMIC_SEQ_CST))
			return -EINTR;
		if (timeout_ns && vc_now_ns() - start >= timeout_ns)
			return -ETIMEDOUT;
		pthread_mutex_lock(&wq_lock);
		manual = wq_manual;
		pump = pump_fn;
		pctx = pump_ctx;
		pthread_mutex_unlock(&wq_lock);
		if (manual) {
			bool progress;

			if (pump)
				progress = pump(pctx);
			else
				progress = vc_posix_run_work() > 0;
			if (!progress && !cond(arg)) {
				u64 next = vc_posix_next_work_ns();

				/*
				 * Nothing to do now; with only timed work
				 * pending and no pump, nobody can advance the
				 * clock for us.
				 */
				if (next == ~0ull || !pump)
					return cond(arg) ? 0 : -EDEADLK;
				if (!pump(pctx) && !cond(arg))
					return -EDEADLK;
			}
			continue;
		}
		pthread_mutex_lock(&q->m);
		gen = q->gen;
		if (!cond(arg)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10000000;	/* re-check every 10 ms */
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_nsec -= 1000000000L;
				ts.tv_sec++;
			}
			while (q->gen == gen) {
				if (pthread_cond_timedwait(&q->cv, &q->m, &ts))
					break;
			}
		}
		pthread_mutex_unlock(&q->m);
	}
}

/* ------------------------------------------------------------ buffers */
struct vc_buf *vc_buf_alloc(u32 len, unsigned int gfp)
{
	struct vc_buf *b;

	if (alloc_fails(gfp))
		return NULL;
	b = malloc(sizeof(*b));
	if (!b)
		return NULL;
	b->data = calloc(1, len ? len : 1);
	if (!b->data) {
		free(b);
		return NULL;
	}
	b->len = len;
	b->owned = true;
	return b;
}

void vc_buf_init_mem(struct vc_buf *b, void *data, u32 len)
{
	b->data = data;
	b->len = len;
	b->owned = false;
}

struct vc_buf *vc_buf_wrap(void *data, u32 len)
{
	struct vc_buf *b = malloc(sizeof(*b));

	if (!b)
		return NULL;
	b->data = data;
	b->len = len;
	b->owned = false;
	return b;
}

void vc_buf_free(struct vc_buf *b)
{
	if (!b)
		return;
	if (b->owned)
		free(b->data);
	free(b);
}

static void buf_check(struct vc_buf *b, u32 off, u32 len)
{
	if ((u64)off + len > b->len) {
		fprintf(stderr, "vcache: buffer overrun %u+%u > %u\n", off, len,
			b->len);
		abort();
	}
}

void vc_buf_copy(struct vc_buf *dst, u32 doff, struct vc_buf *src, u32 soff,
		 u32 len)
{
	if (!dst)
		return;
	buf_check(dst, doff, len);
	if (!src) {
		memset(dst->data + doff, 0, len);
		return;
	}
	buf_check(src, soff, len);
	memmove(dst->data + doff, src->data + soff, len);
}

void vc_buf_zero(struct vc_buf *b, u32 off, u32 len)
{
	if (!b)
		return;
	buf_check(b, off, len);
	memset(b->data + off, 0, len);
}

void vc_buf_to_mem(void *dst, struct vc_buf *b, u32 off, u32 len)
{
	if (!b) {
		memset(dst, 0, len);
		return;
	}
	buf_check(b, off, len);
	memcpy(dst, b->data + off, len);
}

void vc_buf_from_mem(struct vc_buf *b, u32 off, const void *src, u32 len)
{
	if (!b)
		return;
	buf_check(b, off, len);
	memcpy(b->data + off, src, len);
}
