// SPDX-License-Identifier: GPL-2.0
/*
 * card space: the table at the end of a card that shares its capacity
 * between the raw disk and regions (caches), and each open region as a
 * hidden disk on the card's tag set (vcache_stack.h, vc_space.h).
 */
#include <linux/bio.h>
#include <linux/ctype.h>
#include <linux/blkdev.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include <vcache/vc_space.h>

#include "compat.h"
#include "vc_format.h"
#include "vcache_pci.h"
#include "vc_release.h"
#include "vcache_stack.h"

static_assert(sizeof(struct vc_space_hdr) == VC_SPACE_BLOCK);
static_assert(sizeof(struct vc_space_entry) == VC_SPACE_BLOCK);
static_assert(VCD_REGION_NAME_MAX == VC_SPACE_NAME_LEN);
static_assert(VCD_REGION_CONF_MAX == VC_SPACE_CONF_MAX);

static int region_disk_new(struct vcd_dev *dev, const char *name, u64 start,
			   u64 len, const char *suffix,
			   struct vcd_region **out);

static struct vcd_dev *card_dev(struct vcd_card *card)
{
	return container_of(card, struct vcd_dev, card);
}

/* Entry @i of a copy of the table (in memory: dev->space, or one read). */
static struct vc_space_entry *copy_ent(void *copy, int i)
{
	return copy + VC_SPACE_BLOCK * (i + 1);
}

static struct vc_space_entry *space_ent(struct vcd_dev *dev, int i)
{
	return copy_ent(dev->space, i);
}

static struct vc_space_hdr *space_hdr(struct vcd_dev *dev)
{
	return dev->space;
}

static u64 card_bytes(struct vcd_dev *dev)
{
	return dev->id.capacity << dev->lba_shift;
}

static u64 table_start(struct vcd_dev *dev)
{
	return round_down(card_bytes(dev) - VC_SPACE_TABLE_BYTES,
			  VC_SPACE_ALIGN);
}

/*
 * One synchronous I/O of a vmalloc'ed buffer at byte @pos of the table,
 * through the table's own hidden disk (the raw disk ends below it).
 */
static int space_io(struct vcd_dev *dev, blk_opf_t opf, u64 pos, void *buf,
		    u32 len)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE), i;
	struct bio *bio;
	int ret;

	if (!dev->space_r || !dev->space_r->disk)
		return -ENODEV;
	bio = bio_alloc(dev->space_r->disk->part0, nr, opf | REQ_SYNC,
			GFP_KERNEL);
	bio->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
	for (i = 0; i < nr; i++) {
		u32 n = min_t(u32, len - i * PAGE_SIZE, PAGE_SIZE);

		if (bio_add_page(bio, vmalloc_to_page(buf + i * PAGE_SIZE), n,
				 0) != n) {
			bio_put(bio);
			return -EIO;
		}
	}
	if (op_is_write(opf))
		flush_kernel_vmap_range(buf, len);
	ret = submit_bio_wait(bio);
	if (!op_is_write(opf))
		invalidate_kernel_vmap_range(buf, len);
	bio_put(bio);
	return ret;
}

static u32 copy_crc(void *copy)
{
	struct vc_space_hdr *h = copy;
	__le32 saved = h->crc;
	u32 crc;

	h->crc = 0;
	crc = vc_crc32c(~0U, copy, VC_SPACE_COPY_BYTES);
	h->crc = saved;
	return crc;
}

enum copy_verdict { COPY_EMPTY, COPY_BAD, COPY_OK };

/* A region name as every writer makes them: printable, no blanks. */
static bool entry_name_ok(const char *name)
{
	size_t i, n = strnlen(name, VC_SPACE_NAME_LEN);

	if (!n || n == VC_SPACE_NAME_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!isascii(name[i]) || !isgraph(name[i]))
			return false;
	return true;
}

/*
 * A copy without its magic is no table only if nothing in it looks like
 * one: our header's version and block size, or an entry with a name and
 * an aligned length.  A table that lost its magic alone (a bit flip, a
 * wiped word) would otherwise be taken for none, and the raw disk would
 * grow over its regions, read-write; what a disk used otherwise before
 * leaves there is not likely to look so.
 */
static bool looks_like_table(void *copy)
{
	struct vc_space_hdr *h = copy;
	u32 i;

	if (le16_to_cpu(h->version) == VC_SPACE_VERSION &&
	    le16_to_cpu(h->block) == VC_SPACE_BLOCK)
		return true;
	for (i = 0; i < VC_SPACE_MAX_REGIONS; i++) {
		struct vc_space_entry *e = copy_ent(copy, i);
		u64 l = le64_to_cpu(e->len);

		if (entry_name_ok(e->name) && l && IS_ALIGNED(l, VC_SPACE_ALIGN))
			return true;
	}
	return false;
}

static enum copy_verdict check_copy(struct vcd_dev *dev, void *copy,
				    const char **why)
{
	struct vc_space_hdr *h = copy;
	u64 top = table_start(dev), prev_end = 0;
	u32 i, j, n;

	if (le32_to_cpu(h->magic) != VC_SPACE_MAGIC) {
		*why = "magic";
		return looks_like_table(copy) ? COPY_BAD : COPY_EMPTY;
	}
	*why = "checksum";
	if (copy_crc(copy) != le32_to_cpu(h->crc))
		return COPY_BAD;
	*why = "version";
	if (le16_to_cpu(h->version) != VC_SPACE_VERSION ||
	    le16_to_cpu(h->block) != VC_SPACE_BLOCK)
		return COPY_BAD;
	*why = "larger-card";
	if (le64_to_cpu(h->capacity) > card_bytes(dev))
		return COPY_BAD;
	n = le32_to_cpu(h->nr_regions);
	*why = "region-count";
	if (n > VC_SPACE_MAX_REGIONS)
		return COPY_BAD;
	/* entries are kept sorted by start, disjoint, below the table */
	for (i = 0; i < n; i++) {
		struct vc_space_entry *e = copy_ent(copy, i);
		u64 s = le64_to_cpu(e->start), l = le64_to_cpu(e->len);

		*why = "region-name";
		if (!entry_name_ok(e->name))
			return COPY_BAD;
		for (j = 0; j < i; j++)
			if (!strcmp(e->name, copy_ent(copy, j)->name))
				return COPY_BAD;
		*why = "region-entry";
		if (!l || !IS_ALIGNED(s, VC_SPACE_ALIGN) ||
		    !IS_ALIGNED(l, VC_SPACE_ALIGN) || s < prev_end ||
		    l > top || s > top - l ||
		    le32_to_cpu(e->conf_len) > VC_SPACE_CONF_MAX)
			return COPY_BAD;
		prev_end = s + l;
	}
	/*
	 * Unused entries are zero (every writer keeps them so): one that is
	 * not says the count is wrong, and a count too low would give a
	 * region's space, data and all, to the raw disk.
	 */
	*why = "unused-entry";
	for (i = n; i < VC_SPACE_MAX_REGIONS; i++)
		if (memchr_inv(copy_ent(copy, i), 0, VC_SPACE_BLOCK))
			return COPY_BAD;
	return COPY_OK;
}

/*
 * The raw disk's end: the lowest region's start, else the table's, in
 * every state (none and damaged too): a table written through the raw
 * disk would be adopted at the next probe, regions and all.  Only a card
 * too small for a table is all raw (it never reads one).
 */
static u64 raw_end(struct vcd_dev *dev)
{
	struct vc_space_hdr *h = space_hdr(dev);

	if (dev->space_state == VCD_SPACE_TOO_SMALL)
		return card_bytes(dev);
	if (dev->space_state == VCD_SPACE_OK && le32_to_cpu(h->nr_regions))
		return le64_to_cpu(space_ent(dev, 0)->start);
	return table_start(dev);
}

/*
 * vcd_space_load - read the card-space table at probe, before the raw disk
 * is added; sets the raw disk's capacity.
 *
 * A card without a table is raw up to the table's area.  A table neither
 * copy of which is valid, or that cannot be read, leaves the raw disk
 * read-only (nothing that may belong to a cache gets overwritten) and no
 * region can be made or opened: the log and sysfs say why (per copy), and
 * vcd_space_repair() (vcache-config repair-table) rewrites it.  Returns 0,
 * or -ENOMEM or the error of adding the table's hidden disk.
 */
int vcd_space_load(struct vcd_dev *dev)
{
	const char *why_a = "", *why_b = "";
	enum copy_verdict va, vb;
	void *a, *b;
	bool b_more = false;
	int ra, rb, ret;
	u64 ga, gb;

	mutex_init(&dev->space_lock);
	INIT_LIST_HEAD(&dev->regions);
	dev->space = vzalloc(VC_SPACE_COPY_BYTES);
	b = vzalloc(VC_SPACE_COPY_BYTES);
	if (!dev->space || !b) {
		vfree(b);
		return -ENOMEM;
	}
	a = dev->space;
	dev->space_state = VCD_SPACE_NONE;
	if (card_bytes(dev) < 2 * VC_SPACE_TABLE_BYTES + VC_SPACE_ALIGN) {
		set_capacity(dev->disk, card_bytes(dev) >> SECTOR_SHIFT);
		dev->space_state = VCD_SPACE_TOO_SMALL;
		vfree(b);
		return 0;
	}
	ret = region_disk_new(dev, "", table_start(dev),
			      card_bytes(dev) - table_start(dev), "t",
			      &dev->space_r);
	if (ret) {
		vfree(b);
		return ret;
	}
	ra = space_io(dev, REQ_OP_READ, 0, a, VC_SPACE_COPY_BYTES);
	rb = space_io(dev, REQ_OP_READ, VC_SPACE_COPY_BYTES, b,
		      VC_SPACE_COPY_BYTES);
	va = ra ? COPY_BAD : check_copy(dev, a, &why_a);
	vb = rb ? COPY_BAD : check_copy(dev, b, &why_b);
	if (ra)
		why_a = "read-error";
	if (rb)
		why_b = "read-error";

	ga = le64_to_cpu(space_hdr(dev)->generation);
	gb = le64_to_cpu(((struct vc_space_hdr *)b)->generation);
	if (va == COPY_OK && vb == COPY_OK && ga == gb &&
	    memcmp(a, b, VC_SPACE_COPY_BYTES)) {
		/*
		 * Both valid, one generation, different tables: no writer
		 * makes that (a change writes A, then B, the same bytes).
		 * The copy listing more regions is used: one that lists fewer
		 * would give a region's space, data and all, to the raw disk.
		 */
		u32 na = le32_to_cpu(space_hdr(dev)->nr_regions);
		u32 nb = le32_to_cpu(((struct vc_space_hdr *)b)->nr_regions);

		b_more = nb > na;
		dev_warn(&dev->pdev->dev,
			 "%s: card-space table: copies A and B of generation %llu differ (%u and %u regions): copy %s used, the one listing more; the next change rewrites both\n",
			 dev->name, ga, na, nb, b_more ? "B" : "A");
	}
	if (va == COPY_OK && (vb != COPY_OK || ga > gb ||
			      (ga == gb && !b_more))) {
		dev->space_state = VCD_SPACE_OK;
	} else if (vb == COPY_OK) {
		memcpy(a, b, VC_SPACE_COPY_BYTES);
		dev->space_state = VCD_SPACE_OK;
	} else if (va == COPY_EMPTY && vb == COPY_EMPTY) {
		memset(a, 0, VC_SPACE_COPY_BYTES);
		dev->space_state = VCD_SPACE_NONE;
	} else {
		memset(a, 0, VC_SPACE_COPY_BYTES);
		dev->space_state = VCD_SPACE_DAMAGED;
		dev->space_why[0] = va == COPY_EMPTY ? "none" : why_a;
		dev->space_why[1] = vb == COPY_EMPTY ? "none" : why_b;
		dev_err(&dev->pdev->dev,
			"%s: card-space table unusable (copy A: %s, copy B: %s): the raw disk is read-only and no cache on this card can be loaded; `vcache-config repair-table` rewrites it\n",
			dev->name, dev->space_why[0], dev->space_why[1]);
	}
	if (dev->space_state == VCD_SPACE_OK && (va != COPY_OK ||
						 vb != COPY_OK)) {
		enum copy_verdict v = va != COPY_OK ? va : vb;
		const char *why = va != COPY_OK ? why_a : why_b;

		dev_warn(&dev->pdev->dev,
			 "%s: card-space table: copy %s %s%s%s; the next change rewrites it\n",
			 dev->name, va != COPY_OK ? "A" : "B",
			 v == COPY_EMPTY ? "missing" : "unusable (",
			 v == COPY_EMPTY ? "" : why, v == COPY_EMPTY ? "" : ")");
	} else if (dev->space_state == VCD_SPACE_OK && ga != gb)
		/* a change cut between its two writes (A first), or worse */
		dev_warn(&dev->pdev->dev,
			 "%s: card-space table: copy %s (generation %llu) is older than copy %s (%llu)%s; the next change rewrites it\n",
			 dev->name, ga < gb ? "A" : "B", min(ga, gb),
			 ga < gb ? "B" : "A", max(ga, gb),
			 ga < gb ? ", which no table write leaves: copy B used" :
			 "");
	vfree(b);

	set_capacity(dev->disk, raw_end(dev) >> SECTOR_SHIFT);
	if (dev->space_state == VCD_SPACE_DAMAGED) {
		set_disk_ro(dev->disk, true);
		return 0;
	}
	if (dev->space_state == VCD_SPACE_OK)
		dev_info(&dev->pdev->dev,
			 "%s: card-space table generation %llu: %u region(s), raw disk %llu MiB\n",
			 dev->name, le64_to_cpu(space_hdr(dev)->generation),
			 le32_to_cpu(space_hdr(dev)->nr_regions),
			 raw_end(dev) >> 20);
	else
		/* said, for a card whose table was expected elsewhere (size) */
		dev_info(&dev->pdev->dev,
			 "%s: no card-space table at byte %llu: raw disk %llu MiB, no caches\n",
			 dev->name, table_start(dev), raw_end(dev) >> 20);
	return 0;
}

/* Write the in-memory table as copy A then copy B (space_lock held). */
static int space_commit(struct vcd_dev *dev)
{
	struct vc_space_hdr *h = space_hdr(dev);
	int ret;

	h->magic = cpu_to_le32(VC_SPACE_MAGIC);
	h->version = cpu_to_le16(VC_SPACE_VERSION);
	h->block = cpu_to_le16(VC_SPACE_BLOCK);
	h->generation = cpu_to_le64(le64_to_cpu(h->generation) + 1);
	h->capacity = cpu_to_le64(card_bytes(dev));
	h->lba_size = cpu_to_le32(dev->id.lba_size);
	h->max_regions = cpu_to_le32(VC_SPACE_MAX_REGIONS);
	h->crc = 0;
	h->crc = cpu_to_le32(copy_crc(dev->space));
	ret = space_io(dev, REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA, 0,
		       dev->space, VC_SPACE_COPY_BYTES);
	if (!ret)
		ret = space_io(dev, REQ_OP_WRITE | REQ_FUA, VC_SPACE_COPY_BYTES,
			       dev->space, VC_SPACE_COPY_BYTES);
	if (ret)
		dev_err(&dev->pdev->dev,
			"%s: cannot write the card-space table: %d\n",
			dev->name, ret);
	else
		dev->space_state = VCD_SPACE_OK;
	return ret;
}

static int find_entry(struct vcd_dev *dev, const char *name)
{
	int i, n = le32_to_cpu(space_hdr(dev)->nr_regions);

	for (i = 0; i < n; i++)
		if (!strncmp(space_ent(dev, i)->name, name, VC_SPACE_NAME_LEN))
			return i;
	return -1;
}

static bool region_is_open(struct vcd_dev *dev, const char *name)
{
	struct vcd_region *r;

	list_for_each_entry(r, &dev->regions, node)
		if (!strcmp(r->name, name))
			return true;
	return false;
}

/*
 * The highest free extent of at least @len bytes below the table, raw
 * space included: its start, or 0 when none (0 is never a region start
 * with a table of at least one region above it... see the caller).
 * *largest: the largest free extent.
 */
static bool find_space(struct vcd_dev *dev, u64 len, u64 *start, u64 *largest)
{
	int i, n = le32_to_cpu(space_hdr(dev)->nr_regions);
	u64 top = table_start(dev);
	bool found = false;

	*largest = 0;
	for (i = n; i >= 0; i--) {
		u64 lo = i ? le64_to_cpu(space_ent(dev, i - 1)->start) +
			le64_to_cpu(space_ent(dev, i - 1)->len) : 0;
		u64 free = top > lo ? top - lo : 0;

		*largest = max(*largest, free);
		if (!found && free >= len) {
			*start = top - len;
			found = true;
		}
		if (i)
			top = le64_to_cpu(space_ent(dev, i - 1)->start);
	}
	return found;
}

/* The raw disk would end at @end: nobody may be using what goes. */
static int raw_can_shrink(struct vcd_dev *dev, u64 end, char *err,
			  size_t errlen)
{
	struct block_device *part;
	unsigned long idx;
	int tries;

	if (end >= (u64)get_capacity(dev->disk) << SECTOR_SHIFT)
		return 0;
	/* udev's probe after a change event holds it open briefly */
	for (tries = 0; disk_openers(dev->disk); tries++) {
		if (tries == 60) {
			snprintf(err, errlen,
				 "the raw disk %s is open (mounted or in use): it cannot shrink",
				 dev->name);
			return -EBUSY;
		}
		msleep(50);
	}
	rcu_read_lock();
	xa_for_each_start(&dev->disk->part_tbl, idx, part, 1) {
		u64 pend = (u64)(part->bd_start_sect + bdev_nr_sectors(part));

		if (pend << SECTOR_SHIFT > end) {
			/* named while RCU still keeps @part */
			snprintf(err, errlen,
				 "partition %pg reaches into the space asked for",
				 part);
			rcu_read_unlock();
			return -EBUSY;
		}
	}
	rcu_read_unlock();
	return 0;
}

static void raw_resize(struct vcd_dev *dev)
{
	if (dev->disk_added)
		set_capacity_and_notify(dev->disk,
					raw_end(dev) >> SECTOR_SHIFT);
	else
		set_capacity(dev->disk, raw_end(dev) >> SECTOR_SHIFT);
}

static int space_usable(struct vcd_dev *dev, char *err, size_t errlen)
{
	switch (dev->space_state) {
	case VCD_SPACE_GONE:
		snprintf(err, errlen, "%s is being removed", dev->name);
		return -ENODEV;
	case VCD_SPACE_DAMAGED:
		snprintf(err, errlen,
			 "%s: card-space table damaged: see vcache-config cards, repair-table",
			 dev->name);
		return -EUCLEAN;
	case VCD_SPACE_TOO_SMALL:
		snprintf(err, errlen, "%s is too small to hold caches",
			 dev->name);
		return -ENOSPC;
	default:
		break;
	}
	if (dev->card.gone || vcd_state(dev) == VCD_STATE_DEAD) {
		snprintf(err, errlen, "%s is gone or dead", dev->name);
		return -ENODEV;
	}
	return 0;
}

/* ------------------------------------------------------------ regions */

static const struct block_device_operations vcd_region_ops = {
	/* no owner: the region's user stops before the module unloads */
	.free_disk = vcd_free_disk,
};

/*
 * A hidden disk on the card's tag set for @len bytes at byte @start of the
 * card, named vcspaceN@suffix: not vflash*, which names the raw disks
 * that users and scripts glob (space_lock held, or at load).
 */
static int region_disk_new(struct vcd_dev *dev, const char *name, u64 start,
			   u64 len, const char *suffix,
			   struct vcd_region **out)
{
	struct vcd_limits l;
	struct vcd_region *r;
	struct gendisk *disk;
	int ret;

	r = kzalloc_obj(*r, GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->dev = dev;
	strscpy(r->name, name, sizeof(r->name));
	r->start_sect = start >> SECTOR_SHIFT;
	INIT_LIST_HEAD(&r->node);

	vcd_blk_limits(dev, &l);
	disk = vcd_alloc_disk(&dev->tagset, &l, dev);
	if (IS_ERR(disk)) {
		kfree(r);
		return PTR_ERR(disk);
	}
	disk->fops = &vcd_region_ops;
	disk->private_data = r;
	disk->flags |= GENHD_FL_HIDDEN;
	snprintf(disk->disk_name, sizeof(disk->disk_name), "vcspace%d%s",
		 dev->instance, suffix);
	set_capacity(disk, len >> SECTOR_SHIFT);
	r->disk = disk;

	/* on the list before any I/O, quiesced with the others if need be */
	mutex_lock(&dev->ctrl_lock);
	if (dev->quiesced)
		blk_mq_quiesce_queue(disk->queue);
	list_add_tail(&r->node, &dev->regions);
	mutex_unlock(&dev->ctrl_lock);

	ret = device_add_disk(&dev->pdev->dev, disk, NULL);
	if (ret) {
		mutex_lock(&dev->ctrl_lock);
		list_del_init(&r->node);
		if (dev->quiesced)
			blk_mq_unquiesce_queue(disk->queue);
		mutex_unlock(&dev->ctrl_lock);
		put_disk(disk);
		kfree(r);
		return ret;
	}
	vcd_release_hold();	/* its release calls vcd_free_disk() */
	kref_get(&dev->card.ref);
	*out = r;
	return 0;
}

/* Open table entry @i as a region (space_lock held). */
static int region_open(struct vcd_dev *dev, int i, struct vcd_region **out)
{
	struct vc_space_entry *e = space_ent(dev, i);
	char suffix[16];

	/* a number of its own: table positions shift as regions come */
	snprintf(suffix, sizeof(suffix), "r%u", dev->region_seq++);
	return region_disk_new(dev, e->name, le64_to_cpu(e->start),
			       le64_to_cpu(e->len), suffix, out);
}

/* Remove @r's disk (space_lock held); its I/O must have stopped. */
static void region_kill_disk(struct vcd_region *r)
{
	struct vcd_dev *dev = r->dev;
	struct gendisk *disk = r->disk;

	if (!disk)
		return;
	mutex_lock(&dev->ctrl_lock);
	list_del_init(&r->node);
	if (dev->quiesced)	/* balance: a reset unquiesces the list only */
		blk_mq_unquiesce_queue(disk->queue);
	mutex_unlock(&dev->ctrl_lock);
	del_gendisk(disk);
	put_disk(disk);
	r->disk = NULL;
}

/*
 * vcd_region_create - give a part of the card to a new region and open it.
 * See vcache_stack.h.  The region is durable in the table before this
 * returns; its content is whatever the card held there.
 */
int vcd_region_create(struct vcd_card *card, const char *name, u64 len,
		      u32 block_size, const void *conf, u32 conf_len,
		      struct vcd_region **out, char *err, size_t errlen)
{
	struct vcd_dev *dev = card_dev(card);
	struct vc_space_hdr *h;
	struct vc_space_entry *e;
	u64 start, largest;
	int i, n, ret;

	/* as the load checks it: a name it refuses would damage the table */
	if (!entry_name_ok(name)) {
		snprintf(err, errlen, "bad region name (1-%d printable characters, no blanks)",
			 VC_SPACE_NAME_LEN - 1);
		return -EINVAL;
	}
	if (conf_len > VC_SPACE_CONF_MAX || !block_size ||
	    !is_power_of_2(block_size) || block_size < dev->id.lba_size) {
		snprintf(err, errlen,
			 "bad block size %u or settings of %u bytes",
			 block_size, conf_len);
		return -EINVAL;
	}
	len = round_down(len, VC_SPACE_ALIGN);
	if (!len) {
		snprintf(err, errlen, "a region needs at least %u bytes",
			 VC_SPACE_ALIGN);
		return -EINVAL;
	}
	mutex_lock(&dev->space_lock);
	h = space_hdr(dev);
	ret = space_usable(dev, err, errlen);
	if (ret)
		goto out;
	n = le32_to_cpu(h->nr_regions);
	ret = -EEXIST;
	if (find_entry(dev, name) >= 0) {
		snprintf(err, errlen, "%s already has a region named %s",
			 dev->name, name);
		goto out;
	}
	ret = -ENOSPC;
	if (n == VC_SPACE_MAX_REGIONS) {
		snprintf(err, errlen, "%s already has %d regions, the most",
			 dev->name, VC_SPACE_MAX_REGIONS);
		goto out;
	}
	if (!find_space(dev, len, &start, &largest)) {
		snprintf(err, errlen,
			 "%s has no free extent of %llu bytes (largest %llu)",
			 dev->name, len, largest);
		goto out;
	}
	/* the raw disk may lose its top */
	if (!n || start < raw_end(dev)) {
		ret = raw_can_shrink(dev, start, err, errlen);
		if (ret)
			goto out;
	}

	/* insert sorted by start */
	for (i = 0; i < n && le64_to_cpu(space_ent(dev, i)->start) < start;
	     i++)
		;
	memmove(space_ent(dev, i + 1), space_ent(dev, i),
		(size_t)(n - i) * VC_SPACE_BLOCK);
	e = space_ent(dev, i);
	memset(e, 0, sizeof(*e));
	strscpy(e->name, name, sizeof(e->name));
	e->start = cpu_to_le64(start);
	e->len = cpu_to_le64(len);
	e->block_size = cpu_to_le32(block_size);
	e->conf_len = cpu_to_le32(conf_len);
	e->created = cpu_to_le64(ktime_get_real_seconds());
	memcpy(e->conf, conf, conf_len);
	h->nr_regions = cpu_to_le32(n + 1);

	/* no raw I/O may land in the region: shrink and drain first */
	dev->space_state = VCD_SPACE_OK;
	raw_resize(dev);
	vcd_blk_drain(dev->disk->queue);
	ret = space_commit(dev);
	if (!ret)
		ret = region_open(dev, i, out);
	if (ret) {
		/* take it back out (the table on the card may have it) */
		memmove(space_ent(dev, i), space_ent(dev, i + 1),
			(size_t)(n - i) * VC_SPACE_BLOCK);
		memset(space_ent(dev, n), 0, VC_SPACE_BLOCK);
		h->nr_regions = cpu_to_le32(n);
		if (space_commit(dev))
			dev_err(&dev->pdev->dev,
				"%s: region %s may stay in the table; delete it by name\n",
				dev->name, name);
		raw_resize(dev);
		snprintf(err, errlen, "cannot record or open the region");
		goto out;
	}
	dev_info(&dev->pdev->dev,
		 "%s: region %s: %llu MiB at %llu MiB; raw disk now %llu MiB\n",
		 dev->name, name, len >> 20, start >> 20, raw_end(dev) >> 20);
out:
	mutex_unlock(&dev->space_lock);
	return ret;
}

int vcd_region_open(struct vcd_card *card, const char *name,
		    struct vcd_region **out)
{
	struct vcd_dev *dev = card_dev(card);
	char msg[96];
	int i, ret;

	mutex_lock(&dev->space_lock);
	ret = space_usable(dev, msg, sizeof(msg));
	if (ret)
		goto out;
	ret = -ENOENT;
	i = find_entry(dev, name);
	if (i < 0)
		goto out;
	ret = -EBUSY;
	if (region_is_open(dev, name))
		goto out;
	ret = region_open(dev, i, out);
out:
	mutex_unlock(&dev->space_lock);
	return ret;
}

/* The region's disk for bios; NULL once the card is gone. */
struct block_device *vcd_region_bdev(struct vcd_region *r)
{
	return r->disk ? r->disk->part0 : NULL;
}

void vcd_region_get_info(struct vcd_region *r, struct vcd_region_info *info)
{
	struct vcd_dev *dev = r->dev;
	struct vc_space_entry *e;
	int i;

	memset(info, 0, sizeof(*info));
	mutex_lock(&dev->space_lock);
	i = dev->space_state == VCD_SPACE_OK ? find_entry(dev, r->name) : -1;
	if (i >= 0) {
		e = space_ent(dev, i);
		strscpy(info->name, e->name, sizeof(info->name));
		info->start = le64_to_cpu(e->start);
		info->len = le64_to_cpu(e->len);
		info->block_size = le32_to_cpu(e->block_size);
		info->conf_len = le32_to_cpu(e->conf_len);
		memcpy(info->conf, e->conf, info->conf_len);
	}
	mutex_unlock(&dev->space_lock);
}

int vcd_region_set_conf(struct vcd_region *r, const void *conf, u32 conf_len)
{
	struct vcd_dev *dev = r->dev;
	struct vc_space_entry *e;
	u8 *old;
	u32 old_len;
	char msg[96];
	int i, ret;

	if (conf_len > VC_SPACE_CONF_MAX)
		return -EINVAL;
	old = kmalloc(VC_SPACE_CONF_MAX, GFP_KERNEL);
	if (!old)
		return -ENOMEM;
	mutex_lock(&dev->space_lock);
	ret = space_usable(dev, msg, sizeof(msg));
	if (ret)
		goto out;
	ret = -ENOENT;
	i = find_entry(dev, r->name);
	if (i < 0)
		goto out;
	e = space_ent(dev, i);
	old_len = le32_to_cpu(e->conf_len);
	memcpy(old, e->conf, VC_SPACE_CONF_MAX);
	memset(e->conf, 0, VC_SPACE_CONF_MAX);
	memcpy(e->conf, conf, conf_len);
	e->conf_len = cpu_to_le32(conf_len);
	ret = space_commit(dev);
	if (ret) {
		memcpy(e->conf, old, VC_SPACE_CONF_MAX);
		e->conf_len = cpu_to_le32(old_len);
	}
out:
	mutex_unlock(&dev->space_lock);
	kfree(old);
	return ret;
}

/* ------------------------------------------------------- direct path */
static void region_direct_end(struct bio *bio)
{
	struct vcd_iod *iod = container_of(bio, struct vcd_iod, dbio);

	iod->dend(iod->dpriv, bio->bi_status);
}

/*
 * vcd_region_direct - a region's data straight to the card's hardware
 * queue (vcache_stack.h).  The request is allocated on the region's queue
 * (the card's tag set, the hardware context of this CPU) without waiting,
 * and carries a bio in its own driver data over @src's pages: a bio, not
 * bare pages, because that is what the card's queue_rq maps (and what
 * blk-mq ends: blk_mq_end_request() ends it with the request's status,
 * which calls region_direct_end()).  blk_insert_cloned_request() is the
 * block layer's entry for a request built by a stacking driver: it
 * checks it against the queue's limits and fault injection, accounts it,
 * and issues it directly (a quiesced queue, during a reset, keeps it until
 * dispatch resumes); any other outcome gives the request back and the
 * caller sends a bio.
 */
int vcd_region_direct(struct vcd_region *r, blk_opf_t opf, sector_t sector,
		      struct bio *src, struct bvec_iter iter,
		      vcd_direct_end_t end, void *priv)
{
	struct request_queue *q = r->disk->queue;
	unsigned long mask = queue_segment_boundary(q);
	unsigned int nsegs = 0;
	struct bvec_iter it;
	struct bio_vec bv;
	struct request *rq;
	struct vcd_iod *iod;
	struct bio *bio;

	if ((opf != REQ_OP_READ && opf != REQ_OP_WRITE) ||
	    iter.bi_size > queue_max_segment_size(q) ||
	    (iter.bi_size >> SECTOR_SHIFT) > queue_max_sectors(q) ||
	    sector + (iter.bi_size >> SECTOR_SHIFT) > get_capacity(r->disk))
		return -EINVAL;
	/*
	 * Segments as the block layer will count them: none is over the
	 * size limit, so a vector is one, or two across a boundary.
	 */
	__bio_for_each_bvec(bv, src, it, iter) {
		phys_addr_t p = page_to_phys(bv.bv_page) + bv.bv_offset;

		nsegs += 1 + ((p & ~mask) != ((p + bv.bv_len - 1) & ~mask));
		if (nsegs > queue_max_segments(q))
			return -EINVAL;
	}

	rq = blk_mq_alloc_request(q, opf, BLK_MQ_REQ_NOWAIT);
	if (IS_ERR(rq))
		return PTR_ERR(rq);
	iod = blk_mq_rq_to_pdu(rq);
	bio = &iod->dbio;
	/* no device at init: no blk-cgroup association to take and drop */
	bio_init(bio, NULL, src->bi_io_vec, 0, opf);
	bio->bi_bdev = r->disk->part0;
	bio_set_flag(bio, BIO_CLONED);		/* the vectors are @src's */
	bio->bi_iter = iter;
	bio->bi_iter.bi_sector = sector;
	bio->bi_end_io = region_direct_end;
	iod->dend = end;
	iod->dpriv = priv;
	if (blk_rq_append_bio(rq, bio))
		goto out_free;
	rq->__sector = sector;
	if (blk_insert_cloned_request(rq) == BLK_STS_OK)
		return 0;
out_free:
	rq->bio = NULL;
	rq->biotail = NULL;
	blk_mq_free_request(rq);
	return -EAGAIN;
}

/* Close: the hidden disk goes away (I/O must have stopped). */
void vcd_region_close(struct vcd_region *r)
{
	struct vcd_dev *dev;

	if (!r)
		return;
	dev = r->dev;
	mutex_lock(&dev->space_lock);
	region_kill_disk(r);
	mutex_unlock(&dev->space_lock);
	vcd_card_put(&dev->card);
	kfree(r);
}

int vcd_region_delete(struct vcd_card *card, const char *name, char *err,
		      size_t errlen)
{
	struct vcd_dev *dev = card_dev(card);
	struct vc_space_hdr *h;
	u8 *saved;
	int i, n, ret;

	saved = kmalloc(VC_SPACE_BLOCK, GFP_KERNEL);
	if (!saved)
		return -ENOMEM;
	mutex_lock(&dev->space_lock);
	h = space_hdr(dev);
	ret = space_usable(dev, err, errlen);
	if (ret)
		goto out;
	ret = -ENOENT;
	i = find_entry(dev, name);
	if (i < 0) {
		snprintf(err, errlen, "%s has no region %s", dev->name, name);
		goto out;
	}
	ret = -EBUSY;
	if (region_is_open(dev, name)) {
		snprintf(err, errlen, "region %s is open", name);
		goto out;
	}
	n = le32_to_cpu(h->nr_regions);
	memcpy(saved, space_ent(dev, i), VC_SPACE_BLOCK);
	memmove(space_ent(dev, i), space_ent(dev, i + 1),
		(size_t)(n - i - 1) * VC_SPACE_BLOCK);
	memset(space_ent(dev, n - 1), 0, VC_SPACE_BLOCK);
	h->nr_regions = cpu_to_le32(n - 1);
	ret = space_commit(dev);
	if (ret) {
		memmove(space_ent(dev, i + 1), space_ent(dev, i),
			(size_t)(n - i - 1) * VC_SPACE_BLOCK);
		memcpy(space_ent(dev, i), saved, VC_SPACE_BLOCK);
		h->nr_regions = cpu_to_le32(n);
		snprintf(err, errlen, "cannot write the card-space table");
		goto out;
	}
	raw_resize(dev);	/* the raw disk may grow back */
	dev_info(&dev->pdev->dev, "%s: region %s deleted; raw disk %llu MiB\n",
		 dev->name, name, raw_end(dev) >> 20);
out:
	mutex_unlock(&dev->space_lock);
	kfree(saved);
	return ret;
}

int vcd_region_list(struct vcd_card *card, struct vcd_region_info *out,
		    int max)
{
	struct vcd_dev *dev = card_dev(card);
	int i, n;

	mutex_lock(&dev->space_lock);
	n = dev->space_state == VCD_SPACE_OK ?
		le32_to_cpu(space_hdr(dev)->nr_regions) : 0;
	for (i = 0; out && i < n && i < max; i++) {
		struct vc_space_entry *e = space_ent(dev, i);

		memset(&out[i], 0, sizeof(out[i]));
		strscpy(out[i].name, e->name, sizeof(out[i].name));
		out[i].start = le64_to_cpu(e->start);
		out[i].len = le64_to_cpu(e->len);
		out[i].block_size = le32_to_cpu(e->block_size);
		out[i].conf_len = le32_to_cpu(e->conf_len);
		memcpy(out[i].conf, e->conf, out[i].conf_len);
	}
	mutex_unlock(&dev->space_lock);
	return out ? min(n, max) : n;
}

u64 vcd_space_free(struct vcd_card *card)
{
	struct vcd_dev *dev = card_dev(card);
	u64 start, largest = 0;

	mutex_lock(&dev->space_lock);
	if (dev->space_state == VCD_SPACE_OK ||
	    dev->space_state == VCD_SPACE_NONE)
		find_space(dev, U64_MAX, &start, &largest);
	mutex_unlock(&dev->space_lock);
	return round_down(largest, VC_SPACE_ALIGN);
}

/*
 * The names of the regions a damaged copy at @pos still lists (one with
 * its magic, or one that lost it but looks like a table), into @names
 * (", " separated, as many as fit); their count.  Every entry is read,
 * not only the first nr_regions: the count may be what is damaged.  An
 * unreadable copy lists nothing; *gen gets the highest generation seen.
 */
static u32 damaged_lists(struct vcd_dev *dev, void *copy, u64 pos,
			 char *names, size_t len, u64 *gen)
{
	struct vc_space_hdr *h = copy;
	u32 i, listed = 0;

	if (space_io(dev, REQ_OP_READ, pos, copy, VC_SPACE_COPY_BYTES) ||
	    (le32_to_cpu(h->magic) != VC_SPACE_MAGIC &&
	     !looks_like_table(copy)))
		return 0;
	*gen = max(*gen, le64_to_cpu(h->generation));
	for (i = 0; i < VC_SPACE_MAX_REGIONS; i++) {
		struct vc_space_entry *e = copy_ent(copy, i);
		size_t used = strlen(names);

		if (!entry_name_ok(e->name))
			continue;	/* garbage, not a name */
		listed++;
		if (!strstr(names, e->name) && used + strlen(e->name) + 3 < len)
			snprintf(names + used, len - used, "%s%s",
				 used ? ", " : "", e->name);
	}
	return listed;
}

int vcd_space_repair(struct vcd_card *card, bool force, char *err,
		     size_t errlen)
{
	struct vcd_dev *dev = card_dev(card);
	char names[96] = "";
	u64 gen = 0;
	u32 listed;
	void *copy;
	int ret;

	copy = vzalloc(VC_SPACE_COPY_BYTES);
	if (!copy)
		return -ENOMEM;
	mutex_lock(&dev->space_lock);
	ret = -ENODEV;
	if (dev->space_state == VCD_SPACE_GONE) {
		snprintf(err, errlen, "%s is being removed", dev->name);
		goto out;
	}
	ret = -EINVAL;
	if (dev->space_state != VCD_SPACE_DAMAGED) {
		snprintf(err, errlen, "the card-space table of %s is %s, not damaged",
			 dev->name, dev->space_state == VCD_SPACE_OK ? "valid" :
			 dev->space_state == VCD_SPACE_NONE ? "absent" :
			 "impossible (card too small)");
		goto out;
	}
	ret = -ENODEV;
	if (dev->card.gone || vcd_state(dev) == VCD_STATE_DEAD) {
		snprintf(err, errlen, "%s is gone or dead", dev->name);
		goto out;
	}
	listed = damaged_lists(dev, copy, 0, names, sizeof(names), &gen);
	listed = max(listed, damaged_lists(dev, copy, VC_SPACE_COPY_BYTES,
					   names, sizeof(names), &gen));
	ret = -EBUSY;
	if (listed && !force) {
		snprintf(err, errlen, "%s: the damaged table lists %u cache(s): %s",
			 dev->name, listed, names);
		goto out;
	}
	memset(dev->space, 0, VC_SPACE_COPY_BYTES);
	/* above both old copies (a wrapped one loses nothing: both equal) */
	space_hdr(dev)->generation = cpu_to_le64(gen);
	ret = space_commit(dev);
	if (ret) {
		memset(dev->space, 0, VC_SPACE_COPY_BYTES);
		snprintf(err, errlen, "cannot write the card-space table of %s",
			 dev->name);
		goto out;
	}
	dev->space_why[0] = NULL;
	dev->space_why[1] = NULL;
	raw_resize(dev);
	set_disk_ro(dev->disk, false);
	dev_warn(&dev->pdev->dev,
		 "%s: card-space table rewritten empty (generation %llu)%s%s; the raw disk is read-write (%llu MiB)\n",
		 dev->name, le64_to_cpu(space_hdr(dev)->generation),
		 listed ? ", forgetting the caches " : "", listed ? names : "",
		 raw_end(dev) >> 20);
out:
	mutex_unlock(&dev->space_lock);
	vfree(copy);
	return ret;
}

/* sysfs: the table, one line per region, then the raw disk. */
ssize_t vcd_space_show(struct vcd_dev *dev, char *buf)
{
	static const char * const states[] = {
		[VCD_SPACE_NONE] = "none",
		[VCD_SPACE_OK] = "ok",
		[VCD_SPACE_DAMAGED] = "damaged",
		[VCD_SPACE_TOO_SMALL] = "too-small",
		[VCD_SPACE_GONE] = "gone",
	};
	int i, n, len;

	mutex_lock(&dev->space_lock);
	if (dev->space_state == VCD_SPACE_GONE) {
		mutex_unlock(&dev->space_lock);
		return sysfs_emit(buf, "table gone\n");
	}
	n = dev->space_state == VCD_SPACE_OK ?
		le32_to_cpu(space_hdr(dev)->nr_regions) : 0;
	len = sysfs_emit(buf, "table %s generation %llu regions %d raw_bytes %llu\n",
			 states[dev->space_state],
			 le64_to_cpu(space_hdr(dev)->generation), n,
			 (u64)get_capacity(dev->disk) << SECTOR_SHIFT);
	for (i = 0; i < n; i++) {
		struct vc_space_entry *e = space_ent(dev, i);

		len += sysfs_emit_at(buf, len,
				     "region %s start %llu bytes %llu block %u open %d\n",
				     e->name, le64_to_cpu(e->start),
				     le64_to_cpu(e->len),
				     le32_to_cpu(e->block_size),
				     region_is_open(dev, e->name));
	}
	if (dev->space_state == VCD_SPACE_DAMAGED)
		len += sysfs_emit_at(buf, len, "damaged copy_a %s copy_b %s\n",
				     dev->space_why[0], dev->space_why[1]);
	mutex_unlock(&dev->space_lock);
	return len;
}

/*
 * Removal: the disks of regions still open go (their I/O fails from now
 * on; their users were told to stop), and the table's.  From here the
 * table is GONE: a user holding an old handle (a module load listing the
 * cards it found a moment earlier) is refused, never given a region.
 */
void vcd_space_remove(struct vcd_dev *dev)
{
	struct vcd_region *r, *tmp;

	if (!dev->space)
		return;
	mutex_lock(&dev->space_lock);
	dev->space_state = VCD_SPACE_GONE;
	list_for_each_entry_safe(r, tmp, &dev->regions, node) {
		if (r == dev->space_r)
			continue;
		dev_warn(&dev->pdev->dev,
			 "%s: region %s still open at removal: its I/O fails\n",
			 dev->name, r->name);
		region_kill_disk(r);
	}
	if (dev->space_r) {
		region_kill_disk(dev->space_r);
		vcd_card_put(&dev->card);
		kfree(dev->space_r);
		dev->space_r = NULL;
	}
	mutex_unlock(&dev->space_lock);
}

/* The table's memory, with the card: it stays GONE for late callers. */
void vcd_space_release(struct vcd_dev *dev)
{
	if (!dev->space)	/* never loaded (probe failed first) */
		return;
	vcd_space_remove(dev);
	mutex_lock(&dev->space_lock);
	vfree(dev->space);
	dev->space = NULL;
	mutex_unlock(&dev->space_lock);
}

/* The offset of a request's queue on the card, in sectors. */
sector_t vcd_region_offset(struct request *rq)
{
	struct vcd_region *r = rq->q->disk->private_data;

	return r->start_sect;
}
