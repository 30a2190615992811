// SPDX-License-Identifier: GPL-2.0
/*
 * the cached block device /dev/vcacheN: a bio-based disk whose bios go to
 * the cache engine, with queue limits derived from the backing device.
 */
#define pr_fmt(fmt) "vcache: " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/idr.h>
#include <linux/mempool.h>
#include <linux/module.h>
#include <linux/sched.h>

#include "vc_release.h"
#include "vcc.h"

#define VCC_MINORS	16	/* per disk: room for partitions */
#define VCC_MAX_IO_SECTORS	2048	/* 1 MiB: bounded engine work per bio */

static int vcc_major;
static DEFINE_IDA(vcc_index_ida);
static struct kmem_cache *vcc_io_cache;
static mempool_t *vcc_io_pool;

/* One host bio in the engine. */
struct vcc_io {
	struct vc_host_io hio;
	struct vc_buf buf;
	struct bio *bio;
	struct vcc_dev *d;
	unsigned long start;
};

/*
 * A few free vcc_io per CPU in front of the mempool: a read hit then
 * takes nothing from the slab (whose debug options, slub_debug=U as in
 * the VM bench, record a stack trace per allocation and per free).
 * Taken in ->submit_bio, given back from the completion (hard interrupt
 * for a hit), hence interrupts off around the per-CPU stack.
 */
#define VCC_IO_CACHE	32

struct vcc_io_stack {
	unsigned int nr;
	struct vcc_io *io[VCC_IO_CACHE];
};

static DEFINE_PER_CPU(struct vcc_io_stack, vcc_io_pcpu);

static struct vcc_io *vcc_io_get(void)
{
	struct vcc_io_stack *pc;
	struct vcc_io *io = NULL;
	unsigned long flags;

	local_irq_save(flags);
	pc = this_cpu_ptr(&vcc_io_pcpu);
	if (pc->nr)
		io = pc->io[--pc->nr];
	local_irq_restore(flags);
	/* a vcache device stacked over this one may have parked engine bios */
	return io ? io : vc_linux_mempool_alloc(vcc_io_pool);
}

static void vcc_io_put(struct vcc_io *io)
{
	struct vcc_io_stack *pc;
	unsigned long flags;

	/*
	 * The pool's reserve first: when the slab fails (memory pressure),
	 * a submitter on another CPU waits in mempool_alloc() for exactly
	 * this, and an io kept on this CPU's stack would never reach it.
	 */
	if (!mempool_is_saturated(vcc_io_pool)) {
		mempool_free(io, vcc_io_pool);
		return;
	}
	local_irq_save(flags);
	pc = this_cpu_ptr(&vcc_io_pcpu);
	if (pc->nr < VCC_IO_CACHE) {
		pc->io[pc->nr++] = io;
		io = NULL;
	}
	local_irq_restore(flags);
	if (io)
		mempool_free(io, vcc_io_pool);
}

/* Every cached device is gone: the per-CPU stacks back to the pool. */
static void vcc_io_cache_drain(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct vcc_io_stack *pc = per_cpu_ptr(&vcc_io_pcpu, cpu);

		while (pc->nr)
			mempool_free(pc->io[--pc->nr], vcc_io_pool);
	}
}

static void vcc_end_io(struct vc_host_io *hio, int err)
{
	struct vcc_io *io = hio->private;
	struct bio *bio = io->bio;
	struct vcc_dev *d = io->d;

	if (err)
		bio->bi_status = errno_to_blk_status(err);
	bio_end_io_acct(bio, io->start);
	vcc_io_put(io);
	bio_endio(bio);
	percpu_ref_put(&d->active);
}

static int vcc_bio_op(struct bio *bio, u32 *flags)
{
	*flags = 0;
	if (bio->bi_opf & REQ_FUA)
		*flags |= VC_IO_FUA;
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return VC_OP_READ;
	case REQ_OP_WRITE:
		if (!bio->bi_iter.bi_size)
			return (bio->bi_opf & REQ_PREFLUSH) ? VC_OP_FLUSH : -1;
		if (bio->bi_opf & REQ_PREFLUSH)
			*flags |= VC_IO_PREFLUSH;
		return VC_OP_WRITE;
	case REQ_OP_FLUSH:
		return VC_OP_FLUSH;
	case REQ_OP_DISCARD:
		return VC_OP_DISCARD;
	case REQ_OP_WRITE_ZEROES:
		return VC_OP_WRITE_ZEROES;
	default:
		return -1;
	}
}

static void vcc_submit_bio(struct bio *bio)
{
	struct vcc_dev *d = bio->bi_bdev->bd_disk->private_data;
	struct vc_host_io *hio;
	struct vcc_io *io;
	u32 flags;
	int op;

	if (bio->bi_opf & REQ_NOWAIT) {
		/* the engine may sleep (memory pools): see cache/API.md */
		bio_wouldblock_error(bio);
		return;
	}
	bio = bio_split_to_limits(bio);
	if (!bio)
		return;
	op = vcc_bio_op(bio, &flags);
	if (op < 0) {
		bio->bi_status = BLK_STS_NOTSUPP;
		bio_endio(bio);
		return;
	}
	if (!percpu_ref_tryget_live(&d->active)) {
		bio_io_error(bio);
		return;
	}
	io = vcc_io_get();
	memset(&io->hio, 0, sizeof(io->hio));
	io->bio = bio;
	io->d = d;
	hio = &io->hio;
	hio->dev_id = d->id;
	hio->op = op;
	hio->flags = flags;
	hio->sector = bio->bi_iter.bi_sector;
	hio->len = op == VC_OP_FLUSH ? 0 : bio->bi_iter.bi_size;
	if (op == VC_OP_READ || op == VC_OP_WRITE) {
		vc_linux_buf_init_bio(&io->buf, bio);
		hio->buf = &io->buf;
	}
	/*
	 * PID lists hold struct pid references (vc_nl_pid.c): the submitting
	 * thread and its process, by identity, not by number.  Buffered
	 * writeback is submitted by a flusher thread, so it is classified by
	 * the cgroup its bio is charged to: the one that dirtied the pages.
	 */
	hio->pid = (uintptr_t)task_pid(current);
	hio->tgid = (uintptr_t)task_tgid(current);
	hio->cgroup = vcd_bio_cgroup(bio);
	hio->stream = task_pid_nr(current);
	hio->end_io = vcc_end_io;
	hio->private = io;
	io->start = bio_start_io_acct(bio);
	vc_cache_submit(d->cache->engine, hio);
}

/* A delete or detach under way refuses new opens (vcc_cache.c). */
int vcc_disk_open(struct gendisk *disk)
{
	struct vcc_dev *d = disk->private_data;

	lockdep_assert_held(&disk->open_mutex);
	return READ_ONCE(d->dying) ? -ENXIO : 0;
}

static const struct block_device_operations vcc_fops = {
	.owner = THIS_MODULE,
	.open = vcd_bdev_open,
	.submit_bio = vcc_submit_bio,
	.free_disk = vcd_free_disk,
};

static void vcc_active_release(struct percpu_ref *ref)
{
	struct vcc_dev *d = container_of(ref, struct vcc_dev, active);

	complete(&d->drained);
}

/* Limits from the backing device; the flash only needs 512-byte writes. */
static void vcc_limits(struct vcc_dev *d, struct vcd_limits *l)
{
	struct block_device *b = d->bh.bdev;

	memset(l, 0, sizeof(*l));
	l->lba_size = max_t(unsigned int, bdev_logical_block_size(b),
			    SECTOR_SIZE);
	l->phys_block_size = max_t(unsigned int, bdev_physical_block_size(b),
				   l->lba_size);
	l->max_hw_sectors = VCC_MAX_IO_SECTORS;
	l->max_segments = USHRT_MAX;
	l->max_segment_size = UINT_MAX;
	if (bdev_max_discard_sectors(b)) {
		l->discard_granularity = max_t(unsigned int, l->lba_size,
					       bdev_discard_granularity(b));
		l->max_discard_sectors = VCC_MAX_IO_SECTORS * 64;
	}
	l->max_write_zeroes_sectors = min_t(unsigned int,
					    bdev_write_zeroes_sectors(b),
					    VCC_MAX_IO_SECTORS * 64);
	/* FLUSH and FUA always: the flash has a volatile write buffer */
	l->write_cache = true;
	l->fua = true;
}

/*
 * Test hook (57-kernel-review): the next cached device start waits this
 * long, then fails (-EIO), once; the hook resets itself.  A test changes
 * the flash's behaviour in the wait (two faults in one attach).
 */
static unsigned int vcc_fail_start_ms;
module_param_named(test_fail_start_ms, vcc_fail_start_ms, uint, 0644);
MODULE_PARM_DESC(test_fail_start_ms,
		 "test hook: the next cached device start waits this many ms, then fails (0 = off)");

static int vcc_fail_start_hook(struct vcc_dev *d)
{
	unsigned int ms = xchg(&vcc_fail_start_ms, 0);

	if (!ms)
		return 0;
	pr_info("test hook: the start of %s waits %u ms, then fails\n",
		d->devname, ms);
	msleep(ms);
	return -EIO;
}

/**
 * vcc_dev_start - create /dev/vcacheN for an attached backing device
 * @d: the cached device, backing open, engine id set
 */
int vcc_dev_start(struct vcc_dev *d)
{
	struct vcd_limits l;
	struct gendisk *disk;
	int err;

	err = vcc_fail_start_hook(d);
	if (err)
		return err;
	init_completion(&d->drained);
	d->dying = false;
	err = percpu_ref_init(&d->active, vcc_active_release, 0, GFP_KERNEL);
	if (err)
		return err;
	d->index = ida_alloc(&vcc_index_ida, GFP_KERNEL);
	if (d->index < 0) {
		err = d->index;
		goto out_ref;
	}
	vcc_limits(d, &l);
	disk = vcd_alloc_bio_disk(&l);
	if (IS_ERR(disk)) {
		err = PTR_ERR(disk);
		goto out_ida;
	}
	disk->major = vcc_major;
	disk->first_minor = d->index * VCC_MINORS;
	disk->minors = VCC_MINORS;
	disk->fops = &vcc_fops;
	disk->private_data = d;
	snprintf(disk->disk_name, sizeof(disk->disk_name), "vcache%d",
		 d->index);
	set_capacity(disk, bdev_nr_sectors(d->bh.bdev));
	d->disk = disk;
	err = add_disk(disk);
	if (err)
		goto out_put;
	vcd_release_hold();	/* its release calls vcd_free_disk() */
	err = vcc_sysfs_add(d);
	if (err) {
		/* as vcc_dev_stop(): bios that udev's reads sent must end */
		del_gendisk(disk);
		percpu_ref_kill(&d->active);
		wait_for_completion(&d->drained);
		goto out_put;
	}
	/* udev names /dev/vcache/NAME from vcache/name, there only now */
	kobject_uevent(&disk_to_dev(disk)->kobj, KOBJ_CHANGE);
	return 0;

out_put:
	put_disk(disk);
	d->disk = NULL;
out_ida:
	ida_free(&vcc_index_ida, d->index);
out_ref:
	percpu_ref_exit(&d->active);
	return err;
}

/**
 * vcc_dev_stop - remove /dev/vcacheN and wait for its bios to finish
 * @d: a started cached device
 *
 * The one teardown of a cached device's disk, used by detach, delete,
 * card removal and module unload.  After it the engine sees no more host
 * I/O for @d->id.
 */
void vcc_dev_stop(struct vcc_dev *d)
{
	if (!d->disk)
		return;
	vcc_sysfs_del(d);
	del_gendisk(d->disk);
	percpu_ref_kill(&d->active);
	wait_for_completion(&d->drained);
	percpu_ref_exit(&d->active);
	put_disk(d->disk);
	d->disk = NULL;
	ida_free(&vcc_index_ida, d->index);
}

int vcc_disk_init(void)
{
	vcc_major = register_blkdev(0, "vcache");
	if (vcc_major < 0)
		return vcc_major;
	vcc_io_cache = KMEM_CACHE(vcc_io, 0);
	if (!vcc_io_cache)
		goto out_blkdev;
	vcc_io_pool = mempool_create_slab_pool(BIO_POOL_SIZE * 4, vcc_io_cache);
	if (!vcc_io_pool)
		goto out_cache;
	return 0;

out_cache:
	kmem_cache_destroy(vcc_io_cache);
out_blkdev:
	unregister_blkdev(vcc_major, "vcache");
	return -ENOMEM;
}

void vcc_disk_exit(void)
{
	vcc_io_cache_drain();
	mempool_destroy(vcc_io_pool);
	kmem_cache_destroy(vcc_io_cache);
	unregister_blkdev(vcc_major, "vcache");
	ida_destroy(&vcc_index_ida);
}
