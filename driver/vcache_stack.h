/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stacking API of the vcache card driver, for in-module users of a card
 * (the cached device).  Implemented in vc_stack.c.
 *
 * Rules:
 *  - vcd_card_get() finds a live card by serial and takes a reference;
 *    vcd_card_put() drops it.  The reference keeps the handle valid, not
 *    the card: after the card is removed every call returns -ENODEV.
 *  - vcd_card_claim() is the exclusive claim of the card's space: one
 *    holder at a time, the disk opened exclusively (no mount, no other
 *    O_EXCL opener), bios go to the returned block_device.  The open pins
 *    vcache.ko, so card users stop (release) before the module can unload.
 *  - Notifier (vcd_card_register_notifier), called with the card as data,
 *    in process context, may sleep:
 *      VCD_CARD_GOING  the card is about to be removed: stop I/O and
 *                      release the claim before returning (its disk is
 *                      deleted next; I/O still in flight then fails);
 *      VCD_CARD_DEAD   the card failed: requests in flight end with
 *                      BLK_STS_OFFLINE, new bios fail at once.
 *  - Errors: a request with REQ_FAILFAST_DEV is not retried after an
 *    abort or a reset, a media error on it ends with BLK_STS_MEDIUM, a
 *    dead or removed card with BLK_STS_OFFLINE; other errors are
 *    BLK_STS_IOERR.  Requests without the flag see BLK_STS_IOERR for all of
 *    these (EIO) and are retried after a reset.  The cached device does
 *    not set it: a controller reset stays invisible to the cache, and a
 *    dead card reaches it through VCD_CARD_DEAD.
 */
#ifndef VCACHE_STACK_H
#define VCACHE_STACK_H

#include <linux/blkdev.h>
#include <linux/notifier.h>
#include <linux/types.h>

#include <vcache/vc_card.h>

struct vcd_card;

enum vcd_card_event {
	VCD_CARD_GOING = 1,
	VCD_CARD_DEAD,
	VCD_CARD_UP,		/* probed, live: its regions can be opened */
};

struct vcd_card_info {
	char serial[sizeof_field(struct vc_identify, serial) + 1];
	char model[sizeof_field(struct vc_identify, model) + 1];
	char disk[32];		/* vflashN */
	dev_t devt;		/* of vflashN */
	u64 capacity;		/* logical blocks */
	u32 lba_size;		/* bytes */
	u32 phys_block_size;	/* bytes */
	u32 max_xfer;		/* bytes per command */
	u32 max_segments;
	u32 max_discard_nlb;	/* 0: no discard */
	u32 max_wzeroes_nlb;	/* 0: no write-zeroes */
	bool write_cache;	/* volatile: FLUSH needed for durability */
	bool fua;
	bool live;		/* false: resetting, dead, or removed */
	bool dead;		/* killed (not shut down): VCD_CARD_DEAD sent or due */
};

struct vcd_card *vcd_card_get(const char *serial);
struct vcd_card *vcd_card_hold(struct vcd_card *card);
void vcd_card_put(struct vcd_card *card);
int vcd_card_claim(struct vcd_card *card, void *holder,
		   struct block_device **bdev);
void vcd_card_release(struct vcd_card *card, void *holder);
int vcd_card_info(struct vcd_card *card, struct vcd_card_info *info);
int vcd_card_health(struct vcd_card *card, struct vc_health_log *log);
/*
 * True once the card's removal began: it is no longer found and its users
 * hear (or heard) VCD_CARD_GOING.  A user that took the card from
 * vcd_card_for_each() checks it, under the lock its GOING handler takes,
 * before bringing anything up on the card.
 */
bool vcd_card_going(struct vcd_card *card);
int vcd_card_register_notifier(struct notifier_block *nb);
int vcd_card_unregister_notifier(struct notifier_block *nb);

/* A change uevent on the card's raw disk with @env ("KEY=value"). */
void vcd_card_uevent(struct vcd_card *card, const char *env);

/* Call @fn for every live card (holding a reference during the call). */
int vcd_card_for_each(int (*fn)(struct vcd_card *card, void *arg), void *arg);
/* The card whose raw disk is @devt (/dev/vflashN), referenced, or NULL. */
struct vcd_card *vcd_card_get_by_devt(dev_t devt);
/* Is @devt a card's raw disk (/dev/vflashN), its removal begun too? */
bool vcd_devt_is_card(dev_t devt);

/*
 * Card space (vc_space.c), like NVMe namespace management.  A table at
 * the end of the card (two copies, __le, magic, version, crc32c; see
 * docs/card-space.md) lists regions carved downward from below the table.
 * The raw disk /dev/vflashN shows LBA 0 up to the lowest region, or up to
 * the table's area when there is no region or no table at all: neither a
 * region nor the table is ever writable through it (in every state, so
 * nobody can plant a table there).  Each open region is a hidden disk on
 * the card's tag set (its own request_queue: blk-mq tags, timeouts,
 * aborts and resets of the card), whose sector 0 is the region's first
 * byte; its owner submits bios to vcd_region_bdev().
 *
 * Regions are owned by name (the cache's name: 1 to 31 printable ASCII
 * characters, no blanks, unique on the card).  @conf is an opaque blob
 * of the owner (its settings, the identities of its backing devices),
 * stored in the table and rewritten durably by vcd_region_set_conf().
 * The table is written with FUA before any of these calls return.
 *
 * Errors: -ENODEV (card gone or dead), -EEXIST (name taken), -ENOENT (no
 * such region), -ENOSPC (no free extent of @len), -EBUSY (the raw disk is
 * open and would shrink, or the region is open), -EINVAL (bad name,
 * length, block size, conf too large).  @err receives a one-line reason.
 */
#define VCD_REGION_NAME_MAX	32	/* with the NUL */
#define VCD_REGION_CONF_MAX	2048

struct vcd_region;
typedef void (*vcd_direct_end_t)(void *priv, blk_status_t sts);

struct vcd_region_info {
	char name[VCD_REGION_NAME_MAX];
	u64 start;		/* bytes from the card's first byte */
	u64 len;		/* bytes */
	u32 block_size;		/* bytes: the owner's block size */
	u32 conf_len;
	u8 conf[VCD_REGION_CONF_MAX];
};

int vcd_region_create(struct vcd_card *card, const char *name, u64 len,
		      u32 block_size, const void *conf, u32 conf_len,
		      struct vcd_region **out, char *err, size_t errlen);
int vcd_region_open(struct vcd_card *card, const char *name,
		    struct vcd_region **out);
struct block_device *vcd_region_bdev(struct vcd_region *r);
void vcd_region_get_info(struct vcd_region *r, struct vcd_region_info *info);
int vcd_region_set_conf(struct vcd_region *r, const void *conf, u32 conf_len);
/*
 * The direct path of a region (the cached device's read hits): the data
 * of @src at @iter (@iter.bi_size bytes) read or written (@opf
 * REQ_OP_READ or REQ_OP_WRITE, no flags) at @sector of the region by one
 * request on the card's tag set, issued straight to the hardware queue
 * of this CPU: no second bio through the block layer, no plug, no
 * scheduler, and nothing allocated (the request carries its own bio over
 * @src's pages).  Resets, timeouts, aborts, retries and quiescing are
 * the card's, as for any request of the region.
 *
 * Returns 0 when issued: @end(@priv, status) is then called once, from
 * the request's completion (hard interrupt context, on the CPU of the
 * queue's vector).  Nonzero: nothing was done (no tag free without
 * waiting, queue frozen or dying, card busy, data beyond the card's
 * limits, any error before the card took it): send a bio instead, which
 * waits, retries or fails as the block layer does.  Never sleeps.
 */
int vcd_region_direct(struct vcd_region *r, blk_opf_t opf, sector_t sector,
		      struct bio *src, struct bvec_iter iter,
		      vcd_direct_end_t end, void *priv);

/* Close: the hidden disk goes away; I/O must have stopped. */
void vcd_region_close(struct vcd_region *r);
int vcd_region_delete(struct vcd_card *card, const char *name, char *err,
		      size_t errlen);
/* Fill up to @max entries of @out (may be NULL); returns the count. */
int vcd_region_list(struct vcd_card *card, struct vcd_region_info *out,
		    int max);
/* Free bytes for a new region (largest free extent). */
u64 vcd_space_free(struct vcd_card *card);
/*
 * Write an empty table over a damaged one (state "damaged": neither copy
 * valid, the raw disk read-only).  Refused (-EBUSY) when a damaged copy
 * still names regions, unless @force: their caches are then forgotten
 * (their data stays on the card, unreachable, and the raw disk may
 * overwrite it).  -EINVAL when the table is not damaged, -ENODEV when the
 * card is gone.  On success the raw disk is read-write again.
 */
int vcd_space_repair(struct vcd_card *card, bool force, char *err,
		     size_t errlen);

#endif /* VCACHE_STACK_H */
