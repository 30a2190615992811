/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vc_env.h - the environment contract of the vcache engine.
 *
 * The engine (cache/ *.c) includes no kernel or libc header.  It calls only
 * what this file declares.  Two environments implement it:
 *
 *   cache/env/linux/  the kernel module (spinlock_t, atomic_t, kvmalloc,
 *                     ktime, workqueues, bios);
 *   cache/env/posix/  userspace (pthreads, C11 atomics, malloc,
 *                     clock_gettime or a virtual clock, a worker thread or
 *                     manually pumped work, device ops in memory).
 *
 * Each environment ships a header "vc_env_impl.h" (found through the include
 * path: -Icache/env/linux or -Icache/env/posix) that provides:
 *
 *   - the integer types u8 u16 u32 u64 s8 s16 s32 s64, bool/true/false,
 *     size_t, NULL and the errno constants (EINVAL, EIO, ENOMEM, ENOSPC,
 *     EINTR, EBUSY, EEXIST, ENOENT, ENODEV, ESRCH, EAGAIN, ETIMEDOUT,
 *     EOPNOTSUPP, EUCLEAN, ENODATA, EROFS, E2BIG, ERANGE).  Engine functions
 *     return 0 or a negative errno, as in the kernel;
 *   - the opaque types vc_spinlock_t, vc_mutex_t, vc_rwlock_t, vc_atomic_t,
 *     vc_atomic64_t, vc_waitq_t, vc_work_t and struct vc_buf;
 *   - the functions below, as static inlines or out of line.
 *
 * Setup: int vc_env_init(void) / void vc_env_exit(void), called by
 * vc_engine_init() / vc_engine_exit() (the kernel creates its workqueue
 * and bio_set there).
 *
 * Execution contexts.  Every engine entry point and every callback the
 * environment makes into the engine (I/O completion, work items) runs in a
 * context that may take spinlocks and allocate with VC_GFP_NOIO; only work
 * items and control-path calls may sleep.  One exception: a successful
 * I/O submitted with VC_DEV_IRQ_END may complete in interrupt context
 * (the linux environment calls its end_io straight from the bio's
 * completion: a read hit costs no workqueue hop); such an end_io only
 * takes spinlocks, frees to pools, counts and completes the host I/O.
 * Every other completion comes from the environment's workqueue.  Engine
 * spinlocks therefore disable interrupts (vc_spin_lock saves the flags in
 * the lock).
 */
#ifndef VC_ENV_H
#define VC_ENV_H

#include "vc_env_impl.h"

/* ---------------------------------------------------------------------
 * Small helpers (macros only, no environment needed)
 */
#define VC_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define vc_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))
#define vc_likely(x)		__builtin_expect(!!(x), 1)
#define vc_unlikely(x)		__builtin_expect(!!(x), 0)
#define VC_SECTOR_SHIFT		9
#define VC_SECTOR_SIZE		512u

static inline u64 vc_min_u64(u64 a, u64 b) { return a < b ? a : b; }
static inline u64 vc_max_u64(u64 a, u64 b) { return a > b ? a : b; }

/*
 * Memory and string helpers: memcpy, memmove, memset, memcmp semantics.
 *   void *vc_memcpy(void *d, const void *s, size_t n);
 *   void *vc_memmove(void *d, const void *s, size_t n);
 *   void *vc_memset(void *d, int c, size_t n);
 *   int vc_memcmp(const void *a, const void *b, size_t n);
 *   size_t vc_strnlen(const char *s, size_t max);
 *   VC_PRINTF(fmt_index, first_arg)  printf-format checking attribute
 *   int vc_snprintf(char *buf, size_t size, const char *fmt, ...);
 *   int vc_vsnprintf(char *buf, size_t size, const char *fmt,
 *                    __builtin_va_list ap);
 *
 * Logging (kernel: pr_err/pr_warn/pr_info with a "vcache: " prefix;
 * posix: stderr, silenced by vc_posix_set_log_level()):
 *   void vc_log_err(const char *fmt, ...);
 *   void vc_log_warn(const char *fmt, ...);
 *   void vc_log_info(const char *fmt, ...);
 *
 * 64-bit division (the kernel may not have a native one on every arch):
 *   u64 vc_div_u64(u64 a, u64 b);  u64 vc_mod_u64(u64 a, u64 b);
 */

/* ---------------------------------------------------------------------
 * Locks.  None may be taken recursively.  Spinlocks and rwlocks never
 * sleep and may be taken in every engine context; mutexes sleep and are
 * for control paths only.
 *
 *   void vc_spin_lock_init(vc_spinlock_t *l);
 *   void vc_spin_lock_destroy(vc_spinlock_t *l);
 *   void vc_spin_lock(vc_spinlock_t *l);
 *   void vc_spin_unlock(vc_spinlock_t *l);
 *   void vc_spin_lock_nest(vc_spinlock_t *l, vc_spinlock_t *outer);
 *   void vc_spin_unlock_nest(vc_spinlock_t *l);
 *       Several locks of one kind taken together, always under @outer
 *       (held): lockdep is told so (spin_lock_nest_lock); interrupts are
 *       already off under @outer.
 *
 *   void vc_mutex_init(vc_mutex_t *m);
 *   void vc_mutex_destroy(vc_mutex_t *m);
 *   void vc_mutex_lock(vc_mutex_t *m);
 *   void vc_mutex_unlock(vc_mutex_t *m);
 *
 *   void vc_rwlock_init(vc_rwlock_t *l);     (spinning reader/writer)
 *   void vc_rwlock_destroy(vc_rwlock_t *l);
 *   void vc_read_lock(vc_rwlock_t *l);
 *   void vc_read_unlock(vc_rwlock_t *l);
 *   void vc_write_lock(vc_rwlock_t *l);
 *   void vc_write_unlock(vc_rwlock_t *l);
 */

/* ---------------------------------------------------------------------
 * Atomics.  Read-modify-write operations that return a value are fully
 * ordered (like the kernel's); the others and plain reads are relaxed.
 *
 *   int vc_atomic_read(const vc_atomic_t *a);
 *   void vc_atomic_set(vc_atomic_t *a, int v);
 *   void vc_atomic_add(vc_atomic_t *a, int v);
 *   void vc_atomic_sub(vc_atomic_t *a, int v);
 *   void vc_atomic_inc(vc_atomic_t *a);
 *   void vc_atomic_dec(vc_atomic_t *a);
 *   int vc_atomic_add_return(vc_atomic_t *a, int v);
 *   int vc_atomic_inc_return(vc_atomic_t *a);
 *   int vc_atomic_dec_return(vc_atomic_t *a);
 *   bool vc_atomic_dec_and_test(vc_atomic_t *a);
 *   int vc_atomic_cmpxchg(vc_atomic_t *a, int old, int new);
 *
 *   s64 vc_atomic64_read(const vc_atomic64_t *a);
 *   void vc_atomic64_set(vc_atomic64_t *a, s64 v);
 *   void vc_atomic64_add(vc_atomic64_t *a, s64 v);
 *   void vc_atomic64_sub(vc_atomic64_t *a, s64 v);
 *   void vc_atomic64_inc(vc_atomic64_t *a);
 *   void vc_atomic64_dec(vc_atomic64_t *a);
 *   s64 vc_atomic64_add_return(vc_atomic64_t *a, s64 v);
 *   s64 vc_atomic64_cmpxchg(vc_atomic64_t *a, s64 old, s64 new);
 *
 * Single-copy-atomic access to a plain 64-bit word shared between CPUs
 * (READ_ONCE/WRITE_ONCE):
 *   u64 vc_load_u64(const u64 *p);
 *   void vc_store_u64(u64 *p, u64 v);
 *   void vc_smp_mb(void);
 *   void vc_cpu_relax(void);      (busy-wait hint: cpu_relax / sched_yield)
 *   u32 vc_popcount64(u64 v);     (bits set: hweight64; no libgcc in the
 *                                 kernel, so never __builtin_popcount)
 */

/* ---------------------------------------------------------------------
 * Memory.
 *
 *   VC_GFP_KERNEL  control path, may sleep and do I/O;
 *   VC_GFP_NOIO    I/O path, may sleep but must not recurse into I/O;
 *   VC_GFP_ATOMIC  must not sleep; may fail.
 *
 *   void *vc_malloc(size_t size, unsigned int gfp);
 *   void *vc_zalloc(size_t size, unsigned int gfp);
 *   void vc_free(void *p);                       (NULL is fine)
 *
 * Large tables (the per-block metadata array, hash heads: may be
 * gigabytes; kvzalloc in the kernel), always zeroed, control path only:
 *   void *vc_large_zalloc(size_t size);
 *   void vc_large_free(void *p);
 *
 * Memory pools, for what the I/O path must get to make progress under
 * memory pressure (request pieces, FLUSH/discard state, metadata writes):
 * objects of one size with a reserve of @min_nr (mempool_t in the kernel).
 * vc_mempool_alloc() returns a zeroed object and never fails: it may wait
 * for one to be freed, so never call it with an engine lock held.
 * vc_mempool_try_alloc() never waits: a zeroed object, or NULL when neither
 * memory nor the reserve has one at once (for completion paths, whose
 * waiting would hold up the completions that free objects).
 *   int vc_mempool_init(vc_mempool_t *p, u32 min_nr, size_t size);
 *   void vc_mempool_exit(vc_mempool_t *p);          (after a failed init too)
 *   void *vc_mempool_alloc(vc_mempool_t *p);
 *   void *vc_mempool_try_alloc(vc_mempool_t *p);
 *   void vc_mempool_free(vc_mempool_t *p, void *obj);
 * Per-CPU counters (statistics of the I/O path: no cache line shared
 * between CPUs; a sum is racy but never torn):
 *   int vc_pcpu_init(vc_pcpu_t *p, u32 n);          n counters, zeroed
 *   void vc_pcpu_exit(vc_pcpu_t *p);                (after a failed init too)
 *   void vc_pcpu_add(vc_pcpu_t *p, u32 i, u64 v);   any context
 *   u64 vc_pcpu_sum(vc_pcpu_t *p, u32 i);
 *   void vc_pcpu_reset(vc_pcpu_t *p);
 * A caller-owned struct vc_buf over memory of the caller's (e.g. inside a
 * pool object; kmalloc'ed or vmalloc'ed in the kernel, not the stack):
 *   void vc_buf_init_mem(struct vc_buf *b, void *data, u32 len);
 */

/* ---------------------------------------------------------------------
 * Processes: does a process or thread with this id exist?  (PID lists
 * drop entries of exited processes.)  Posix: ids are process numbers,
 * "always" unless a program installs a checker (vc_posix_set_pid_alive),
 * so tests and simulators stay deterministic.  Kernel: ids are struct pid
 * addresses each entry holds a reference on (and cgroup lists struct
 * cgroup addresses), alive while the struct pid has a task;
 * vc_env_pidlist_keys() switches a list to those keys (posix: nothing).
 *
 *   bool vc_env_pid_alive(void *ctx, u64 id);
 *   void vc_env_pidlist_keys(struct vc_pidlist *pl);
 */

/* ---------------------------------------------------------------------
 * Time: monotonic nanoseconds.  The posix environment lets a program
 * install a virtual clock (vc_posix_set_clock()); the engine never reads
 * any other clock, so a simulator controls all of its timing.
 *
 *   u64 vc_now_ns(void);
 */

/* ---------------------------------------------------------------------
 * Waiting.  A wait queue on which a control-path thread sleeps until a
 * condition holds.  The condition is a callback evaluated without engine
 * locks held; wakers call vc_waitq_wake_all() after changing the state it
 * reads.
 *
 *   void vc_waitq_init(vc_waitq_t *q);
 *   void vc_waitq_destroy(vc_waitq_t *q);
 *   void vc_waitq_wake_all(vc_waitq_t *q);
 *   int vc_waitq_wait(vc_waitq_t *q, bool (*cond)(void *arg), void *arg,
 *                     bool interruptible, u64 timeout_ns);
 *       Returns 0 once cond(arg) is true, -EINTR if interruptible and a
 *       signal arrived (kernel) or vc_posix_interrupt() was called (posix),
 *       -ETIMEDOUT when timeout_ns (0 = none) of vc_now_ns() time passed.
 *       The posix environment, in manual mode, runs its pump hook instead
 *       of sleeping (see vc_posix.h), so single-threaded simulators never
 *       block.
 */

/* ---------------------------------------------------------------------
 * Deferred work.  A work item runs its function in a worker context that
 * may sleep.  One work item never runs concurrently with itself.
 *
 *   void vc_work_init(vc_work_t *w, void (*fn)(vc_work_t *w));
 *   void vc_work_queue(vc_work_t *w);
 *       Run as soon as possible; no-op if already queued to run now.
 *   void vc_work_queue_delayed(vc_work_t *w, u64 delay_ns);
 *       Run after delay_ns of vc_now_ns() time; if already queued, the
 *       earlier of the two deadlines wins.
 *   void vc_work_cancel_sync(vc_work_t *w);
 *       On return the item is neither queued nor running.
 *   void vc_work_destroy(vc_work_t *w);
 */

/* ---------------------------------------------------------------------
 * Data buffers.  struct vc_buf is opaque: in the posix environment it is
 * a piece of memory, in the kernel it describes pages (of a bio for host
 * I/O, or allocated by the environment).  The engine never dereferences
 * a buffer; it moves data with these helpers.
 *
 * A NULL buffer is allowed everywhere and means "no data": copies from it
 * produce zeroes, copies to it are dropped.  Simulators that model only
 * addresses and timing run the engine on NULL buffers with devices that
 * ignore data (see VC_CFG_NODATA in vc_engine.h).
 *
 *   struct vc_buf *vc_buf_alloc(u32 len, unsigned int gfp);   zeroed
 *   void vc_buf_free(struct vc_buf *b);                      (NULL is fine)
 *   void vc_buf_copy(struct vc_buf *dst, u32 doff,
 *                    struct vc_buf *src, u32 soff, u32 len);
 *   void vc_buf_zero(struct vc_buf *b, u32 off, u32 len);
 *   void vc_buf_to_mem(void *dst, struct vc_buf *b, u32 off, u32 len);
 *   void vc_buf_from_mem(struct vc_buf *b, u32 off, const void *src,
 *                        u32 len);
 */

/* ---------------------------------------------------------------------
 * Block devices and I/O submission.  A device is a table of function
 * pointers, so tests and simulators plug their own devices into the real
 * engine; the linux environment provides one that issues bios.
 */
enum vc_dev_op {
	VC_DEV_READ = 0,
	VC_DEV_WRITE = 1,
	VC_DEV_FLUSH = 2,	/* empty cache flush: sector/len/buf unused */
	VC_DEV_DISCARD = 3,	/* no data: buf unused */
	VC_DEV_WRITE_ZEROES = 4,	/* a write of zeroes: buf unused */
};

/* vc_dev_io.flags */
#define VC_DEV_FUA	(1u << 0)	/* write durable at completion */
#define VC_DEV_PREFLUSH	(1u << 1)	/* flush volatile cache first */
#define VC_DEV_META	(1u << 2)	/* engine metadata (hint, stats) */
#define VC_DEV_IRQ_END	(1u << 3)	/* on success end_io may run in irq */

struct vc_dev;
struct vc_dev_io;

typedef void (*vc_dev_end_io_t)(struct vc_dev_io *io, int err);

/*
 * One request to a device.  Owned by the submitter until end_io runs.
 * Units: sector in 512-byte sectors, len in bytes (a multiple of 512).
 * The data lives in buf starting at byte buf_off.
 */
struct vc_dev_io {
	struct vc_dev *dev;
	u8 op;			/* enum vc_dev_op */
	u32 flags;		/* VC_DEV_* */
	u64 sector;
	u32 len;
	struct vc_buf *buf;
	u32 buf_off;
	vc_dev_end_io_t end_io;	/* err: 0 or negative errno */
	void *private;		/* for the submitter */
	/* scratch for the device implementation (queues, timing) */
	void *dev_private;
	u64 dev_data[2];
};

struct vc_dev_ops {
	/*
	 * Start io.  end_io is called exactly once: inline (before submit
	 * returns) or later from any thread or worker.  Must not fail
	 * synchronously: errors are reported through end_io.
	 */
	void (*submit)(struct vc_dev *dev, struct vc_dev_io *io);
};

struct vc_dev {
	const struct vc_dev_ops *ops;
	void *priv;		/* for the device implementation */
	u64 nr_sectors;		/* capacity */
	u32 logical_block_size;	/* bytes, 0 = 512 */
	u32 physical_block_size;	/* bytes, 0 = logical */
	/*
	 * The device reports no volatile write cache: the kernel sends it no
	 * FLUSH, so its durability rests on that claim (logged at attach).
	 */
	bool no_volatile_cache;
	char name[32];		/* for messages */
};

static inline void vc_dev_submit(struct vc_dev_io *io)
{
	io->dev->ops->submit(io->dev, io);
}

#endif /* VC_ENV_H */
