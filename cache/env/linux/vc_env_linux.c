// SPDX-License-Identifier: GPL-2.0
/*
 * Linux kernel implementation of the vcache engine environment.
 */
#include <linux/bio.h>
#include <linux/cgroup.h>
#include <linux/blkdev.h>
#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>
#include <linux/llist.h>
#include <linux/mempool.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sysfs.h>

#include "compat.h"
#include "vc_format.h"
#include "vc_linux.h"
#include "vc_pidlist.h"

/*
 * crc32c for the metadata (vc_format.h: Castagnoli, no inversion): the
 * kernel's own, built in with CONFIG_CRC32 and accelerated where the CPU
 * can (its name by kernel version: compat.h).  Userspace builds the
 * portable table of cache/vc_crc32c.c instead.
 */
u32 vc_crc32c(u32 crc, const void *data, size_t len)
{
	return vcd_crc32c(crc, data, len);
}

static struct workqueue_struct *vc_wq;
/*
 * The rescue worker's own queue (vc_punt_parked_bios()): a rescuer thread
 * that no engine work can occupy, as each bio_set has its own.  On vc_wq,
 * under memory pressure with no new kworker to be had, its one rescuer
 * could be running an engine work that waits for the very pool whose
 * pieces this work's bios give back.
 */
static struct workqueue_struct *vc_rescue_wq;
/*
 * Every bio the engine sends down comes from here, with its completion
 * hand-off (struct vc_lio) in the front pad: no allocation per I/O beyond
 * the bio_set's mempool, so device I/O makes progress under memory
 * pressure.  Inside the cached device's ->submit_bio one host bio becomes
 * up to 256 bios (1 MiB in 4 KiB blocks), all parked on current->bio_list
 * until ->submit_bio returns: with the slab failing, the reserve is gone
 * after two and the submitter would sleep in mempool_alloc() for bios
 * only it can dispatch.  The rescuer (BIOSET_NEED_RESCUER) is what
 * bio_alloc_bioset() then hands the parked bios of this set to, so they
 * are dispatched, complete and refill the reserve.
 */
static struct bio_set vc_bs;
/*
 * Times parked bios were handed to the rescue worker (vc_mempool_alloc()),
 * read-only module parameter pool_rescues: the tests see the path taken.
 */
static atomic_long_t vc_pool_rescues = ATOMIC_LONG_INIT(0);

static int vc_pool_rescues_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&vc_pool_rescues));
}

static const struct kernel_param_ops vc_pool_rescues_ops = {
	.get = vc_pool_rescues_get,
};
module_param_cb(pool_rescues, &vc_pool_rescues_ops, NULL, 0444);
MODULE_PARM_DESC(pool_rescues,
		 "times the engine handed its parked bios to a worker before waiting for a pool (read only)");

struct vc_lio {
	struct work_struct work;
	struct vc_dev_io *io;
	int err;
	struct bio bio;		/* last: the bio_set's front pad ends here */
};

/*
 * Test fault point (module parameter fault_bio_slab): every Nth slab
 * allocation behind vc_bs made inside a ->submit_bio (current->bio_list
 * set: the cached device's clones) fails (1: all of them), so those bios
 * come from the bio_set's reserve only, as when the slab cannot get
 * memory; 0: off.  Allocations elsewhere (workers) are left alone.
 */
static unsigned int vc_fault_bio_slab;
module_param_named(fault_bio_slab, vc_fault_bio_slab, uint, 0644);
MODULE_PARM_DESC(fault_bio_slab,
		 "test only: fail every Nth slab allocation of an engine bio inside submit_bio (0 = never)");
static atomic_t vc_fault_bio_count = ATOMIC_INIT(0);

/*
 * Test fault point (module parameter fault_pool_slab): the same for the
 * slab allocations behind the engine's pools (vc_mempool_init()): inside
 * a ->submit_bio only, or with fault_pool_anywhere=Y in every context
 * (workers and completions too), so pieces, FLUSH state and metadata
 * writes come from the pools' reserves only wherever they are taken.
 */
static unsigned int vc_fault_pool_slab;
module_param_named(fault_pool_slab, vc_fault_pool_slab, uint, 0644);
MODULE_PARM_DESC(fault_pool_slab,
		 "test only: fail every Nth slab allocation of an engine pool object inside submit_bio (0 = never)");
static bool vc_fault_pool_anywhere;
module_param_named(fault_pool_anywhere, vc_fault_pool_anywhere, bool, 0644);
MODULE_PARM_DESC(fault_pool_anywhere,
		 "test only: fault_pool_slab fails allocations in every context, not only inside submit_bio");
static atomic_t vc_fault_pool_count = ATOMIC_INIT(0);

/* Shared by the fault points above: fail this allocation? */
static bool vc_fault_hit(unsigned int every, bool anywhere, atomic_t *count)
{
	if (!every || (!anywhere && !current->bio_list))
		return false;
	return !((unsigned int)atomic_inc_return(count) % every);
}

/*
 * The integrated hit path: a read hit of a cache on a card region goes to
 * the card as one request on its tag set (vc_linux_dev_set_direct), not
 * as a second bio through the region's disk.  N sends it as a bio, as
 * before: for comparison (make bench-cache) and as a test of the bio path.
 */
static bool vc_direct_hits = true;
module_param_named(direct_hits, vc_direct_hits, bool, 0644);
MODULE_PARM_DESC(direct_hits,
		 "read hits of caches on a card go straight to the card's hardware queue (default Y; N: as a bio through the region's disk)");

static void *vc_bio_slab_alloc(gfp_t gfp, void *pool_data)
{
	if (vc_fault_hit(READ_ONCE(vc_fault_bio_slab), false,
			 &vc_fault_bio_count))
		return NULL;
	return mempool_alloc_slab(gfp, pool_data);
}

/*
 * The engine's memory pools (request pieces, FLUSH and discard state,
 * bounce buffers, metadata writes) face the same hazard as its bios.
 * Inside the cached device's ->submit_bio one host bio becomes up to 257
 * pieces (1 MiB not aligned to a 4 KiB block; a discard up to 64 MiB is
 * 16384), each taken from a pool and each sending bios that sit on
 * current->bio_list until ->submit_bio returns.  Once the slab fails and
 * the pool's reserve is gone, the submitter would sleep in mempool_alloc()
 * for a piece that only the completion of its own parked bios can free.
 * So inside a ->submit_bio an allocation that cannot be had at once first
 * hands this set's parked bios to a worker, which submits them (as
 * bio_alloc_bioset() does for its rescuer), and only then waits.
 */
static DEFINE_SPINLOCK(vc_rescue_lock);
static struct bio_list vc_rescue_list;

static void vc_rescue_work_fn(struct work_struct *w)
{
	struct bio *bio;

	for (;;) {
		spin_lock(&vc_rescue_lock);
		bio = bio_list_pop(&vc_rescue_list);
		spin_unlock(&vc_rescue_lock);
		if (!bio)
			break;
		submit_bio_noacct(bio);
	}
}

static DECLARE_WORK(vc_rescue_work, vc_rescue_work_fn);

/* Take this set's bios off one of current's lists; keep the others. */
static void vc_take_parked(struct bio_list *from, struct bio_list *to)
{
	struct bio_list keep;
	struct bio *bio;

	bio_list_init(&keep);
	while ((bio = bio_list_pop(from)))
		bio_list_add(bio->bi_pool == &vc_bs ? to : &keep, bio);
	*from = keep;
}

static void vc_punt_parked_bios(void)
{
	struct bio_list punt;

	bio_list_init(&punt);
	vc_take_parked(&current->bio_list[0], &punt);
	vc_take_parked(&current->bio_list[1], &punt);
	if (bio_list_empty(&punt))
		return;
	spin_lock(&vc_rescue_lock);
	bio_list_merge(&vc_rescue_list, &punt);
	spin_unlock(&vc_rescue_lock);
	atomic_long_inc(&vc_pool_rescues);
	queue_work(vc_rescue_wq, &vc_rescue_work);
}

static void *vc_pool_slab_alloc(gfp_t gfp, void *pool_data)
{
	if (vc_fault_hit(READ_ONCE(vc_fault_pool_slab),
			 READ_ONCE(vc_fault_pool_anywhere), &vc_fault_pool_count))
		return NULL;
	return kmalloc((size_t)pool_data, gfp);
}

int vc_mempool_init(vc_mempool_t *p, u32 min_nr, size_t size)
{
	p->size = size;
	return mempool_init(&p->pool, min_nr, vc_pool_slab_alloc, mempool_kfree,
			    (void *)size);
}

/* Never NULL; see above for why it may hand parked bios on first. */
void *vc_linux_mempool_alloc(mempool_t *pool)
{
	void *o = NULL;

	if (current->bio_list) {
		o = mempool_alloc(pool, GFP_NOWAIT | __GFP_NOWARN);
		if (!o)
			vc_punt_parked_bios();
	}
	return o ? o : mempool_alloc(pool, GFP_NOIO);
}

void *vc_mempool_alloc(vc_mempool_t *p)
{
	void *o = vc_linux_mempool_alloc(&p->pool);

	memset(o, 0, p->size);
	return o;
}

void *vc_mempool_try_alloc(vc_mempool_t *p)
{
	void *o = mempool_alloc(&p->pool, GFP_NOWAIT | __GFP_NOWARN);

	if (o)
		memset(o, 0, p->size);
	return o;
}

int vc_env_init(void)
{
	int err;

	vc_wq = alloc_workqueue("vcache", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	/* unbound: 7.x warns at a queue that says neither per-cpu nor unbound */
	vc_rescue_wq = alloc_workqueue("vcache_rescue",
				       WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	err = vc_wq && vc_rescue_wq ? 0 : -ENOMEM;
	if (!err)
		err = bioset_init(&vc_bs, BIO_POOL_SIZE,
				  offsetof(struct vc_lio, bio),
				  BIOSET_NEED_BVECS | BIOSET_NEED_RESCUER);
	if (err) {
		vc_env_exit();
		return err;
	}
	vc_bs.bio_pool.alloc = vc_bio_slab_alloc;	/* the fault point */
	return 0;
}

/* Also undoes a vc_env_init() that failed part way. */
void vc_env_exit(void)
{
	if (vc_wq)
		destroy_workqueue(vc_wq);
	vc_wq = NULL;
	/* after vc_wq: its works may still have punted bios */
	if (vc_rescue_wq)
		destroy_workqueue(vc_rescue_wq);
	vc_rescue_wq = NULL;
	bioset_exit(&vc_bs);	/* safe on a set never or partly set up */
}

void *vc_large_zalloc(size_t size)
{
	if (size <= 16 * PAGE_SIZE)
		return kvzalloc(size, GFP_KERNEL);
	return vzalloc(size);
}

u64 vc_pcpu_sum(vc_pcpu_t *p, u32 i)
{
	u64 s = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		s += READ_ONCE(*per_cpu_ptr(p->v + i, cpu));
	return s;
}

void vc_pcpu_reset(vc_pcpu_t *p)
{
	int cpu;
	u32 i;

	for_each_possible_cpu(cpu)
		for (i = 0; i < p->n; i++)
			WRITE_ONCE(*per_cpu_ptr(p->v + i, cpu), 0);
}

/*
 * PID lists hold struct pid references (an entry names one process for
 * its life: a recycled number is another struct pid), cgroup lists
 * struct cgroup references; the driver takes them (vc_nl_pid.c).
 */
bool vc_env_pid_alive(void *ctx, u64 id)
{
	return pid_has_task((struct pid *)(uintptr_t)id, PIDTYPE_PID);
}

static void vc_env_pid_put(int list, u64 id)
{
	if (list == VC_CG_ALLOW || list == VC_CG_DENY)
		cgroup_put((struct cgroup *)(uintptr_t)id);
	else
		put_pid((struct pid *)(uintptr_t)id);
}

static u64 vc_env_cg_parent(u64 cg)
{
	return (uintptr_t)cgroup_parent((struct cgroup *)(uintptr_t)cg);
}

void vc_env_pidlist_keys(struct vc_pidlist *pl)
{
	vc_pidlist_set_keys(pl, vc_env_pid_put, vc_env_cg_parent);
}

/* ------------------------------------------------------------ waiting */
int vc_waitq_wait(vc_waitq_t *q, bool (*cond)(void *arg), void *arg,
		  bool interruptible, u64 timeout_ns)
{
	long ret;

	if (!timeout_ns) {
		if (!interruptible) {
			wait_event(q->wq, cond(arg));
			return 0;
		}
		ret = wait_event_interruptible(q->wq, cond(arg));
		return ret ? -EINTR : 0;
	}
	if (interruptible)
		ret = wait_event_interruptible_timeout(q->wq, cond(arg),
						       nsecs_to_jiffies(timeout_ns));
	else
		ret = wait_event_timeout(q->wq, cond(arg),
					 nsecs_to_jiffies(timeout_ns));
	if (ret < 0)
		return -EINTR;
	return ret ? 0 : -ETIMEDOUT;
}

/* --------------------------------------------------------------- work */
static void vc_work_fn(struct work_struct *ws)
{
	vc_work_t *w = container_of(to_delayed_work(ws), vc_work_t, dw);

	w->fn(w);
}

void vc_work_init(vc_work_t *w, void (*fn)(vc_work_t *w))
{
	INIT_DELAYED_WORK(&w->dw, vc_work_fn);
	w->fn = fn;
}

void vc_work_queue(vc_work_t *w)
{
	mod_delayed_work(vc_wq, &w->dw, 0);
}

/*
 * If already queued, the earlier of the two deadlines wins.  The delay
 * is rounded up to whole ticks: nsecs_to_jiffies() rounds down, and a
 * delay shorter than a tick ran at once (rated write-back waiting 3.9 ms
 * for its next token spun on a CPU under HZ=250).
 */
void vc_work_queue_delayed(vc_work_t *w, u64 delay_ns)
{
	unsigned long d = nsecs_to_jiffies(delay_ns);

	if (delay_ns && (u64)jiffies_to_nsecs(d) < delay_ns)
		d++;

	if (queue_delayed_work(vc_wq, &w->dw, d))
		return;
	/* pending: pull a later timer in (a queued item has a past expiry) */
	if (time_before(jiffies + d, READ_ONCE(w->dw.timer.expires)))
		mod_delayed_work(vc_wq, &w->dw, d);
}

void vc_work_cancel_sync(vc_work_t *w)
{
	cancel_delayed_work_sync(&w->dw);
}

/* ------------------------------------------------------------ buffers */
struct vc_buf *vc_buf_alloc(u32 len, unsigned int gfp)
{
	struct vc_buf *b = kzalloc(sizeof(*b), vc_gfp(gfp));

	if (!b)
		return NULL;
	b->kind = VC_BUF_MEM;
	b->len = len;
	b->data = kvzalloc(len ? len : 1, vc_gfp(gfp));
	if (!b->data) {
		kfree(b);
		return NULL;
	}
	return b;
}

void vc_buf_free(struct vc_buf *b)
{
	if (!b)
		return;
	if (b->kind == VC_BUF_MEM)
		kvfree(b->data);
	kfree(b);
}

void vc_buf_init_mem(struct vc_buf *b, void *data, u32 len)
{
	memset(b, 0, sizeof(*b));
	b->kind = VC_BUF_MEM;
	b->data = data;
	b->len = len;
}

void vc_linux_buf_init_bio(struct vc_buf *b, struct bio *bio)
{
	memset(b, 0, sizeof(*b));
	b->kind = VC_BUF_BIO;
	b->bio = bio;
	b->iter = bio->bi_iter;
	b->len = bio->bi_iter.bi_size;
}

/* Call @fn on each mapped piece of bytes [off, off + len) of @b. */
static void buf_walk(struct vc_buf *b, u32 off, u32 len,
		     void (*fn)(void *p, u32 n, void *ctx), void *ctx)
{
	struct bvec_iter it;

	if (WARN_ON_ONCE((u64)off + len > b->len))
		return;
	if (b->kind == VC_BUF_MEM) {
		fn((u8 *)b->data + off, len, ctx);
		return;
	}
	it = b->iter;
	bvec_iter_advance(b->bio->bi_io_vec, &it, off);
	while (len) {
		struct bio_vec bv = bio_iter_iovec(b->bio, it);
		u32 n = min(bv.bv_len, len);
		void *p = bvec_kmap_local(&bv);

		fn(p, n, ctx);
		kunmap_local(p);
		bvec_iter_advance(b->bio->bi_io_vec, &it, n);
		len -= n;
	}
}

struct mem_ctx {
	u8 *mem;
	struct vc_buf *src;
	u32 soff;
};

static void to_mem_fn(void *p, u32 n, void *ctx)
{
	struct mem_ctx *m = ctx;

	memcpy(m->mem, p, n);
	m->mem += n;
}

static void from_mem_fn(void *p, u32 n, void *ctx)
{
	struct mem_ctx *m = ctx;

	memcpy(p, m->mem, n);
	m->mem += n;
}

static void zero_fn(void *p, u32 n, void *ctx)
{
	memset(p, 0, n);
}

static void copy_fn(void *p, u32 n, void *ctx)
{
	struct mem_ctx *m = ctx;

	vc_buf_to_mem(p, m->src, m->soff, n);
	m->soff += n;
}

void vc_buf_to_mem(void *dst, struct vc_buf *b, u32 off, u32 len)
{
	struct mem_ctx m = { .mem = dst };

	if (!b) {
		memset(dst, 0, len);
		return;
	}
	buf_walk(b, off, len, to_mem_fn, &m);
}

void vc_buf_from_mem(struct vc_buf *b, u32 off, const void *src, u32 len)
{
	struct mem_ctx m = { .mem = (u8 *)src };

	if (b)
		buf_walk(b, off, len, from_mem_fn, &m);
}

void vc_buf_zero(struct vc_buf *b, u32 off, u32 len)
{
	if (b)
		buf_walk(b, off, len, zero_fn, NULL);
}

void vc_buf_copy(struct vc_buf *dst, u32 doff, struct vc_buf *src, u32 soff,
		 u32 len)
{
	struct mem_ctx m = { .src = src, .soff = soff };

	if (!dst)
		return;
	if (!src) {
		vc_buf_zero(dst, doff, len);
		return;
	}
	buf_walk(dst, doff, len, copy_fn, &m);
}

/* ------------------------------------------------------------ devices */
static void lio_work(struct work_struct *ws)
{
	struct vc_lio *l = container_of(ws, struct vc_lio, work);
	struct vc_dev_io *io = l->io;
	int err = l->err;

	bio_put(&l->bio);
	io->end_io(io, err);
}

static void lio_endio(struct bio *bio)
{
	struct vc_lio *l = container_of(bio, struct vc_lio, bio);
	struct vc_dev_io *io = l->io;

	l->err = blk_status_to_errno(bio->bi_status);
	if (!l->err && (io->flags & VC_DEV_IRQ_END)) {
		/* a read hit: the engine finishes it here, any context */
		bio_put(bio);
		io->end_io(io, 0);
		return;
	}
	queue_work(vc_wq, &l->work);
}

/*
 * Completions of the direct path that the engine must see in process
 * context (errors; VC_DEV_IRQ_END reads are the only users, so rare): the
 * vc_dev_io itself carries the list node and the error in its device
 * scratch (dev_data), so nothing is allocated in interrupt context.
 */
static LLIST_HEAD(vc_direct_done);

static struct llist_node *direct_node(struct vc_dev_io *io)
{
	BUILD_BUG_ON(sizeof(io->dev_data) < sizeof(struct llist_node));
	return (struct llist_node *)io->dev_data;
}

static void vc_direct_work_fn(struct work_struct *w)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&vc_direct_done));

	while (n) {
		struct vc_dev_io *io = container_of((void *)n, struct vc_dev_io,
						    dev_data);

		n = n->next;
		io->end_io(io, (int)(long)io->dev_private);
	}
}

static DECLARE_WORK(vc_direct_work, vc_direct_work_fn);

static void direct_end(void *priv, blk_status_t sts)
{
	struct vc_dev_io *io = priv;
	int err = blk_status_to_errno(sts);

	if (!err && (io->flags & VC_DEV_IRQ_END)) {
		io->end_io(io, 0);
		return;
	}
	io->dev_private = (void *)(long)err;
	if (llist_add(direct_node(io), &vc_direct_done))
		queue_work(vc_wq, &vc_direct_work);
}

/* A read hit into a host bio's pages, straight to the device: issued? */
static bool try_direct(struct vc_linux_dev *ld, struct vc_dev_io *io)
{
	struct bvec_iter it;

	if (!ld->direct || io->op != VC_DEV_READ ||
	    !(io->flags & VC_DEV_IRQ_END) || !io->buf ||
	    io->buf->kind != VC_BUF_BIO || !READ_ONCE(vc_direct_hits))
		return false;
	it = io->buf->iter;
	bvec_iter_advance(io->buf->bio->bi_io_vec, &it, io->buf_off);
	it.bi_size = io->len;
	return !ld->direct(ld->direct_ctx, REQ_OP_READ, io->sector,
			   io->buf->bio, it, direct_end, io);
}

static struct page *addr_page(void *p)
{
	return is_vmalloc_addr(p) ? vmalloc_to_page(p) : virt_to_page(p);
}

/* A bio of @opf at @sector for up to @nr pages; never NULL (mempool). */
static struct bio *lio_alloc(struct block_device *bdev, unsigned int nr,
			     blk_opf_t opf, sector_t sector)
{
	struct bio *bio = bio_alloc_bioset(bdev, min_t(unsigned int, nr,
						       BIO_MAX_VECS),
					   opf, GFP_NOIO, &vc_bs);

	bio->bi_iter.bi_sector = sector;
	return bio;
}

/*
 * A bio for a memory buffer (kmalloc'ed or vmalloc'ed, any length): a
 * buffer of more pages than a bio holds becomes a chain, the earlier
 * bios submitted here and the returned last one completing after all.
 */
static struct bio *mem_bio(struct block_device *bdev, struct vc_dev_io *io,
			   blk_opf_t opf)
{
	u8 *p = (u8 *)io->buf->data + io->buf_off;
	u32 left = io->len;
	unsigned int nr = DIV_ROUND_UP(offset_in_page(p) + left, PAGE_SIZE);
	struct bio *bio = lio_alloc(bdev, nr, opf, io->sector);

	while (left) {
		u32 n = min_t(u32, left, PAGE_SIZE - offset_in_page(p));

		if (bio_add_page(bio, addr_page(p), n, offset_in_page(p)) != n) {
			/* full: chain a new one behind it */
			struct bio *next;

			nr = DIV_ROUND_UP(offset_in_page(p) + left, PAGE_SIZE);
			next = lio_alloc(bdev, nr, opf, bio_end_sector(bio));
			bio_chain(bio, next);
			submit_bio(bio);
			bio = next;
			continue;
		}
		p += n;
		left -= n;
	}
	return bio;
}

static void linux_dev_submit(struct vc_dev *dev, struct vc_dev_io *io)
{
	struct vc_linux_dev *ld = dev->priv;
	struct vc_lio *l;
	struct bio *bio;
	blk_opf_t opf;

	switch (io->op) {
	case VC_DEV_READ:
		opf = REQ_OP_READ;
		break;
	case VC_DEV_WRITE:
		opf = REQ_OP_WRITE;
		if (io->flags & VC_DEV_FUA)
			opf |= REQ_FUA;
		if (io->flags & VC_DEV_PREFLUSH)
			opf |= REQ_PREFLUSH;
		break;
	case VC_DEV_FLUSH:
		opf = REQ_OP_WRITE | REQ_PREFLUSH;
		break;
	case VC_DEV_WRITE_ZEROES:
		/*
		 * Zeroes, never a deallocation: the engine does not carry the
		 * host's REQ_NOUNMAP, and zeroes with the blocks kept satisfy
		 * a request with or without it.
		 */
		opf = REQ_OP_WRITE_ZEROES | REQ_NOUNMAP;
		if (io->flags & VC_DEV_FUA)
			opf |= REQ_FUA;
		break;
	default:
		opf = REQ_OP_DISCARD;
		break;
	}
	if (io->flags & VC_DEV_META)
		opf |= REQ_META;
	if (try_direct(ld, io))
		return;

	if (io->op == VC_DEV_FLUSH || io->op == VC_DEV_DISCARD ||
	    io->op == VC_DEV_WRITE_ZEROES) {
		bio = lio_alloc(ld->bdev, 0, opf, io->sector);
		if (io->op != VC_DEV_FLUSH)
			bio->bi_iter.bi_size = io->len;
	} else if (!io->buf) {
		io->end_io(io, -EINVAL);
		return;
	} else if (io->buf->kind == VC_BUF_BIO) {
		/* bio_alloc_clone() from a bio_set with GFP_NOIO never fails */
		bio = bio_alloc_clone(ld->bdev, io->buf->bio, GFP_NOIO, &vc_bs);
		bio->bi_iter = io->buf->iter;
		bio_trim(bio, io->buf_off >> SECTOR_SHIFT,
			 io->len >> SECTOR_SHIFT);
		bio->bi_opf = opf;
		bio->bi_iter.bi_sector = io->sector;
	} else {
		bio = mem_bio(ld->bdev, io, opf);
	}
	l = container_of(bio, struct vc_lio, bio);
	INIT_WORK(&l->work, lio_work);
	l->io = io;
	bio->bi_end_io = lio_endio;
	submit_bio(bio);
}

static const struct vc_dev_ops linux_dev_ops = {
	.submit = linux_dev_submit,
};

void vc_linux_dev_init(struct vc_linux_dev *ld, struct block_device *bdev,
		       const char *name)
{
	memset(ld, 0, sizeof(*ld));
	ld->bdev = bdev;
	ld->dev.ops = &linux_dev_ops;
	ld->dev.priv = ld;
	ld->dev.nr_sectors = bdev_nr_sectors(bdev);
	ld->dev.logical_block_size = bdev_logical_block_size(bdev);
	ld->dev.physical_block_size = bdev_physical_block_size(bdev);
	ld->dev.no_volatile_cache = !bdev_write_cache(bdev);
	strscpy(ld->dev.name, name, sizeof(ld->dev.name));
}

void vc_linux_dev_set_direct(struct vc_linux_dev *ld, vc_linux_direct_t fn,
			     void *ctx)
{
	ld->direct_ctx = ctx;
	ld->direct = fn;
}
