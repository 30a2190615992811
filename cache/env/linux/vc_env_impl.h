/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Linux kernel implementation of the vcache engine environment.  See
 * cache/include/vc_env.h for the contract.
 *
 * Contexts: the engine's spinlocks do not disable interrupts, because no
 * engine code runs in interrupt context: bio completions are handed to the
 * vcache workqueue (vc_linux_dev_submit) before the engine sees them.
 * vc_engine_init() must run before anything else (module init).
 */
#ifndef VC_ENV_IMPL_H
#define VC_ENV_IMPL_H

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/math64.h>
#include <linux/spinlock.h>
#include <linux/rwlock.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/slab.h>
#include <linux/mempool.h>
#include <linux/bitops.h>
#include <linux/percpu.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/ktime.h>
#include <linux/wait.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include <linux/bvec.h>

struct bio;
struct block_device;

#define vc_memcpy	memcpy
#define vc_memmove	memmove
#define vc_memset	memset
#define vc_memcmp	memcmp
#define vc_strnlen	strnlen
#define vc_snprintf	snprintf
#define vc_vsnprintf	vsnprintf
#define VC_PRINTF(a, b)	__printf(a, b)
#define vc_log_err(fmt, ...)	pr_err("vcache: " fmt "\n", ##__VA_ARGS__)
#define vc_log_warn(fmt, ...)	pr_warn("vcache: " fmt "\n", ##__VA_ARGS__)
#define vc_log_info(fmt, ...)	pr_info("vcache: " fmt "\n", ##__VA_ARGS__)

static inline u64 vc_div_u64(u64 a, u64 b) { return div64_u64(a, b); }
static inline u64 vc_mod_u64(u64 a, u64 b) { return a - div64_u64(a, b) * b; }

/* ---- locks ---- */
/* irq-safe: a read hit completes in interrupt context (VC_DEV_IRQ_END) */
typedef struct { spinlock_t l; unsigned long flags; } vc_spinlock_t;
typedef struct { struct mutex m; } vc_mutex_t;
typedef struct { rwlock_t l; } vc_rwlock_t;

#define vc_spin_lock_init(x)	spin_lock_init(&(x)->l)
static inline void vc_spin_lock_destroy(vc_spinlock_t *l) { }
static inline void vc_spin_lock(vc_spinlock_t *l)
{
	unsigned long flags;

	spin_lock_irqsave(&l->l, flags);
	l->flags = flags;	/* the lock's holder alone touches it */
}

static inline void vc_spin_unlock(vc_spinlock_t *l)
{
	spin_unlock_irqrestore(&l->l, l->flags);
}

/* Under @outer (held, interrupts off): one of many locks of a kind. */
static inline void vc_spin_lock_nest(vc_spinlock_t *l, vc_spinlock_t *outer)
{
	spin_lock_nest_lock(&l->l, &outer->l);
}

static inline void vc_spin_unlock_nest(vc_spinlock_t *l)
{
	spin_unlock(&l->l);
}

#define vc_mutex_init(x)	mutex_init(&(x)->m)
static inline void vc_mutex_destroy(vc_mutex_t *m) { mutex_destroy(&m->m); }
static inline void vc_mutex_lock(vc_mutex_t *m) { mutex_lock(&m->m); }
static inline void vc_mutex_unlock(vc_mutex_t *m) { mutex_unlock(&m->m); }

#define vc_rwlock_init(x)	rwlock_init(&(x)->l)
static inline void vc_rwlock_destroy(vc_rwlock_t *l) { }
static inline void vc_read_lock(vc_rwlock_t *l) { read_lock(&l->l); }
static inline void vc_read_unlock(vc_rwlock_t *l) { read_unlock(&l->l); }
static inline void vc_write_lock(vc_rwlock_t *l) { write_lock(&l->l); }
static inline void vc_write_unlock(vc_rwlock_t *l) { write_unlock(&l->l); }

/* ---- atomics ---- */
typedef struct { atomic_t a; } vc_atomic_t;
typedef struct { atomic64_t a; } vc_atomic64_t;

static inline int vc_atomic_read(const vc_atomic_t *a) { return atomic_read(&a->a); }
static inline void vc_atomic_set(vc_atomic_t *a, int v) { atomic_set(&a->a, v); }
static inline void vc_atomic_add(vc_atomic_t *a, int v) { atomic_add(v, &a->a); }
static inline void vc_atomic_sub(vc_atomic_t *a, int v) { atomic_sub(v, &a->a); }
static inline void vc_atomic_inc(vc_atomic_t *a) { atomic_inc(&a->a); }
static inline void vc_atomic_dec(vc_atomic_t *a) { atomic_dec(&a->a); }
static inline int vc_atomic_add_return(vc_atomic_t *a, int v) { return atomic_add_return(v, &a->a); }
static inline int vc_atomic_inc_return(vc_atomic_t *a) { return atomic_inc_return(&a->a); }
static inline int vc_atomic_dec_return(vc_atomic_t *a) { return atomic_dec_return(&a->a); }
static inline bool vc_atomic_dec_and_test(vc_atomic_t *a) { return atomic_dec_and_test(&a->a); }
static inline int vc_atomic_cmpxchg(vc_atomic_t *a, int o, int n) { return atomic_cmpxchg(&a->a, o, n); }

static inline s64 vc_atomic64_read(const vc_atomic64_t *a) { return atomic64_read(&a->a); }
static inline void vc_atomic64_set(vc_atomic64_t *a, s64 v) { atomic64_set(&a->a, v); }
static inline void vc_atomic64_add(vc_atomic64_t *a, s64 v) { atomic64_add(v, &a->a); }
static inline void vc_atomic64_sub(vc_atomic64_t *a, s64 v) { atomic64_sub(v, &a->a); }
static inline void vc_atomic64_inc(vc_atomic64_t *a) { atomic64_inc(&a->a); }
static inline void vc_atomic64_dec(vc_atomic64_t *a) { atomic64_dec(&a->a); }
static inline s64 vc_atomic64_add_return(vc_atomic64_t *a, s64 v) { return atomic64_add_return(v, &a->a); }
static inline s64 vc_atomic64_cmpxchg(vc_atomic64_t *a, s64 o, s64 n) { return atomic64_cmpxchg(&a->a, o, n); }
static inline u64 vc_load_u64(const u64 *p) { return READ_ONCE(*p); }
static inline void vc_store_u64(u64 *p, u64 v) { WRITE_ONCE(*p, v); }
/* full barrier, for engine code that pairs it with another vc_smp_mb() */
static inline void vc_smp_mb(void) { smp_mb(); }
static inline void vc_cpu_relax(void) { cpu_relax(); }
static inline u32 vc_popcount64(u64 v) { return hweight64(v); }

/* ---- memory ---- */
#define VC_GFP_KERNEL	0u
#define VC_GFP_NOIO	1u
#define VC_GFP_ATOMIC	2u
static inline gfp_t vc_gfp(unsigned int g)
{
	return g == VC_GFP_ATOMIC ? GFP_ATOMIC :
	       g == VC_GFP_NOIO ? GFP_NOIO : GFP_KERNEL;
}
static inline void *vc_malloc(size_t size, unsigned int gfp) { return kmalloc(size, vc_gfp(gfp)); }
static inline void *vc_zalloc(size_t size, unsigned int gfp) { return kzalloc(size, vc_gfp(gfp)); }
static inline void vc_free(void *p) { kfree(p); }
void *vc_large_zalloc(size_t size);
static inline void vc_large_free(void *p) { kvfree(p); }

typedef struct { u64 __percpu *v; u32 n; } vc_pcpu_t;
static inline int vc_pcpu_init(vc_pcpu_t *p, u32 n)
{
	p->n = n;
	p->v = __alloc_percpu(n * sizeof(u64), sizeof(u64));
	return p->v ? 0 : -ENOMEM;
}
static inline void vc_pcpu_exit(vc_pcpu_t *p)
{
	free_percpu(p->v);
	p->v = NULL;
}
static inline void vc_pcpu_add(vc_pcpu_t *p, u32 i, u64 v)
{
	this_cpu_add(p->v[i], v);
}
u64 vc_pcpu_sum(vc_pcpu_t *p, u32 i);
void vc_pcpu_reset(vc_pcpu_t *p);

typedef struct { mempool_t pool; size_t size; } vc_mempool_t;
int vc_mempool_init(vc_mempool_t *p, u32 min_nr, size_t size);
static inline void vc_mempool_exit(vc_mempool_t *p) { mempool_exit(&p->pool); }
void *vc_mempool_alloc(vc_mempool_t *p);
void *vc_mempool_try_alloc(vc_mempool_t *p);
static inline void vc_mempool_free(vc_mempool_t *p, void *obj)
{
	mempool_free(obj, &p->pool);
}

/* ---- processes ---- */
struct vc_pidlist;
bool vc_env_pid_alive(void *ctx, u64 id);
void vc_env_pidlist_keys(struct vc_pidlist *pl);

/* ---- time ---- */
static inline u64 vc_now_ns(void) { return ktime_get_ns(); }

/* ---- waiting ---- */
typedef struct { wait_queue_head_t wq; } vc_waitq_t;
#define vc_waitq_init(q)	init_waitqueue_head(&(q)->wq)
static inline void vc_waitq_destroy(vc_waitq_t *q) { }
static inline void vc_waitq_wake_all(vc_waitq_t *q) { wake_up_all(&q->wq); }
int vc_waitq_wait(vc_waitq_t *q, bool (*cond)(void *arg), void *arg,
		  bool interruptible, u64 timeout_ns);

/* ---- deferred work ---- */
typedef struct vc_work {
	struct delayed_work dw;
	void (*fn)(struct vc_work *w);
} vc_work_t;
void vc_work_init(vc_work_t *w, void (*fn)(vc_work_t *w));
void vc_work_queue(vc_work_t *w);
void vc_work_queue_delayed(vc_work_t *w, u64 delay_ns);
void vc_work_cancel_sync(vc_work_t *w);
static inline void vc_work_destroy(vc_work_t *w) { }

/* ---- data buffers ---- */
enum vc_buf_kind {
	VC_BUF_MEM = 0,		/* engine memory (kvmalloc): data, len */
	VC_BUF_BIO = 1,		/* a host bio's data, from bio->bi_iter */
};

struct vc_buf {
	u32 len;
	u8 kind;
	void *data;		/* VC_BUF_MEM */
	struct bio *bio;	/* VC_BUF_BIO */
	struct bvec_iter iter;	/* VC_BUF_BIO: the bio's data at wrap time */
};
struct vc_buf *vc_buf_alloc(u32 len, unsigned int gfp);
void vc_buf_free(struct vc_buf *b);
void vc_buf_init_mem(struct vc_buf *b, void *data, u32 len);
void vc_buf_copy(struct vc_buf *dst, u32 doff, struct vc_buf *src, u32 soff,
		 u32 len);
void vc_buf_zero(struct vc_buf *b, u32 off, u32 len);
void vc_buf_to_mem(void *dst, struct vc_buf *b, u32 off, u32 len);
void vc_buf_from_mem(struct vc_buf *b, u32 off, const void *src, u32 len);

/*
 * Describe a host bio's data as a buffer (caller-owned @b, e.g. in the
 * driver's per-bio data).  Not freed with vc_buf_free().
 */
void vc_linux_buf_init_bio(struct vc_buf *b, struct bio *bio);

int vc_env_init(void);
void vc_env_exit(void);

#endif /* VC_ENV_IMPL_H */
