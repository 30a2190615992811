/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace (posix) implementation of the vcache engine environment.
 * See cache/include/vc_env.h for the contract and vc_posix.h for the
 * userspace-only controls (virtual clock, manual work, interrupt).
 */
#ifndef VC_ENV_IMPL_H
#define VC_ENV_IMPL_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <errno.h>
#include <string.h>
#include <pthread.h>

#ifndef EUCLEAN
#define EUCLEAN 117
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* ---- strings, logging ---- */
#define vc_memcpy	memcpy
#define vc_memmove	memmove
#define vc_memset	memset
#define vc_memcmp	memcmp
#define vc_strnlen	strnlen
int vc_snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, __builtin_va_list ap);
#define vc_vsnprintf	vsnprintf
#define VC_PRINTF(a, b)	__attribute__((format(printf, a, b)))
void vc_log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vc_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void vc_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline u64 vc_div_u64(u64 a, u64 b) { return a / b; }
static inline u64 vc_mod_u64(u64 a, u64 b) { return a % b; }

/* ---- locks ---- */
typedef struct { pthread_mutex_t m; } vc_spinlock_t;
typedef struct { pthread_mutex_t m; } vc_mutex_t;
typedef struct { pthread_rwlock_t l; } vc_rwlock_t;

static inline void vc_spin_lock_init(vc_spinlock_t *l) { pthread_mutex_init(&l->m, NULL); }
static inline void vc_spin_lock_destroy(vc_spinlock_t *l) { pthread_mutex_destroy(&l->m); }
static inline void vc_spin_lock(vc_spinlock_t *l) { pthread_mutex_lock(&l->m); }
static inline void vc_spin_unlock(vc_spinlock_t *l) { pthread_mutex_unlock(&l->m); }
static inline void vc_spin_lock_nest(vc_spinlock_t *l, vc_spinlock_t *outer)
{
	(void)outer;
	pthread_mutex_lock(&l->m);
}
static inline void vc_spin_unlock_nest(vc_spinlock_t *l) { pthread_mutex_unlock(&l->m); }

static inline void vc_mutex_init(vc_mutex_t *l) { pthread_mutex_init(&l->m, NULL); }
static inline void vc_mutex_destroy(vc_mutex_t *l) { pthread_mutex_destroy(&l->m); }
static inline void vc_mutex_lock(vc_mutex_t *l) { pthread_mutex_lock(&l->m); }
static inline void vc_mutex_unlock(vc_mutex_t *l) { pthread_mutex_unlock(&l->m); }

static inline void vc_rwlock_init(vc_rwlock_t *l) { pthread_rwlock_init(&l->l, NULL); }
static inline void vc_rwlock_destroy(vc_rwlock_t *l) { pthread_rwlock_destroy(&l->l); }
static inline void vc_read_lock(vc_rwlock_t *l) { pthread_rwlock_rdlock(&l->l); }
static inline void vc_read_unlock(vc_rwlock_t *l) { pthread_rwlock_unlock(&l->l); }
static inline void vc_write_lock(vc_rwlock_t *l) { pthread_rwlock_wrlock(&l->l); }
static inline void vc_write_unlock(vc_rwlock_t *l) { pthread_rwlock_unlock(&l->l); }

/* ---- atomics (GCC/clang builtins, same model as C11 atomics) ---- */
typedef struct { int v; } vc_atomic_t;
typedef struct { s64 v; } vc_atomic64_t;

#define VC_RLX __ATOMIC_RELAXED
#define VC_SEQ __ATOMIC_SEQ_CST
static inline int vc_atomic_read(const vc_atomic_t *a) { return __atomic_load_n(&a->v, VC_RLX); }
static inline void vc_atomic_set(vc_atomic_t *a, int v) { __atomic_store_n(&a->v, v, VC_RLX); }
static inline void vc_atomic_add(vc_atomic_t *a, int v) { __atomic_fetch_add(&a->v, v, VC_RLX); }
static inline void vc_atomic_sub(vc_atomic_t *a, int v) { __atomic_fetch_sub(&a->v, v, VC_RLX); }
static inline void vc_atomic_inc(vc_atomic_t *a) { vc_atomic_add(a, 1); }
static inline void vc_atomic_dec(vc_atomic_t *a) { vc_atomic_sub(a, 1); }
static inline int vc_atomic_add_return(vc_atomic_t *a, int v) { return __atomic_add_fetch(&a->v, v, VC_SEQ); }
static inline int vc_atomic_inc_return(vc_atomic_t *a) { return vc_atomic_add_return(a, 1); }
static inline int vc_atomic_dec_return(vc_atomic_t *a) { return vc_atomic_add_return(a, -1); }
static inline bool vc_atomic_dec_and_test(vc_atomic_t *a) { return vc_atomic_dec_return(a) == 0; }
static inline int vc_atomic_cmpxchg(vc_atomic_t *a, int old, int new_)
{
	__atomic_compare_exchange_n(&a->v, &old, new_, false, VC_SEQ, VC_SEQ);
	return old;
}

static inline s64 vc_atomic64_read(const vc_atomic64_t *a) { return __atomic_load_n(&a->v, VC_RLX); }
static inline void vc_atomic64_set(vc_atomic64_t *a, s64 v) { __atomic_store_n(&a->v, v, VC_RLX); }
static inline void vc_atomic64_add(vc_atomic64_t *a, s64 v) { __atomic_fetch_add(&a->v, v, VC_RLX); }
static inline void vc_atomic64_sub(vc_atomic64_t *a, s64 v) { __atomic_fetch_sub(&a->v, v, VC_RLX); }
static inline void vc_atomic64_inc(vc_atomic64_t *a) { vc_atomic64_add(a, 1); }
static inline void vc_atomic64_dec(vc_atomic64_t *a) { vc_atomic64_sub(a, 1); }
static inline s64 vc_atomic64_add_return(vc_atomic64_t *a, s64 v) { return __atomic_add_fetch(&a->v, v, VC_SEQ); }
static inline s64 vc_atomic64_cmpxchg(vc_atomic64_t *a, s64 old, s64 new_)
{
	__atomic_compare_exchange_n(&a->v, &old, new_, false, VC_SEQ, VC_SEQ);
	return old;
}
static inline u64 vc_load_u64(const u64 *p) { return __atomic_load_n(p, VC_RLX); }
static inline void vc_store_u64(u64 *p, u64 v) { __atomic_store_n(p, v, VC_RLX); }
static inline void vc_smp_mb(void) { __atomic_thread_fence(VC_SEQ); }
int sched_yield(void);
static inline void vc_cpu_relax(void) { sched_yield(); }
static inline u32 vc_popcount64(u64 v) { return (u32)__builtin_popcountll(v); }

/* ---- memory ---- */
#define VC_GFP_KERNEL	0u
#define VC_GFP_NOIO	1u
#define VC_GFP_ATOMIC	2u
void *vc_malloc(size_t size, unsigned int gfp);
void *vc_zalloc(size_t size, unsigned int gfp);
void vc_free(void *p);
void *vc_large_zalloc(size_t size);
void vc_large_free(void *p);

/* Userspace: one relaxed atomic per counter. */
typedef struct { u64 *v; u32 n; } vc_pcpu_t;
int vc_pcpu_init(vc_pcpu_t *p, u32 n);
void vc_pcpu_exit(vc_pcpu_t *p);
static inline void vc_pcpu_add(vc_pcpu_t *p, u32 i, u64 v)
{
	__atomic_fetch_add(&p->v[i], v, __ATOMIC_RELAXED);
}
static inline u64 vc_pcpu_sum(vc_pcpu_t *p, u32 i)
{
	return __atomic_load_n(&p->v[i], __ATOMIC_RELAXED);
}
void vc_pcpu_reset(vc_pcpu_t *p);

/*
 * A reserve of min_nr objects, used when an allocation fails (the fault
 * point vc_posix_fail_io_allocs() makes them fail); an empty reserve
 * falls back to calloc: tests never block.
 */
typedef struct {
	pthread_mutex_t m;
	void **reserve;
	u32 nr, min_nr;
	size_t size;
	u64 reserve_used;	/* allocations served from the reserve */
} vc_mempool_t;
int vc_mempool_init(vc_mempool_t *p, u32 min_nr, size_t size);
void vc_mempool_exit(vc_mempool_t *p);
void *vc_mempool_alloc(vc_mempool_t *p);
void *vc_mempool_try_alloc(vc_mempool_t *p);
void vc_mempool_free(vc_mempool_t *p, void *obj);

/* ---- processes ---- */
struct vc_pidlist;
bool vc_env_pid_alive(void *ctx, u64 id);
void vc_env_pidlist_keys(struct vc_pidlist *pl);

/* ---- time ---- */
u64 vc_now_ns(void);

/* ---- waiting ---- */
typedef struct { pthread_mutex_t m; pthread_cond_t cv; u64 gen; } vc_waitq_t;
void vc_waitq_init(vc_waitq_t *q);
void vc_waitq_destroy(vc_waitq_t *q);
void vc_waitq_wake_all(vc_waitq_t *q);
int vc_waitq_wait(vc_waitq_t *q, bool (*cond)(void *arg), void *arg,
		  bool interruptible, u64 timeout_ns);

/* ---- deferred work ---- */
typedef struct vc_work {
	void (*fn)(struct vc_work *w);
	struct vc_work *next;	/* on the env's queue */
	u64 due_ns;		/* vc_now_ns() deadline */
	bool queued;
	bool running;
} vc_work_t;
void vc_work_init(vc_work_t *w, void (*fn)(vc_work_t *w));
void vc_work_queue(vc_work_t *w);
void vc_work_queue_delayed(vc_work_t *w, u64 delay_ns);
void vc_work_cancel_sync(vc_work_t *w);
void vc_work_destroy(vc_work_t *w);

/* ---- environment setup (vc_engine_init) ---- */
static inline int vc_env_init(void) { return 0; }
static inline void vc_env_exit(void) { }

/* ---- data buffers ---- */
struct vc_buf {
	u8 *data;
	u32 len;
	bool owned;	/* data freed with the buffer */
};
struct vc_buf *vc_buf_alloc(u32 len, unsigned int gfp);
void vc_buf_free(struct vc_buf *b);
void vc_buf_init_mem(struct vc_buf *b, void *data, u32 len);
void vc_buf_copy(struct vc_buf *dst, u32 doff, struct vc_buf *src, u32 soff,
		 u32 len);
void vc_buf_zero(struct vc_buf *b, u32 off, u32 len);
void vc_buf_to_mem(void *dst, struct vc_buf *b, u32 off, u32 len);
void vc_buf_from_mem(struct vc_buf *b, u32 off, const void *src, u32 len);

#endif /* VC_ENV_IMPL_H */
