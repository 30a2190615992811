/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel-version difference of the vcache driver.
 *
 * The .c files never test LINUX_VERSION_CODE.  They are written against
 * the newest kernel's API, which this file provides on older kernels (the
 * backports style), so that they read like current upstream.  Where the
 * newest API cannot be emulated (a struct field older kernels lack), the
 * .c files call a vcd_ helper from here instead.  Supported, built and
 * tested: Debian's 6.1, 6.12 and newest kernel (scripts/kernels.sh); the
 * branches follow the upstream changes named next to them:
 *   6.9   blk_mq_alloc_disk() takes a struct queue_limits
 *   6.11  write cache, FUA and rotational become queue_limits features;
 *         the blk_queue_*() limit setters are gone
 *   6.14  blk_mq_pci_map_queues() -> blk_mq_map_hw_queues();
 *         blk_mq_freeze_queue() returns memflags for the unfreeze;
 *         BLK_MQ_F_SHOULD_MERGE removed (always merges)
 *   6.15  blk_rq_map_sg() loses its request_queue argument
 *   6.14  __crc32c_le() -> crc32c() (vcd_crc32c())
 *   7.0   kmalloc_obj(), kzalloc_obj(): typed allocation of one object
 *         (also in later 6.12.y)
 * and for the exclusive open of vc_stack.c: 6.5 blkdev_get_by_dev() takes
 * blk_mode_t + holder ops, blkdev_put() the holder; 6.8 bdev_open_by_dev()
 * handles; 6.9 bdev_file_open_by_dev() files; 6.10 bdev_fput() releases the
 * claim at once (a plain fput() defers it: a new claim right after fails).
 */
#ifndef VCACHE_COMPAT_H
#define VCACHE_COMPAT_H

#include <linux/version.h>
#include <linux/blk-cgroup.h>
#include <linux/blk-mq.h>
#include <linux/cgroup.h>
#include <linux/blkdev.h>
#include <linux/pci.h>
#include <linux/slab.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "vcache needs Linux 6.1 or later"
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 14, 0)
#include <linux/blk-mq-pci.h>
#endif

/* Queue limits of a card, in bytes or sectors as named. */
struct vcd_limits {
	unsigned int lba_size;
	unsigned int phys_block_size;
	unsigned int max_hw_sectors;
	unsigned int max_segments;
	unsigned int max_segment_size;
	unsigned int discard_granularity;	/* 0: no discard */
	unsigned int max_discard_sectors;
	unsigned int max_write_zeroes_sectors;
	bool write_cache;
	bool fua;
};

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
static inline void vcd_fill_queue_limits(struct queue_limits *lim,
					 const struct vcd_limits *l)
{
	lim->logical_block_size = l->lba_size;
	lim->physical_block_size = l->phys_block_size;
	lim->io_min = l->phys_block_size;
	lim->max_hw_sectors = l->max_hw_sectors;
	lim->max_segments = l->max_segments;
	lim->max_segment_size = l->max_segment_size;
	lim->discard_granularity = l->discard_granularity;
	lim->max_hw_discard_sectors = l->max_discard_sectors;
	lim->max_write_zeroes_sectors = l->max_write_zeroes_sectors;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
	if (l->write_cache)
		lim->features |= BLK_FEAT_WRITE_CACHE;
	if (l->write_cache && l->fua)
		lim->features |= BLK_FEAT_FUA;
#endif
}
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static inline void vcd_set_queue_features(struct request_queue *q,
					  const struct vcd_limits *l)
{
}
#else
/* Before 6.11 these were queue flags, set after allocation. */
static inline void vcd_set_queue_features(struct request_queue *q,
					  const struct vcd_limits *l)
{
	blk_queue_write_cache(q, l->write_cache, l->fua);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
}
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
/* Before 6.9 the limits were set on the queue after allocation. */
static inline void vcd_set_queue_limits(struct request_queue *q,
					const struct vcd_limits *l)
{
	blk_queue_logical_block_size(q, l->lba_size);
	blk_queue_physical_block_size(q, l->phys_block_size);
	blk_queue_io_min(q, l->phys_block_size);
	blk_queue_max_hw_sectors(q, l->max_hw_sectors);
	blk_queue_max_segments(q, l->max_segments);
	blk_queue_max_segment_size(q, l->max_segment_size);
	if (l->discard_granularity) {
		q->limits.discard_granularity = l->discard_granularity;
		blk_queue_max_discard_sectors(q, l->max_discard_sectors);
	}
	blk_queue_max_write_zeroes_sectors(q, l->max_write_zeroes_sectors);
	vcd_set_queue_features(q, l);
}
#endif

/**
 * vcd_alloc_disk - allocate a blk-mq disk with the card's queue limits
 * @set: tag set of the card
 * @l: limits
 * @queuedata: request_queue->queuedata
 *
 * Returns the disk (non-rotational, no entropy contribution) or an ERR_PTR.
 */
static inline struct gendisk *vcd_alloc_disk(struct blk_mq_tag_set *set,
					     const struct vcd_limits *l,
					    void *queuedata)
{
	struct gendisk *disk;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	struct queue_limits lim = { };

	vcd_fill_queue_limits(&lim, l);
	disk = blk_mq_alloc_disk(set, &lim, queuedata);
	if (IS_ERR(disk))
		return disk;
	vcd_set_queue_features(disk->queue, l);
#else
	disk = blk_mq_alloc_disk(set, queuedata);
	if (IS_ERR(disk))
		return disk;
	vcd_set_queue_limits(disk->queue, l);
#endif
	return disk;
}

/**
 * vcd_alloc_bio_disk - allocate a bio-based disk (the cached device)
 * @l: limits (max_segments etc. as for vcd_alloc_disk)
 *
 * Returns the disk (non-rotational, no entropy contribution) or an ERR_PTR.
 */
static inline struct gendisk *vcd_alloc_bio_disk(const struct vcd_limits *l)
{
	struct gendisk *disk;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	struct queue_limits lim = { };

	vcd_fill_queue_limits(&lim, l);
	disk = blk_alloc_disk(&lim, NUMA_NO_NODE);
	if (IS_ERR(disk))
		return disk;
	vcd_set_queue_features(disk->queue, l);
#else
	disk = blk_alloc_disk(NUMA_NO_NODE);
	if (!disk)
		return ERR_PTR(-ENOMEM);
	vcd_set_queue_limits(disk->queue, l);
#endif
	return disk;
}

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 14, 0)
/* Merging became unconditional in 6.14 and the flag went away. */
static inline int vcd_compat_alloc_tag_set(struct blk_mq_tag_set *set)
{
	set->flags |= BLK_MQ_F_SHOULD_MERGE;
	return blk_mq_alloc_tag_set(set);
}

#define blk_mq_alloc_tag_set(set) vcd_compat_alloc_tag_set(set)

/* Map hardware queues to CPUs by the affinity of the device's vectors. */
static inline void vcd_compat_map_hw_queues(struct blk_mq_queue_map *qmap,
					    struct device *dev,
					    unsigned int offset)
{
	blk_mq_pci_map_queues(qmap, to_pci_dev(dev), offset);
}

#define blk_mq_map_hw_queues(qmap, dev, offset) \
	vcd_compat_map_hw_queues(qmap, dev, offset)
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 15, 0)
static inline int vcd_compat_rq_map_sg(struct request *rq,
				       struct scatterlist *sglist)
{
	return blk_rq_map_sg(rq->q, rq, sglist);
}

#define blk_rq_map_sg(rq, sglist) vcd_compat_rq_map_sg(rq, sglist)
#endif

/* In 7.0 and in later 6.12.y stable updates: test the macro, not a version. */
#ifndef kmalloc_obj
/* One object of the type of @var_or_type, typed (no void *). */
#define kmalloc_obj(var_or_type, gfp) ({				\
	typeof(var_or_type) *__vcd_p = kmalloc(sizeof(var_or_type), gfp); \
	__vcd_p;							\
})
#define kzalloc_obj(var_or_type, gfp) ({				\
	typeof(var_or_type) *__vcd_p = kzalloc(sizeof(var_or_type), gfp); \
	__vcd_p;							\
})
#endif

/* Wait for every request in flight on @q to end (new ones wait meanwhile). */
static inline void vcd_blk_drain(struct request_queue *q)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	unsigned int memflags = blk_mq_freeze_queue(q);

	blk_mq_unfreeze_queue(q, memflags);
#else
	blk_mq_freeze_queue(q);
	blk_mq_unfreeze_queue(q);
#endif
}

/* An exclusive open of a card's disk by an in-module user (vc_stack.c). */
struct vcd_bdev_handle {
	struct block_device *bdev;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	struct file *file;
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	struct bdev_handle *handle;
#endif
	void *holder;
};

static inline int vcd_bdev_open_excl(dev_t devt, void *holder,
				     struct vcd_bdev_handle *h)
{
	h->holder = holder;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	h->file = bdev_file_open_by_dev(devt, BLK_OPEN_READ | BLK_OPEN_WRITE,
					holder, NULL);
	if (IS_ERR(h->file))
		return PTR_ERR(h->file);
	h->bdev = file_bdev(h->file);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	h->handle = bdev_open_by_dev(devt, BLK_OPEN_READ | BLK_OPEN_WRITE,
				     holder, NULL);
	if (IS_ERR(h->handle))
		return PTR_ERR(h->handle);
	h->bdev = h->handle->bdev;
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	h->bdev = blkdev_get_by_dev(devt, BLK_OPEN_READ | BLK_OPEN_WRITE,
				    holder, NULL);
	if (IS_ERR(h->bdev))
		return PTR_ERR(h->bdev);
#else
	h->bdev = blkdev_get_by_dev(devt, FMODE_READ | FMODE_WRITE | FMODE_EXCL,
				    holder);
	if (IS_ERR(h->bdev))
		return PTR_ERR(h->bdev);
#endif
	return 0;
}

static inline void vcd_bdev_close(struct vcd_bdev_handle *h)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
	bdev_fput(h->file);	/* the claim goes now, not at a deferred fput */
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	fput(h->file);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
	bdev_release(h->handle);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	blkdev_put(h->bdev, h->holder);
#else
	blkdev_put(h->bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
#endif
	h->bdev = NULL;
}

/*
 * block_device_operations.open takes the gendisk since 6.5 (the
 * block_device before): vcd_bdev_open() is the cached device's open
 * method on every kernel, calling vcc_disk_open() (cached/vcc_disk.c).
 */
struct gendisk;
int vcc_disk_open(struct gendisk *disk);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
static inline int vcd_bdev_open(struct gendisk *disk, blk_mode_t mode)
{
	return vcc_disk_open(disk);
}
#else
static inline int vcd_bdev_open(struct block_device *bdev, fmode_t mode)
{
	return vcc_disk_open(bdev->bd_disk);
}
#endif

/*
 * The cgroup a bio is charged to, for the cgroup lists of vc_nl_pid.c:
 * writeback bios carry the blkcg of the cgroup that dirtied the pages
 * (wbc_init_bio()), other bios their submitter's (bio_associate_blkg()).
 * struct blkcg_gq and struct blkcg are private to block/ on all three
 * kernels; bio_blkcg_css() is exported (GPL) and alike on 6.1, 6.12 and
 * 7.2 (a stub returning NULL without CONFIG_BLK_CGROUP), as are
 * cgroup_get_from_fd(), cgroup_parent() and cgroup_path_ns() (declared in
 * <linux/cgroup_namespace.h> from 7.x, which <linux/cgroup.h> includes).
 * 0: no cgroup (the bio has no blkg).
 */
static inline u64 vcd_bio_cgroup(struct bio *bio)
{
	struct cgroup_subsys_state *css = bio_blkcg_css(bio);

	return css ? (uintptr_t)css->cgroup : 0;
}

/* 6.2 mempool_is_saturated(): the pool holds its whole reserve. */
#include <linux/mempool.h>
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
static inline bool mempool_is_saturated(mempool_t *pool)
{
	return READ_ONCE(pool->curr_nr) >= pool->min_nr;
}
#endif

/*
 * 6.2 NL_SET_ERR_MSG_FMT(): a formatted extack message, in a buffer of the
 * extack itself (NETLINK_MAX_FMTMSG_LEN bytes, longer ones are cut).  6.1's
 * extack has no buffer: vc_compat_extack_fmt() (driver/cached/vcc_cache.c)
 * formats into one of the sending task's own, as long, which outlives the
 * ack; vc_compat_extack_exit() frees them after the family is gone.
 */
#include <net/netlink.h>
#ifndef NL_SET_ERR_MSG_FMT
#define VC_COMPAT_NL_FMT
#define NETLINK_MAX_FMTMSG_LEN	80
__printf(2, 3)
void vc_compat_extack_fmt(struct netlink_ext_ack *extack, const char *fmt,
			  ...);
void vc_compat_extack_exit(void);
#define NL_SET_ERR_MSG_FMT(extack, fmt, args...) \
	vc_compat_extack_fmt((extack), fmt, ##args)
#else
static inline void vc_compat_extack_exit(void)
{
}
#endif

/*
 * 6.14 renamed the built-in CRC32C __crc32c_le() crc32c() (<linux/crc32.h>,
 * accelerated where the CPU can); before it, crc32c() was libcrc32c's, a
 * module the driver would need loaded first.  The name cannot be emulated
 * without clashing with <linux/crc32c.h>: the engine's env calls this.
 */
#include <linux/crc32.h>
static inline u32 vcd_crc32c(u32 crc, const void *data, size_t len)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
	return crc32c(crc, data, len);
#else
	return __crc32c_le(crc, data, len);
#endif
}

#endif /* VCACHE_COMPAT_H */
