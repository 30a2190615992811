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
 *  - Errors: a request with REQ_FAILFAST_DEV (what an in-kernel user such
 *    as a cache sets) is not retried after an abort or a reset, a media
 *    error on it ends with BLK_STS_MEDIUM, a dead or removed card with
 *    BLK_STS_OFFLINE; other errors are BLK_STS_IOERR.  Requests without the
 *    flag (user space) see BLK_STS_IOERR for all of these (EIO).
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
};

struct vcd_card_info {
	char serial[sizeof_field(struct vc_identify, serial) + 1];
	char model[sizeof_field(struct vc_identify, model) + 1];
	char disk[32];		/* vflashN */
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
};

struct vcd_card *vcd_card_get(const char *serial);
void vcd_card_put(struct vcd_card *card);
int vcd_card_claim(struct vcd_card *card, void *holder,
		   struct block_device **bdev);
void vcd_card_release(struct vcd_card *card, void *holder);
int vcd_card_info(struct vcd_card *card, struct vcd_card_info *info);
int vcd_card_health(struct vcd_card *card, struct vc_health_log *log);
int vcd_card_register_notifier(struct notifier_block *nb);
int vcd_card_unregister_notifier(struct notifier_block *nb);

#endif /* VCACHE_STACK_H */
