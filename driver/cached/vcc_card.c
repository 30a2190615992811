// SPDX-License-Identifier: GPL-2.0
/*
 * the flash of a cache: a card region (kept in the card's space table,
 * restored when the card is probed) or any other block device.
 */
#define pr_fmt(fmt) "vcache: " fmt

#include "vc_format.h"
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vcc_card.h"

/*
 * The conf blob of a card cache, kept by the card in the region's table
 * entry (docs/card-space.md): the cached device names and identities of
 * the backing devices by engine id, and the settings.  Little-endian.
 */
#define VCC_CONF_MAGIC		0x464e4f43u	/* "CONF" */
/*
 * Version 2 has room for VCC_CONF_PARAMS parameters whatever the engine
 * has now (nr_params says how many are set); version 1 had exactly the
 * 15 of its time in place of that room, and is still read.
 */
#define VCC_CONF_VERSION	2
#define VCC_CONF_PARAMS		32
#define VCC_CONF_V1_PARAMS	15

struct vcc_conf_dev_disk {
	u8 in_use;
	u8 pad[7];
	char devname[VCACHE_NAME_MAX];
	char ident[VCACHE_IDENT_MAX];
};

struct vcc_conf_head {
	__le32 magic;
	__le32 version;
	__le32 crc;		/* crc32c of the blob with crc = 0 */
	__le32 mode;
	__le32 policy;
	__le32 nr_params;
};

struct vcc_conf_disk {
	struct vcc_conf_head h;
	__le64 params[VCC_CONF_PARAMS];
	struct vcc_conf_dev_disk dev[VC_MAX_BACKING];
};

struct vcc_conf_disk_v1 {
	struct vcc_conf_head h;
	__le64 params[VCC_CONF_V1_PARAMS];
	struct vcc_conf_dev_disk dev[VC_MAX_BACKING];
};

static_assert(sizeof(struct vcc_conf_disk) <= VCD_REGION_CONF_MAX);
static_assert(VC_NR_PARAMS <= VCC_CONF_PARAMS);
/* the sizes docs/card-space.md and tests/vm/fuzz/mdfuzz.py give */
static_assert(sizeof(struct vcc_conf_disk_v1) == 1552);
static_assert(sizeof(struct vcc_conf_disk) == 1688);

static void vcc_conf_encode(struct vcc_cache *c, struct vcc_conf_disk *b)
{
	int i;

	memset(b, 0, sizeof(*b));
	b->h.magic = cpu_to_le32(VCC_CONF_MAGIC);
	b->h.version = cpu_to_le32(VCC_CONF_VERSION);
	if (c->engine) {
		b->h.mode = cpu_to_le32(vc_cache_get_requested_mode(c->engine));
		b->h.policy = cpu_to_le32(vc_cache_get_policy(c->engine));
		b->h.nr_params = cpu_to_le32(VC_NR_PARAMS);
		for (i = 0; i < VC_NR_PARAMS; i++)
			b->params[i] = cpu_to_le64(vc_cache_get_param(c->engine,
								      i));
	}
	for (i = 0; i < VC_MAX_BACKING; i++) {
		b->dev[i].in_use = c->conf[i].in_use;
		memcpy(b->dev[i].devname, c->conf[i].devname,
		       sizeof(b->dev[i].devname));
		memcpy(b->dev[i].ident, c->conf[i].ident,
		       sizeof(b->dev[i].ident));
	}
	b->h.crc = cpu_to_le32(vc_crc32c(~0U, b, sizeof(*b)));
}

/*
 * Decode a conf blob (either version) into @c's conf and apply its
 * settings to the loaded engine.
 */
static int vcc_conf_decode(struct vcc_cache *c, const void *blob, u32 len)
{
	const struct vcc_conf_dev_disk *dev;
	const __le64 *params;
	struct vcc_conf_disk *b;
	u32 crc, n, size, room, refused = 0;
	int i, err = -EUCLEAN;

	if (len < sizeof(struct vcc_conf_disk_v1))
		return -EUCLEAN;
	switch (le32_to_cpu(((const struct vcc_conf_head *)blob)->version)) {
	case 1:
		size = sizeof(struct vcc_conf_disk_v1);
		room = VCC_CONF_V1_PARAMS;
		break;
	case VCC_CONF_VERSION:
		size = sizeof(struct vcc_conf_disk);
		room = VCC_CONF_PARAMS;
		break;
	default:
		return -EUCLEAN;
	}
	if (len < size)
		return -EUCLEAN;
	b = kzalloc_obj(*b, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	memcpy(b, blob, size);
	crc = le32_to_cpu(b->h.crc);
	b->h.crc = 0;
	if (le32_to_cpu(b->h.magic) != VCC_CONF_MAGIC ||
	    vc_crc32c(~0U, b, size) != crc)
		goto out;
	params = b->params;
	dev = (const void *)(params + room);
	for (i = 0; i < VC_MAX_BACKING; i++) {
		c->conf[i].in_use = dev[i].in_use;
		memcpy(c->conf[i].devname, dev[i].devname,
		       sizeof(c->conf[i].devname));
		c->conf[i].devname[VCACHE_NAME_MAX - 1] = 0;
		memcpy(c->conf[i].ident, dev[i].ident,
		       sizeof(c->conf[i].ident));
		c->conf[i].ident[VCACHE_IDENT_MAX - 1] = 0;
	}
	/*
	 * Settings only from a blob written with a running engine (the one
	 * made at create has none: the engine's own, loaded, stay).  The
	 * engine checks every value; a refused one keeps the loaded.  A
	 * parameter the blob does not have keeps the engine's (its default).
	 */
	n = min3(le32_to_cpu(b->h.nr_params), room, (u32)VC_NR_PARAMS);
	for (i = 0; i < n; i++)
		if (vc_cache_set_param(c->engine, i, le64_to_cpu(params[i])))
			refused++;
	if (n) {
		refused += !!vc_cache_set_policy(c->engine,
						 le32_to_cpu(b->h.policy));
		refused += !!vc_cache_set_mode(c->engine, le32_to_cpu(b->h.mode));
	}
	if (refused)
		pr_warn("%s: %u setting(s) in the card's table refused (the engine's kept): see vcache-config show %s --all\n",
			c->name, refused, c->name);
	err = 0;
out:
	kfree(b);
	return err;
}

/*
 * A cache on a plain block device keeps its names with the engine's own
 * metadata (format 3): the cache's in the superblock, each cached
 * device's in its device-table entry.  Written only when changed.
 */
static int vcc_save_labels(struct vcc_cache *c)
{
	struct vc_backing_info bi;
	char cur[VC_LABEL_LEN];
	int i, err;

	if (!c->engine)
		return 0;
	vc_cache_get_label(c->engine, cur);
	if (strcmp(cur, c->name)) {
		err = vc_cache_set_label(c->engine, c->name);
		if (err)
			return err == -EOPNOTSUPP ? 0 : err;	/* format 2 */
	}
	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (!c->conf[i].in_use ||
		    vc_cache_backing_info(c->engine, i, &bi) ||
		    !strcmp(bi.label, c->conf[i].devname))
			continue;
		err = vc_cache_set_dev_label(c->engine, i, c->conf[i].devname);
		if (err)
			return err;
	}
	return 0;
}

int vcc_save_conf(struct vcc_cache *c)
{
	struct vcc_conf_disk *b;
	int err;

	if (!c->region)
		return vcc_save_labels(c);
	b = kmalloc_obj(*b, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	vcc_conf_encode(c, b);
	err = vcd_region_set_conf(c->region, b, sizeof(*b));
	kfree(b);
	return err;
}

int vcc_card_repair(dev_t devt, bool force, struct netlink_ext_ack *ext)
{
	struct vcd_card *card = vcd_card_get_by_devt(devt);
	char msg[128] = "";
	int err;

	if (!card) {
		NL_SET_ERR_MSG_FMT(ext, "%d:%d is not the raw disk of a vcache card",
				   MAJOR(devt), MINOR(devt));
		return -ENODEV;
	}
	err = vcd_space_repair(card, force, msg, sizeof(msg));
	vcd_card_put(card);
	if (err && msg[0])
		NL_SET_ERR_MSG_FMT(ext, "%s", msg);
	return err;
}

/* ------------------------------------------------------------- open */
static void vcc_flash_init_dev(struct vcc_cache *c, struct block_device *b,
			       u64 size)
{
	vc_linux_dev_init(&c->flash, b, c->flash_name);
	if (size && size >> SECTOR_SHIFT < c->flash.dev.nr_sectors)
		c->flash.dev.nr_sectors = size >> SECTOR_SHIFT;
	c->size = c->flash.dev.nr_sectors << SECTOR_SHIFT;
	c->fbdev = b;
}

static int vcc_region_direct(void *region, blk_opf_t opf, sector_t sector,
			     struct bio *src, struct bvec_iter iter,
			     vc_linux_direct_end_t end, void *priv)
{
	return vcd_region_direct(region, opf, sector, src, iter, end, priv);
}

/*
 * The flash of a card cache: its region's hidden disk for bios, and the
 * direct path to the card's queues for read hits (vcache_stack.h).
 */
static void vcc_flash_init_region(struct vcc_cache *c)
{
	vcc_flash_init_dev(c, vcd_region_bdev(c->region), 0);
	vc_linux_dev_set_direct(&c->flash, vcc_region_direct, c->region);
}

static int vcc_flash_new_region(struct vcc_cache *c, struct vcd_card *card,
				u64 size, struct netlink_ext_ack *ext)
{
	struct vcd_region_info *ri;
	struct vcc_conf_disk *b;
	char err_msg[128] = "";
	int err;

	if (!size)
		size = vcd_space_free(card);
	b = kmalloc_obj(*b, GFP_KERNEL);
	ri = kmalloc_obj(*ri, GFP_KERNEL);
	err = -ENOMEM;
	if (!b || !ri)
		goto out;
	vcc_conf_encode(c, b);
	err = vcd_region_create(card, c->name, size, c->block_size, b,
				sizeof(*b), &c->region, err_msg,
				sizeof(err_msg));
	if (err) {
		if (err_msg[0])
			vcc_ext_err(ext, "%s", err_msg);
		else
			vcc_ext_err(ext, "card refused %llu bytes for cache %s (error %d)",
				    size, c->name, err);
		goto out;
	}
	vcd_region_get_info(c->region, ri);
	c->region_start = ri->start;
	vcc_flash_init_region(c);
out:
	kfree(ri);
	kfree(b);
	return err;
}

/* @c->card: @devt's card (vcc_create() looked it up), or NULL */
int vcc_flash_open_new(struct vcc_cache *c, dev_t devt, u64 size,
		       struct netlink_ext_ack *ext)
{
	struct vcd_card *card = c->card;
	int err;

	if (card) {
		struct vcd_card_info info;

		err = vcd_card_info(card, &info);
		if (err || !info.live) {
			vcc_ext_err(ext, "card %d:%d is not live", MAJOR(devt),
				    MINOR(devt));
			return err ? err : -ENODEV;
		}
		snprintf(c->flash_name, sizeof(c->flash_name), "%s", info.disk);
		strscpy(c->card_serial, info.serial, sizeof(c->card_serial));
		return vcc_flash_new_region(c, card, size, ext);
	}
	err = vcd_bdev_open_excl(devt, c, &c->fh);
	if (err) {
		vcc_ext_err(ext, "cache device %d:%d: no exclusive open (error %d): mounted or in use?",
			    MAJOR(devt), MINOR(devt), err);
		return err;
	}
	snprintf(c->flash_name, sizeof(c->flash_name), "%pg", c->fh.bdev);
	if (size > bdev_nr_bytes(c->fh.bdev)) {
		vcc_ext_err(ext, "--size %llu is larger than %s (%llu bytes)", size,
			    c->flash_name, bdev_nr_bytes(c->fh.bdev));
		vcd_bdev_close(&c->fh);
		return -EINVAL;
	}
	vcc_flash_init_dev(c, c->fh.bdev, size);
	return 0;
}

void vcc_flash_close(struct vcc_cache *c)
{
	if (c->region) {
		vcd_region_close(c->region);
		c->region = NULL;
	}
	if (c->fh.bdev)
		vcd_bdev_close(&c->fh);
	c->fbdev = NULL;
}

int vcc_flash_forget(struct vcc_cache *c)
{
	char msg[128] = "";
	int err = 0;

	/* c->card stays (vcc_name_taken() reads it): vcc_free() puts it */
	if (c->card) {
		err = vcd_region_delete(c->card, c->name, msg, sizeof(msg));
		if (err)
			pr_err("%s: cannot give its region back to the card: %s (error %d)\n",
			       c->name, msg, err);
	}
	return err;
}

/* ------------------------------------------------------------ restore */
/*
 * Automatic loads (a card's probe, a plain device's hotplug) never
 * salvage: a record sector or record that does not verify may have named
 * dirty blocks that nothing names any more, and those would read as the
 * backing device's older data, silently.  Such a cache is refused with
 * its reason; the administrator may salvage it (vcache-config salvage),
 * taking that risk knowingly.
 */
static const char *vcc_salvage_hint(int err)
{
	return err == -EUCLEAN || err == -EIO ?
	       "; if its records are damaged, vcache-config salvage loads what verifies" :
	       "";
}

/*
 * The engine of card cache @c is loaded: its table settings @conf, then
 * its cached devices (waiting for their backing devices).
 */
static void vcc_card_loaded(struct vcc_cache *c, const void *conf,
			    u32 conf_len)
{
	c->block_size = vcc_engine_block_size(c);
	if (vcc_conf_decode(c, conf, conf_len))
		pr_warn("%s: its settings in the card's table are damaged: cached device names are made up, settings are the cache's own\n",
			c->name);
	vcc_restore_devs(c);
}

/* Bring back cache @ri of @card (vcc_lock held).  Failures are logged. */
static void vcc_restore_one(struct vcd_card *card, struct vcd_region_info *ri)
{
	struct vcd_card_info info;
	struct vcc_cache *c;
	char msg[128] = "";
	int err;

	if (!vcc_valid_name(ri->name) || vcc_name_taken(ri->name, card)) {
		pr_err("card region '%*pE': bad or duplicate cache name, not loaded\n",
		       (int)strnlen(ri->name, VCD_REGION_NAME_MAX), ri->name);
		return;
	}
	c = vcc_alloc(ri->name);
	if (!c)
		return;
	if (vcd_card_info(card, &info))
		goto out_free;
	/* c->card's own reference, on this card (serials need not be unique) */
	c->card = vcd_card_hold(card);
	c->flash_devt = info.devt;
	snprintf(c->flash_name, sizeof(c->flash_name), "%s", info.disk);
	strscpy(c->card_serial, info.serial, sizeof(c->card_serial));
	c->block_size = ri->block_size;
	c->region_start = ri->start;
	err = vcd_region_open(card, ri->name, &c->region);
	if (err) {
		pr_err("%s: cannot open its region on %s (error %d)\n",
		       c->name, info.disk, err);
		goto out_fail;
	}
	vcc_flash_init_region(c);
	err = vc_cache_load(&c->flash.dev, 0, &c->engine, msg, sizeof(msg));
	if (err) {
		pr_err("%s: cannot load the cache: %s (error %d); it stays failed until deleted%s\n",
		       c->name, msg, err, vcc_salvage_hint(err));
		c->engine = NULL;
		/* kept for a salvage; without it, names are made up then */
		c->failed_conf = kmemdup(ri->conf, ri->conf_len, GFP_KERNEL);
		c->failed_conf_len = c->failed_conf ? ri->conf_len : 0;
		goto out_fail;
	}
	vcc_card_loaded(c, ri->conf, ri->conf_len);
	vcc_publish(c);
	pr_info("%s: loaded from %s\n", c->name, info.disk);
	vcnl_event(c, VCACHE_EV_LOADED, NULL, 0, NULL);
	return;

out_fail:
	/* listed as failed, so that the user sees it and can delete it */
	vcc_flash_close(c);
	vcc_publish(c);
	c->state = VCACHE_STATE_FAILED;
	return;
out_free:
	vcc_free(c);
}

int vcc_card_salvage(struct vcc_cache *c, struct netlink_ext_ack *ext)
{
	char msg[128] = "";
	struct vc_stats *st;
	int err;

	lockdep_assert_held(&vcc_lock);
	if (!c->card || c->engine || c->state != VCACHE_STATE_FAILED) {
		vcc_ext_err(ext, "%s: only a card cache that failed to load is salvaged",
			    c->name);
		return -EINVAL;
	}
	err = vcd_region_open(c->card, c->name, &c->region);
	if (err) {
		vcc_ext_err(ext, "%s: cannot open its region (error %d)", c->name,
			    err);
		return err;
	}
	vcc_flash_init_region(c);
	err = vc_cache_load(&c->flash.dev, VC_LOAD_SALVAGE, &c->engine, msg,
			    sizeof(msg));
	if (err) {
		c->engine = NULL;
		vcc_flash_close(c);
		pr_err("%s: salvage: cannot load the cache: %s (error %d)\n",
		       c->name, msg, err);
		vcc_ext_err(ext, "%s: not loaded: %s", c->name, msg[0] ? msg : "?");
		return err;
	}
	vcc_card_loaded(c, c->failed_conf, c->failed_conf_len);
	kfree(c->failed_conf);
	c->failed_conf = NULL;
	c->failed_conf_len = 0;
	c->state = VCACHE_STATE_RUNNING;
	vcc_update_state(c);
	st = kmalloc_obj(*st, GFP_KERNEL);
	if (st) {
		vc_cache_get_stats(c->engine, st);
		pr_warn("%s: salvaged by the administrator: %llu record sectors and %llu records skipped, %llu blocks marked lost\n",
			c->name, st->load_bad_sectors, st->load_bad_records,
			st->lost_marked);
		kfree(st);
	}
	vcnl_event(c, VCACHE_EV_LOADED, NULL, 0, NULL);
	return 0;
}

/* A cache of @card waits for a backing device (vcc_lock held). */
static bool vcc_card_waits(struct vcd_card *card)
{
	struct vcc_cache *c;
	int i;

	for (c = vcc_first(); c; c = vcc_next(c)) {
		if (c->card != card)
			continue;
		for (i = 0; i < VC_MAX_BACKING; i++)
			if (c->devs[i] &&
			    c->devs[i]->state == VCACHE_BS_WAITING)
				return true;
	}
	return false;
}

/*
 * Test hook: at module load, wait this long before listing each card's
 * regions, so that a test can remove a card in between (57-kernel-review).
 */
static unsigned int vcc_restore_delay_ms;
module_param_named(test_restore_delay_ms, vcc_restore_delay_ms, uint, 0444);
MODULE_PARM_DESC(test_restore_delay_ms,
		 "test hook: ms to wait before restoring each card's caches at module load (default 0)");

/*
 * The caches in @card's table come back (@arg non-NULL: at module load,
 * from vcd_card_for_each(), which may race the card's removal).
 */
static int vcc_restore_card(struct vcd_card *card, void *arg)
{
	struct vcd_region_info *ri;
	bool waiting;
	int i, n;

	if (arg && vcc_restore_delay_ms)
		msleep(vcc_restore_delay_ms);
	n = vcd_region_list(card, NULL, 0);
	if (n <= 0)
		return 0;
	ri = kvmalloc_array(n, sizeof(*ri), GFP_KERNEL);
	if (!ri)
		return 0;
	n = vcd_region_list(card, ri, n);
	mutex_lock(&vcc_lock);
	/*
	 * Not while the module unloads (vcc_exit() stopped every cache), nor
	 * once the card's removal began: its GOING notice (vcc_stop_all(),
	 * under vcc_lock) may have come and gone, and nothing would stop
	 * a cache restored now before the card's regions are taken away.
	 */
	for (i = 0; vcc_is_ready() && !vcd_card_going(card) && i < n; i++)
		vcc_restore_one(card, &ri[i]);
	waiting = vcc_card_waits(card);
	mutex_unlock(&vcc_lock);
	kvfree(ri);
	/*
	 * Backing devices that were there before the card are not announced
	 * again: ask udev to offer every block device (69-vcache.rules).
	 */
	if (waiting)
		vcd_card_uevent(card, "VCACHE_WAITING=1");
	return 0;
}

/*
 * Listed @c's card was killed (vcc_lock): @c failed, once; it serves what
 * the backing devices have.
 */
void vcc_card_failed(struct vcc_cache *c)
{
	lockdep_assert_held(&vcc_lock);
	if (c->state == VCACHE_STATE_FAILED)
		return;
	c->state = VCACHE_STATE_FAILED;
	pr_err("%s: its card failed: clean data is read from the backing devices, data only on flash is lost\n",
	       c->name);
	vcnl_event(c, VCACHE_EV_STATE, NULL, ENODEV, "card failed");
}

/* Was @c's card killed?  (A removed card: its removal stops @c.) */
bool vcc_card_killed(struct vcc_cache *c)
{
	struct vcd_card_info info;

	return c->card && !vcd_card_info(c->card, &info) && info.dead;
}

static void vcc_card_dead(struct vcd_card *card)
{
	struct vcc_cache *c;

	mutex_lock(&vcc_lock);
	for (c = vcc_first(); c; c = vcc_next(c))
		if (c->card == card)
			vcc_card_failed(c);
	mutex_unlock(&vcc_lock);
}

static int vcc_card_event(struct notifier_block *nb, unsigned long ev,
			  void *data)
{
	struct vcd_card *card = data;

	switch (ev) {
	case VCD_CARD_UP:
		vcc_restore_card(card, NULL);
		break;
	case VCD_CARD_GOING:
		vcc_stop_all(card);
		break;
	case VCD_CARD_DEAD:
		vcc_card_dead(card);
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block vcc_card_nb = {
	.notifier_call = vcc_card_event,
};

int vcc_card_init(void)
{
	int err = vcd_card_register_notifier(&vcc_card_nb);

	if (err)
		return err;
	/* cards probed before we listened (their removal may race this) */
	vcd_card_for_each(vcc_restore_card, &vcc_card_nb);
	return 0;
}

void vcc_card_exit(void)
{
	vcd_card_unregister_notifier(&vcc_card_nb);
}

/* ------------------------------------------- caches on a block device */
/*
 * The device I/O of a load from a block device (its exclusive open, which
 * keeps every other load, create or attach off it, and the engine's load),
 * without vcc_lock: a device that udev offers and that does not answer
 * holds no other command.  @c is not listed.  On failure @c's flash is
 * closed.
 */
static int vcc_bdev_load_flash(struct vcc_cache *c, dev_t devt, bool salvage,
			       struct netlink_ext_ack *ext)
{
	char msg[128] = "";
	int err;

	err = vcd_bdev_open_excl(devt, c, &c->fh);
	if (err) {
		vcc_ext_err(ext, "cannot open %d:%d exclusively (error %d)",
			    MAJOR(devt), MINOR(devt), err);
		return err;
	}
	snprintf(c->flash_name, sizeof(c->flash_name), "%pg", c->fh.bdev);
	vcc_flash_init_dev(c, c->fh.bdev, 0);
	err = vc_cache_load(&c->flash.dev, salvage ? VC_LOAD_SALVAGE : 0,
			    &c->engine, msg, sizeof(msg));
	if (err) {
		pr_err("%s: no cache loaded: %s (error %d)%s\n", c->flash_name,
		       msg[0] ? msg : "?", err,
		       salvage ? "" : vcc_salvage_hint(err));
		vcc_ext_err(ext, "%s: no cache loaded: %s (error %d)",
			    c->flash_name, msg[0] ? msg : "?", err);
		c->engine = NULL;
		vcc_flash_close(c);
	}
	return err;
}

int vcc_bdev_load(dev_t devt, bool salvage, struct netlink_ext_ack *ext)
{
	struct vc_backing_info bi;
	char name[VC_LABEL_LEN];
	struct vcc_cache *c;
	struct vcc_op op;
	int i, err;

	lockdep_assert_held(&vcc_lock);
	if (!vcc_is_ready())
		return -EAGAIN;
	if (vcd_devt_is_card(devt)) {
		vcc_ext_err(ext, "%d:%d is a card: its caches come with it",
			    MAJOR(devt), MINOR(devt));
		return -EINVAL;
	}
	if (vcc_devt_in_use(devt)) {
		vcc_ext_err(ext, "%d:%d is used by a cache already", MAJOR(devt),
			    MINOR(devt));
		return -EBUSY;
	}
	c = vcc_alloc("-");
	if (!c)
		return -ENOMEM;
	c->flash_devt = devt;
	vcc_unlock_op(&op, c);	/* rmmod waits for it (vcc_quiesce()) */
	err = vcc_bdev_load_flash(c, devt, salvage, ext);
	vcc_relock_op(&op);
	if (err)
		goto out_free;
	if (!vcc_is_ready() || c->stopping) {
		vcc_ext_err(ext, "%s: not loaded: the module is unloading",
			    c->flash_name);
		err = -ECANCELED;
		goto out_shutdown;
	}
	vc_cache_get_label(c->engine, name);
	if (!name[0])	/* made by an older module: named after its device */
		snprintf(name, sizeof(name), "cache-%.25s", c->flash_name);
	if (!vcc_valid_name(name) || vcc_name_taken(name, NULL)) {
		/* the name is the flash's: escaped, not echoed raw */
		vcc_ext_err(ext, "%s holds a cache named '%*pE': %s",
			    c->flash_name, (int)strnlen(name, sizeof(name)), name,
			    vcc_valid_name(name) ?
			    "a cache of that name is loaded already" :
			    "not a valid cache name");
		err = vcc_valid_name(name) ? -EEXIST : -EINVAL;
		goto out_shutdown;
	}
	strscpy(c->name, name, sizeof(c->name));
	c->block_size = vcc_engine_block_size(c);
	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (vc_cache_backing_info(c->engine, i, &bi))
			continue;
		c->conf[i].in_use = true;
		strscpy(c->conf[i].devname, bi.label, sizeof(c->conf[i].devname));
		strscpy(c->conf[i].ident, bi.uuid, sizeof(c->conf[i].ident));
	}
	vcc_restore_devs(c);
	vcc_publish(c);
	pr_info("%s: loaded from %s\n", c->name, c->flash_name);
	vcnl_event(c, VCACHE_EV_LOADED, NULL, 0, NULL);
	return 0;

out_shutdown:
	/* device I/O (the clean flag written): unlocked, as the load */
	vcc_unlock_op(&op, c);
	vc_cache_shutdown(c->engine, 0);
	c->engine = NULL;
	vcc_flash_close(c);
	vcc_relock_op(&op);
out_free:
	vcc_free(c);
	return err;
}
