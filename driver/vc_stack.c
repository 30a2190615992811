// SPDX-License-Identifier: GPL-2.0
/*
 * stacking API for in-module users of a vcache card: handles by serial,
 * exclusive claim, card info, health, going/dead notifier (vcache_stack.h).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "vcache_pci.h"
#include "vcache_stack.h"

static LIST_HEAD(vcd_cards);		/* bound, probed cards */
static DEFINE_MUTEX(vcd_cards_lock);
static BLOCKING_NOTIFIER_HEAD(vcd_card_chain);

static struct vcd_dev *card_dev(struct vcd_card *card)
{
	return container_of(card, struct vcd_dev, card);
}

static void vcd_card_free(struct kref *ref)
{
	struct vcd_dev *dev = container_of(ref, struct vcd_dev, card.ref);

	kfree(dev->card.claim);
	kfree(dev);
}

static void vcd_card_dead_work(struct work_struct *work)
{
	struct vcd_card *card = container_of(work, struct vcd_card, dead_work);

	blocking_notifier_call_chain(&vcd_card_chain, VCD_CARD_DEAD, card);
	vcd_card_put(card);
}

void vcd_stack_init_dev(struct vcd_dev *dev)
{
	kref_init(&dev->card.ref);
	INIT_LIST_HEAD(&dev->card.node);
	mutex_init(&dev->card.lock);
	INIT_WORK(&dev->card.dead_work, vcd_card_dead_work);
}

/* Probe finished: the card can be found. */
void vcd_stack_add(struct vcd_dev *dev)
{
	mutex_lock(&vcd_cards_lock);
	list_add_tail(&dev->card.node, &vcd_cards);
	mutex_unlock(&vcd_cards_lock);
	/* its users bring back what its regions hold */
	blocking_notifier_call_chain(&vcd_card_chain, VCD_CARD_UP, &dev->card);
}

/*
 * Removal starts: the card cannot be found any more, its users hear
 * VCD_CARD_GOING (and stop, release) before its disk is deleted, and the
 * API stops touching its hardware.
 */
void vcd_stack_going(struct vcd_dev *dev)
{
	struct vcd_card *card = &dev->card;
	bool listed;

	mutex_lock(&vcd_cards_lock);
	listed = !list_empty(&card->node);
	list_del_init(&card->node);
	mutex_unlock(&vcd_cards_lock);
	if (!listed)
		return;
	flush_work(&card->dead_work);	/* a DEAD notice comes first */
	blocking_notifier_call_chain(&vcd_card_chain, VCD_CARD_GOING, card);
	mutex_lock(&card->lock);
	card->gone = true;
	if (card->holder)
		dev_warn(&dev->pdev->dev,
			 "%s: still claimed after the removal notice: its I/O fails from now on\n",
			 dev->name);
	mutex_unlock(&card->lock);
}

bool vcd_card_going(struct vcd_card *card)
{
	bool going;

	mutex_lock(&vcd_cards_lock);
	going = list_empty(&card->node);
	mutex_unlock(&vcd_cards_lock);
	return going;
}

/* The card was killed (any context): tell its users from a work item. */
void vcd_stack_dead(struct vcd_dev *dev)
{
	WRITE_ONCE(dev->card.killed, true);
	kref_get(&dev->card.ref);
	if (!queue_work(vcd_wq, &dev->card.dead_work))
		vcd_card_put(&dev->card);
}

/* The driver lets go of the card: handles stay valid until their put. */
void vcd_stack_put_dev(struct vcd_dev *dev)
{
	mutex_lock(&dev->card.lock);
	dev->card.gone = true;
	mutex_unlock(&dev->card.lock);
	vcd_card_put(&dev->card);
}

/**
 * vcd_card_get - find a card by serial
 * @serial: the identify serial (as /sys/block/vflashN/device/serial)
 *
 * Returns a referenced handle (drop it with vcd_card_put()), or NULL when
 * no bound card has that serial.
 */
struct vcd_card *vcd_card_get(const char *serial)
{
	struct vcd_card *found = NULL;
	struct vcd_dev *dev;

	mutex_lock(&vcd_cards_lock);
	list_for_each_entry(dev, &vcd_cards, card.node) {
		if (!strcmp(dev->id.serial, serial)) {
			kref_get(&dev->card.ref);
			found = &dev->card;
			break;
		}
	}
	mutex_unlock(&vcd_cards_lock);
	return found;
}

/**
 * vcd_card_hold - take another reference on a card handle
 * @card: a handle the caller holds a reference on (e.g. a notifier's or
 *	vcd_card_for_each()'s)
 *
 * Returns @card; drop it with vcd_card_put().
 */
struct vcd_card *vcd_card_hold(struct vcd_card *card)
{
	kref_get(&card->ref);
	return card;
}

void vcd_card_put(struct vcd_card *card)
{
	if (card)
		kref_put(&card->ref, vcd_card_free);
}

/**
 * vcd_card_claim - claim a card's space exclusively
 * @card: the card
 * @holder: the claimer (any unique pointer), given again to release
 * @bdev: the card's block device, for bios
 *
 * Returns 0, -EBUSY (claimed by another holder, or the disk is open
 * exclusively elsewhere, e.g. mounted), -ENODEV (removed), -ENOMEM.
 */
int vcd_card_claim(struct vcd_card *card, void *holder,
		   struct block_device **bdev)
{
	struct vcd_dev *dev = card_dev(card);
	struct vcd_bdev_handle *h;
	int ret;

	mutex_lock(&card->lock);
	ret = -ENODEV;
	if (card->gone || !dev->disk_added)
		goto out;
	ret = -EBUSY;
	if (card->holder)
		goto out;
	ret = -ENOMEM;
	h = kzalloc_obj(*h, GFP_KERNEL);
	if (!h)
		goto out;
	ret = vcd_bdev_open_excl(disk_devt(dev->disk), holder, h);
	if (ret) {
		kfree(h);
		goto out;
	}
	card->holder = holder;
	card->claim = h;
	*bdev = h->bdev;
out:
	mutex_unlock(&card->lock);
	return ret;
}

/* Give the claim back (also after removal); other holders are ignored. */
void vcd_card_release(struct vcd_card *card, void *holder)
{
	mutex_lock(&card->lock);
	if (card->holder == holder && card->claim) {
		vcd_bdev_close(card->claim);
		kfree(card->claim);
		card->claim = NULL;
		card->holder = NULL;
	}
	mutex_unlock(&card->lock);
}

/* What the card is and can do.  0 or -ENODEV (removed). */
int vcd_card_info(struct vcd_card *card, struct vcd_card_info *info)
{
	struct vcd_dev *dev = card_dev(card);
	const struct vcd_ident *id = &dev->id;
	int ret = -ENODEV;

	mutex_lock(&card->lock);
	if (!card->gone) {
		memset(info, 0, sizeof(*info));
		strscpy(info->serial, id->serial, sizeof(info->serial));
		strscpy(info->model, id->model, sizeof(info->model));
		strscpy(info->disk, dev->name, sizeof(info->disk));
		info->devt = dev->disk ? disk_devt(dev->disk) : 0;
		info->capacity = id->capacity;
		info->lba_size = id->lba_size;
		info->phys_block_size = id->phys_block_size;
		info->max_xfer = id->max_xfer;
		info->max_segments = dev->max_segs;
		if (id->flags & VC_ID_F_DEALLOCATE)
			info->max_discard_nlb = id->max_discard_nlb;
		if (id->flags & VC_ID_F_WRITE_ZEROES)
			info->max_wzeroes_nlb = id->max_wzeroes_nlb;
		info->write_cache = id->flags & VC_ID_F_VWC;
		info->fua = id->flags & VC_ID_F_FUA;
		info->live = vcd_state(dev) == VCD_STATE_LIVE;
		info->dead = READ_ONCE(card->killed);
		ret = 0;
	}
	mutex_unlock(&card->lock);
	return ret;
}

/* The card's health log, fresh.  0, -ENODEV, -EAGAIN (not live), -EIO... */
int vcd_card_health(struct vcd_card *card, struct vc_health_log *log)
{
	struct vcd_dev *dev = card_dev(card);
	int ret = -ENODEV;

	mutex_lock(&card->lock);
	if (!card->gone)
		ret = vcd_state(dev) == VCD_STATE_LIVE ?
			vcd_get_health(dev, log) : -EAGAIN;
	mutex_unlock(&card->lock);
	return ret;
}

/**
 * vcd_card_for_each - call @fn for every bound card
 * @fn: called with a referenced card and @arg
 * @arg: passed to @fn
 *
 * @fn gets a referenced card and may sleep; a non-zero return stops the
 * walk and is returned.  Cards probed meanwhile are announced by
 * VCD_CARD_UP instead.
 */
int vcd_card_for_each(int (*fn)(struct vcd_card *card, void *arg), void *arg)
{
	struct vcd_card **cards;
	struct vcd_dev *dev;
	int n = 0, i, ret = 0;

	mutex_lock(&vcd_cards_lock);
	list_for_each_entry(dev, &vcd_cards, card.node)
		n++;
	cards = kcalloc(max(n, 1), sizeof(*cards), GFP_KERNEL);
	if (!cards) {
		mutex_unlock(&vcd_cards_lock);
		return -ENOMEM;
	}
	n = 0;
	list_for_each_entry(dev, &vcd_cards, card.node) {
		kref_get(&dev->card.ref);
		cards[n++] = &dev->card;
	}
	mutex_unlock(&vcd_cards_lock);
	for (i = 0; i < n; i++) {
		if (!ret)
			ret = fn(cards[i], arg);
		vcd_card_put(cards[i]);
	}
	kfree(cards);
	return ret;
}

void vcd_card_uevent(struct vcd_card *card, const char *env)
{
	struct vcd_dev *dev = card_dev(card);
	char *envp[2];

	envp[0] = (char *)env;
	envp[1] = NULL;
	mutex_lock(&card->lock);
	if (!card->gone && dev->disk_added)
		kobject_uevent_env(&disk_to_dev(dev->disk)->kobj, KOBJ_CHANGE,
				   envp);
	mutex_unlock(&card->lock);
}

/* The bound card whose raw disk is @devt, referenced, or NULL. */
struct vcd_card *vcd_card_get_by_devt(dev_t devt)
{
	struct vcd_card *found = NULL;
	struct vcd_dev *dev;

	mutex_lock(&vcd_cards_lock);
	list_for_each_entry(dev, &vcd_cards, card.node) {
		if (dev->disk_added && disk_devt(dev->disk) == devt) {
			kref_get(&dev->card.ref);
			found = &dev->card;
			break;
		}
	}
	mutex_unlock(&vcd_cards_lock);
	return found;
}

int vcd_card_register_notifier(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&vcd_card_chain, nb);
}

int vcd_card_unregister_notifier(struct notifier_block *nb)
{
	return blocking_notifier_chain_unregister(&vcd_card_chain, nb);
}

/* ------------------------------------------------ self-test (debugfs) */

/* One fail-fast read of LBA @lba; the block status. */
static blk_status_t vcd_stack_read(struct block_device *bdev, u64 lba,
				   unsigned int lba_size, struct page *page)
{
	struct bio *bio;
	blk_status_t sts;

	bio = bio_alloc(bdev, 1, REQ_OP_READ | REQ_FAILFAST_DEV, GFP_KERNEL);
	bio->bi_iter.bi_sector = lba * (lba_size >> SECTOR_SHIFT);
	__bio_add_page(bio, page, lba_size, 0);
	submit_bio_wait(bio);
	sts = bio->bi_status;
	bio_put(bio);
	return sts;
}

/**
 * vcd_stack_test - exercise the stacking API on a live card, for the tests
 * @serial: the card
 * @bad_lba: an LBA the test made unreadable (firmware read-error fault)
 *
 * Get, info, claim (a second claim is refused), health, a fail-fast read
 * of LBA 0 (OK) and of @bad_lba (BLK_STS_MEDIUM), release, claim again,
 * put.  Logs one line per step; returns 0 when every step behaved.
 */
int vcd_stack_test(const char *serial, u64 bad_lba)
{
	struct vcd_card_info *info;
	struct vc_health_log *log;
	struct block_device *bdev;
	struct vcd_card *card;
	blk_status_t sts = BLK_STS_OK, bad = BLK_STS_OK;
	int holder, other, r, ret = -EIO;
	struct page *page;

	card = vcd_card_get(serial);
	if (!card) {
		pr_err("vcache stack_test: FAIL: no card with serial '%s'\n",
		       serial);
		return -ENODEV;
	}
	info = kzalloc_obj(*info, GFP_KERNEL);
	log = kzalloc_obj(*log, GFP_KERNEL);
	page = alloc_page(GFP_KERNEL);
	if (!info || !log || !page) {
		ret = -ENOMEM;
		goto out;
	}
	r = vcd_card_info(card, info);
	if (r || strcmp(info->serial, serial) || !info->capacity ||
	    !info->live) {
		pr_err("vcache stack_test: FAIL: info %d\n", r);
		goto out;
	}
	pr_info("vcache stack_test: card %s (%s): %llu x %u bytes, max transfer %u, write cache %d, fua %d\n",
		info->serial, info->disk, info->capacity, info->lba_size,
		info->max_xfer, info->write_cache, info->fua);

	r = vcd_card_claim(card, &holder, &bdev);
	if (r) {
		pr_err("vcache stack_test: FAIL: claim: %d\n", r);
		goto out;
	}
	r = vcd_card_claim(card, &other, &bdev);
	if (r != -EBUSY) {
		pr_err("vcache stack_test: FAIL: second claim: %d, want -EBUSY\n",
		       r);
		if (!r)
			vcd_card_release(card, &other);
		vcd_card_release(card, &holder);
		goto out;
	}
	r = vcd_card_health(card, log);
	if (!r)
		sts = vcd_stack_read(bdev, 0, info->lba_size, page);
	if (!r && !sts)
		bad = vcd_stack_read(bdev, bad_lba, info->lba_size, page);
	vcd_card_release(card, &holder);
	if (r || sts || bad != BLK_STS_MEDIUM) {
		pr_err("vcache stack_test: FAIL: health %d, LBA 0 status %d, bad LBA %llu status %d (want BLK_STS_MEDIUM, %d)\n",
		       r, sts, bad_lba, bad, BLK_STS_MEDIUM);
		goto out;
	}
	pr_info("vcache stack_test: claimed (a second claim refused), health %llu media errors, LBA 0 read, bad LBA %llu: BLK_STS_MEDIUM\n",
		le64_to_cpu(log->media_errors), bad_lba);
	r = vcd_card_claim(card, &other, &bdev);
	if (r) {
		pr_err("vcache stack_test: FAIL: claim after release: %d\n", r);
		goto out;
	}
	vcd_card_release(card, &other);
	pr_info("vcache stack_test: PASS\n");
	ret = 0;
out:
	if (page)
		__free_page(page);
	kfree(log);
	kfree(info);
	vcd_card_put(card);
	return ret;
}
