// SPDX-License-Identifier: GPL-2.0
/*
 * caches and their backing devices: create, delete, attach, detach,
 * hotplug, settings, flush, and the one teardown of a cache.
 */
#define pr_fmt(fmt) "vcache: " fmt

#include <linux/delay.h>
#include <linux/ctype.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vcc.h"
#include "vcc_card.h"

DEFINE_MUTEX(vcc_lock);	/* see vcc.h */
static LIST_HEAD(vcc_caches);
static bool vcc_ready;		/* vcc_lock: between init and exit */
/*
 * Operations running without vcc_lock (see vcc.h): struct vcc_op, of a
 * cache listed or not, and how many ended, which vcc_quiesce() waits on.
 */
static LIST_HEAD(vcc_unlocked);		/* vcc_lock */
static unsigned long vcc_unlocked_ends;	/* vcc_lock to change */
static DECLARE_WAIT_QUEUE_HEAD(vcc_unlocked_wq);
/* vcc_lock: struct vcc_dev being plugged in without it (vcc_plug_unlocked()) */
static LIST_HEAD(vcc_plugging);
/*
 * vcc_lock: caches not listed that run without it, by c->node: being
 * created (vcc_create()) or torn down for good (vcc_teardown_forget()).
 * Their names and flash are taken (vcc_name_taken(), vcc_devt_in_use()).
 */
static LIST_HEAD(vcc_unlisted);

#ifdef VC_COMPAT_NL_FMT
/*
 * 6.1 (compat.h): the message of a request must outlive its doit, until
 * netlink_ack() copies it, in the same system call of the same task.  So
 * each sending task has a buffer of its own, reused only by that task (its
 * previous request was acknowledged before it could send this one) or
 * once the task is gone; all are freed after the family is unregistered.
 */
struct vc_fmtmsg {
	struct list_head node;
	struct pid *owner;
	char buf[NETLINK_MAX_FMTMSG_LEN];
};

static LIST_HEAD(vc_fmtmsgs);
static DEFINE_SPINLOCK(vc_fmtmsg_lock);

void vc_compat_extack_fmt(struct netlink_ext_ack *extack, const char *fmt,
			  ...)
{
	struct vc_fmtmsg *m, *mine = NULL, *fresh;
	struct pid *me = task_pid(current);
	va_list ap;

	if (!extack)
		return;
	fresh = kzalloc_obj(*fresh, GFP_ATOMIC | __GFP_NOWARN);
	spin_lock(&vc_fmtmsg_lock);
	rcu_read_lock();
	list_for_each_entry(m, &vc_fmtmsgs, node) {
		if (m->owner == me) {
			mine = m;
			break;
		}
		if (!mine && !pid_task(m->owner, PIDTYPE_PID))
			mine = m;	/* its task is gone: take it over */
	}
	rcu_read_unlock();
	if (mine && mine->owner != me) {
		put_pid(mine->owner);
		mine->owner = get_pid(me);
	} else if (!mine && fresh) {
		mine = fresh;
		fresh = NULL;
		mine->owner = get_pid(me);
		list_add(&mine->node, &vc_fmtmsgs);
	}
	spin_unlock(&vc_fmtmsg_lock);
	kfree(fresh);
	if (!mine) {
		extack->_msg = "vcache: no memory for the error message";
		return;
	}
	va_start(ap, fmt);
	if (vsnprintf(mine->buf, sizeof(mine->buf), fmt, ap) >=
	    sizeof(mine->buf))
		pr_warn_ratelimited("truncated extack: %s\n", mine->buf);
	va_end(ap);
	extack->_msg = mine->buf;
}

void vc_compat_extack_exit(void)
{
	struct vc_fmtmsg *m, *tmp;

	list_for_each_entry_safe(m, tmp, &vc_fmtmsgs, node) {
		list_del(&m->node);
		put_pid(m->owner);
		kfree(m);
	}
}
#endif

const char *vcc_state_name(enum vcache_state s)
{
	static const char * const names[] = {
		[VCACHE_STATE_RUNNING] = "running",
		[VCACHE_STATE_WAITING] = "waiting",
		[VCACHE_STATE_DEGRADED] = "degraded",
		[VCACHE_STATE_FAILED] = "failed",
		[VCACHE_STATE_STOPPING] = "stopping",
	};

	return (unsigned int)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *vcc_bstate_name(enum vcache_backing_state s)
{
	static const char * const names[] = {
		[VCACHE_BS_ATTACHED] = "attached",
		[VCACHE_BS_WAITING] = "waiting",
		[VCACHE_BS_DETACHED_DIRTY] = "detached-dirty",
	};

	return (unsigned int)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

/*
 * Names of caches and cached devices: [A-Za-z0-9_.-], no leading . or -.
 * ASCII only: the kernel's ctype is Latin-1 (isalnum(0xff) is true).
 */
bool vcc_valid_name(const char *s)
{
	size_t i, n = strnlen(s, VCACHE_NAME_MAX);

	if (!n || n >= VCACHE_NAME_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!isascii(s[i]) ||
		    (!isalnum(s[i]) && !strchr("_.-", s[i])))
			return false;
	return true;
}

/* Identities: printable ASCII without spaces, 1..VCACHE_IDENT_MAX-1. */
static bool vcc_valid_ident(const char *s)
{
	size_t i, n = strnlen(s, VCACHE_IDENT_MAX);

	if (!n || n >= VCACHE_IDENT_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!isascii(s[i]) || !isgraph(s[i]))
			return false;
	return true;
}

struct vcc_cache *vcc_find(const char *name)
{
	struct vcc_cache *c;

	lockdep_assert_held(&vcc_lock);
	list_for_each_entry(c, &vcc_caches, node)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

struct vcc_cache *vcc_first(void)
{
	lockdep_assert_held(&vcc_lock);
	return list_first_entry_or_null(&vcc_caches, struct vcc_cache, node);
}

struct vcc_cache *vcc_next(struct vcc_cache *c)
{
	lockdep_assert_held(&vcc_lock);
	if (list_is_last(&c->node, &vcc_caches))
		return NULL;
	return list_next_entry(c, node);
}

/* A cached device named @devname anywhere (one being plugged too), or NULL. */
static struct vcc_dev *vcc_find_devname(const char *devname)
{
	struct vcc_cache *c;
	struct vcc_dev *d;
	int i;

	list_for_each_entry(c, &vcc_caches, node)
		for (i = 0; i < VC_MAX_BACKING; i++)
			if (c->devs[i] && !strcmp(c->devs[i]->devname, devname))
				return c->devs[i];
	list_for_each_entry(d, &vcc_plugging, plug_node)
		if (!strcmp(d->devname, devname))
			return d;
	return NULL;
}

/* Is @devt the flash or a backing device of any cache? */
bool vcc_devt_in_use(dev_t devt)
{
	struct vcc_cache *c;
	struct vcc_dev *d;
	int i;

	list_for_each_entry(c, &vcc_caches, node) {
		if (c->flash_devt == devt)
			return true;
		for (i = 0; i < VC_MAX_BACKING; i++)
			if (c->devs[i] && c->devs[i]->bh.bdev &&
			    c->devs[i]->bh.bdev->bd_dev == devt)
				return true;
	}
	list_for_each_entry(c, &vcc_unlisted, node)
		if (c->flash_devt == devt)
			return true;
	list_for_each_entry(d, &vcc_plugging, plug_node)
		if (d->plug_devt == devt)
			return true;
	return false;
}

struct vcc_dev *vcc_find_dev(struct vcc_cache *c, const char *devname,
			     dev_t devt)
{
	int i;

	for (i = 0; i < VC_MAX_BACKING; i++) {
		struct vcc_dev *d = c->devs[i];

		if (!d)
			continue;
		if (devname && !strcmp(d->devname, devname))
			return d;
		if (!devname && devt && d->bh.bdev && d->bh.bdev->bd_dev == devt)
			return d;
	}
	return NULL;
}

u64 vcc_dev_dirty_bytes(struct vcc_cache *c, u32 id)
{
	struct vc_backing_info bi;

	if (!c->engine || vc_cache_backing_info(c->engine, id, &bi))
		return 0;
	return bi.dirty_blocks * c->block_size;
}

u32 vcc_engine_block_size(struct vcc_cache *c)
{
	struct vc_stats *st = kmalloc_obj(*st, GFP_KERNEL);
	u32 bs = c->block_size;

	if (st && c->engine) {
		vc_cache_get_stats(c->engine, st);
		bs = (u32)st->block_size;
	}
	kfree(st);
	return bs;
}

/*
 * Dirty bytes of the whole cache, summed over its backing slots (no
 * allocation: a delete must never take "could not count" for "clean").
 */
static u64 vcc_dirty_bytes(struct vcc_cache *c)
{
	u64 v = 0;
	u32 i;

	for (i = 0; c->engine && i < VC_MAX_BACKING; i++)
		v += vcc_dev_dirty_bytes(c, i);
	return v;
}

/* ------------------------------------------------------------ backing */
static struct vcc_dev *vcc_dev_alloc(struct vcc_cache *c, const char *devname,
				     const char *ident)
{
	struct vcc_dev *d = kzalloc_obj(*d, GFP_KERNEL);

	if (!d)
		return NULL;
	d->cache = c;
	strscpy(d->devname, devname, sizeof(d->devname));
	strscpy(d->ident, ident, sizeof(d->ident));
	d->state = VCACHE_BS_WAITING;
	INIT_LIST_HEAD(&d->plug_node);
	return d;
}

/*
 * A disk found by identity and size alone: does it hold the clean blocks
 * the cache loaded for @d (vc_cache_verify_backing())?  Refused
 * (-EMEDIUMTYPE) when every block compared (two at least) differs: a disk
 * with a copied identity never gets another disk's dirty data.  Some
 * differing blocks are logged, not refused: a write-through write to a
 * cached block whose disk copy was not flushed yet when the power went
 * leaves the block clean in the cache and older on the disk (either is
 * right for a write nobody flushed), and on a small cache written
 * through that can be several of the few blocks compared.
 */
static int vcc_dev_verify(struct vcc_dev *d, struct netlink_ext_ack *ext)
{
	struct vcc_cache *c = d->cache;
	struct vc_verify_result v;
	int err;

	err = vc_cache_verify_backing(c->engine, d->id, &d->ld.dev, &v);
	if (err == -ENOENT)
		return 0;	/* not waiting: vc_cache_attach() decides */
	if (err) {
		vcc_ext_err(ext, "%s: cannot read it to compare with the cache (error %d)",
			    d->bdev_name, err);
		return err;
	}
	if (v.compared >= 2 && v.differ == v.compared) {
		pr_warn("%s: %s has the identity and size of %s (%s) but other data: %u of %u blocks the cache knows clean differ; not attached automatically (vcache-config attach it if it is that disk)\n",
			c->name, d->bdev_name, d->devname, d->ident, v.differ,
			v.compared);
		vcc_ext_err(ext, "%s: identity of %s, but %u of %u clean blocks differ",
			    d->bdev_name, d->devname, v.differ, v.compared);
		return -EMEDIUMTYPE;
	}
	if (v.differ)
		pr_warn("%s: %s: %u of %u blocks the cache knows clean differ from the disk (writes not flushed at a power cut?); attached\n",
			c->name, d->bdev_name, v.differ, v.compared);
	else if (v.compared)
		pr_info("%s: %s: %u clean blocks compared with the disk, all equal\n",
			c->name, d->bdev_name, v.compared);
	else
		pr_info("%s: %s: no clean block of it known to compare with the disk: matched by identity and size\n",
			c->name, d->bdev_name);
	return 0;
}

/*
 * Open @devt exclusively as @d's backing device, attach it to the engine
 * and create its cached device.  On failure @d is as before: a new device
 * unknown to the engine, or (@returning) one waiting in its slot, with its
 * identity and dirty data.
 * @hotplug: found by its identity alone (auto-attach, no one vouched for
 * the disk): it must also have exactly the size the cache recorded for it
 * and hold the clean blocks the cache has of it (vcache(4), "Auto-attach").
 */
static int vcc_dev_plug(struct vcc_dev *d, dev_t devt, bool hotplug,
			bool returning, struct netlink_ext_ack *ext)
{
	struct vcc_cache *c = d->cache;
	u32 id;
	int err;

	if (c->flash_devt == devt || (c->fbdev && c->fbdev->bd_dev == devt) ||
	    vcd_devt_is_card(devt)) {
		vcc_ext_err(ext, "%d:%d is a vcache card or this cache's flash: not a backing device",
			    MAJOR(devt), MINOR(devt));
		return -EINVAL;
	}
	err = vcd_bdev_open_excl(devt, d, &d->bh);
	if (err) {
		vcc_ext_err(ext, "backing device %d:%d: no exclusive open (error %d): mounted or in use?",
			    MAJOR(devt), MINOR(devt), err);
		return err;
	}
	snprintf(d->bdev_name, sizeof(d->bdev_name), "%pg", d->bh.bdev);
	if (bdev_logical_block_size(d->bh.bdev) > c->block_size) {
		vcc_ext_err(ext, "%s has %u-byte sectors, more than the cache block size %u",
			    d->bdev_name, bdev_logical_block_size(d->bh.bdev),
			    c->block_size);
		err = -EINVAL;
		goto out_close;
	}
	vc_linux_dev_init(&d->ld, d->bh.bdev, d->bdev_name);
	if (hotplug) {
		struct vc_backing_info bi;
		u64 now = bdev_nr_sectors(d->bh.bdev);

		if (!vc_cache_backing_info(c->engine, d->id, &bi) &&
		    bi.in_use && bi.nr_sectors != now) {
			pr_warn("%s: %s has the identity of %s (%s) but %llu sectors, not %llu: not attached automatically (vcache-config attach it if it is that disk)\n",
				c->name, d->bdev_name, d->devname, d->ident, now,
				bi.nr_sectors);
			vcc_ext_err(ext, "%s: identity of %s, but %llu sectors, not %llu",
				    d->bdev_name, d->devname, now, bi.nr_sectors);
			err = -EMEDIUMTYPE;
			goto out_close;
		}
		err = vcc_dev_verify(d, ext);
		if (err)
			goto out_close;
	}
	err = vc_cache_attach(c->engine, &d->ld.dev, d->ident, &id);
	if (err) {
		if (err == -EINVAL)
			vcc_ext_err(ext, "%s is smaller than the data cached for identity %s",
				    d->bdev_name, d->ident);
		else if (err == -ENOSPC)
			vcc_ext_err(ext, "cache %s has %d backing devices already",
				    c->name, VC_MAX_BACKING);
		else
			vcc_ext_err(ext, "cache %s cannot record %s on its flash (error %d)",
				    c->name, d->bdev_name, err);
		goto out_close;
	}
	d->id = id;
	d->size = bdev_nr_bytes(d->bh.bdev);
	err = vcc_dev_start(d);
	if (err) {
		vcc_ext_err(ext, "cannot create the cached device of %s (error %d)",
			    d->bdev_name, err);
		/*
		 * The engine must not keep a device closed below.  One that
		 * came back keeps its slot (waiting again: the driver keeps
		 * @d there); forgetting it would free the slot under @d.  A
		 * new one whose slot cannot be recorded free keeps it too
		 * (vc_cache_detach()): @d waits there, @kept.
		 */
		if (returning) {
			vc_cache_unplug(c->engine, id);
		} else if (vc_cache_detach(c->engine, id, 0)) {
			vc_cache_unplug(c->engine, id);
			d->kept = true;
		}
		goto out_close;
	}
	d->state = VCACHE_BS_ATTACHED;
	pr_info("%s: %s (%s) attached as %s\n", c->name, d->bdev_name,
		d->ident, d->disk->disk_name);
	return 0;

out_close:
	vcd_bdev_close(&d->bh);
	return err;
}

/*
 * Stop @d's cached device and let go of its backing device, whatever the
 * engine's metadata can record: the engine stops using it first.
 */
static void vcc_dev_unplug(struct vcc_dev *d)
{
	vcc_dev_stop(d);
	if (d->cache->engine)
		vc_cache_unplug(d->cache->engine, d->id);
	if (d->bh.bdev)
		vcd_bdev_close(&d->bh);
	d->state = VCACHE_BS_WAITING;
}

/*
 * Block new opens of /dev/vcacheN (they fail with ENXIO), then tell
 * whether someone still has it open.  udev's probe of a new or changed
 * disk holds it open for a moment: that is waited out (up to 3 s).  On
 * true opens are allowed again; on false they stay blocked until
 * vcc_dev_allow_opens() or the disk's end: nothing can write through it
 * while a delete or detach checks for dirty data and tears it down.
 */
static bool vcc_dev_open(struct vcc_dev *d)
{
	int tries;

	if (!d->disk)
		return false;
	mutex_lock(&d->disk->open_mutex);
	WRITE_ONCE(d->dying, true);
	mutex_unlock(&d->disk->open_mutex);
	for (tries = 0; disk_openers(d->disk) > 0; tries++) {
		if (tries == 60) {
			WRITE_ONCE(d->dying, false);
			return true;
		}
		msleep(50);
	}
	return false;
}

static void vcc_dev_allow_opens(struct vcc_dev *d)
{
	WRITE_ONCE(d->dying, false);
}

static void vcc_allow_opens(struct vcc_cache *c)
{
	int i;

	for (i = 0; i < VC_MAX_BACKING; i++)
		if (c->devs[i])
			vcc_dev_allow_opens(c->devs[i]);
}

static void vcc_conf_set_dev(struct vcc_cache *c, struct vcc_dev *d)
{
	struct vcc_conf_dev *cd = &c->conf[d->id];

	cd->in_use = true;
	strscpy(cd->devname, d->devname, sizeof(cd->devname));
	strscpy(cd->ident, d->ident, sizeof(cd->ident));
}

/* @d takes slot @d->id, recorded in the card's table (attach, create). */
static int vcc_record_dev(struct vcc_cache *c, struct vcc_dev *d)
{
	int err;

	c->devs[d->id] = d;
	vcc_conf_set_dev(c, d);
	err = vcc_save_conf(c);
	if (err)
		pr_warn("%s: cannot record %s in the card's table (error %d)\n",
			c->name, d->devname, err);
	return err;
}

/*
 * @d of @c is plugged in without vcc_lock as @devt: its name and device
 * are taken (vcc_plugging), @c refuses what would change it (vcc_busy()).
 */
static void vcc_plug_begin(struct vcc_cache *c, struct vcc_dev *d, dev_t devt)
{
	lockdep_assert_held(&vcc_lock);
	d->plug_devt = devt;
	list_add(&d->plug_node, &vcc_plugging);
	c->plugging++;
}

static void vcc_plug_end(struct vcc_cache *c, struct vcc_dev *d)
{
	lockdep_assert_held(&vcc_lock);
	c->plugging--;
	list_del_init(&d->plug_node);
}

/* ------------------------------------------------- unlocked operations */
/* @op of @c is to run without vcc_lock: vcc_quiesce() waits for it. */
static void vcc_op_begin(struct vcc_op *op, struct vcc_cache *c)
{
	lockdep_assert_held(&vcc_lock);
	op->c = c;
	list_add(&op->node, &vcc_unlocked);
}

void vcc_unlock_op(struct vcc_op *op, struct vcc_cache *c)
{
	vcc_op_begin(op, c);
	mutex_unlock(&vcc_lock);
}

void vcc_relock_op(struct vcc_op *op)
{
	mutex_lock(&vcc_lock);
	list_del_init(&op->node);
	WRITE_ONCE(vcc_unlocked_ends, vcc_unlocked_ends + 1);
	wake_up_all(&vcc_unlocked_wq);
}

/*
 * Wait until no operation of a cache on @card (NULL: of any cache) runs
 * unlocked (vcc_lock held, dropped meanwhile).  Their write-backs are
 * stopped (the operation fails, nothing is lost: the data stays dirty on
 * the flash); a deleted cache's shutdown is device I/O and is waited for.
 * Operations of other caches go on: a card's removal does not wait for a
 * drain on another card or on a plain device.
 */
static void vcc_quiesce(struct vcd_card *card)
{
	struct vcc_op *op;
	unsigned long ends;
	bool wait;

	lockdep_assert_held(&vcc_lock);
	for (;;) {
		wait = false;
		list_for_each_entry(op, &vcc_unlocked, node) {
			if (card && op->c->card != card)
				continue;
			WRITE_ONCE(op->c->stopping, true);
			wait = true;
		}
		if (!wait)
			return;
		ends = vcc_unlocked_ends;
		mutex_unlock(&vcc_lock);
		wait_event(vcc_unlocked_wq,
			   READ_ONCE(vcc_unlocked_ends) != ends);
		mutex_lock(&vcc_lock);
	}
}

/* vc_cache_flush()'s progress: stop when the cache is being stopped. */
static int vcc_flush_check_stop(void *arg, const struct vc_flush_progress *p)
{
	struct vcc_cache *c = arg;

	return READ_ONCE(c->stopping);
}

/*
 * Write back @id's dirty data (VC_DEV_ID_ALL: all) with vcc_lock let go;
 * -ECANCELED if a signal came or the card or the module goes meanwhile.
 * Not -EINTR: that is the engine's, and a command must never return it,
 * since netlink_rcv_skb() sends no answer for -EINTR (it means "restart"
 * there) and the tool would wait for one for ever.
 */
static int vcc_flush_unlocked(struct vcc_cache *c, u32 id)
{
	int err;

	c->busy = true;
	vcc_unlock_op(&c->op, c);
	err = vc_cache_flush(c->engine, id, vcc_flush_check_stop, c);
	vcc_relock_op(&c->op);
	c->busy = false;
	if (err == -EINTR && c->stopping)
		pr_warn("%s: write-back stopped: its card is being removed or the module unloaded (the data stays dirty on the flash)\n",
			c->name);
	return err == -EINTR ? -ECANCELED : err;
}

/*
 * How vcc_flush_unlocked() ended with @err, for the user's message: short,
 * as it must fit NETLINK_MAX_FMTMSG_LEN (80) with a name of up to 31
 * characters (why it stopped is in the kernel log; the errno is the
 * reply's).
 */
static const char *vcc_flush_how(struct vcc_cache *c, int err)
{
	if (err != -ECANCELED)
		return "failed";
	return c->stopping ? "stopped" : "interrupted";
}

/*
 * -EBUSY with a message while @c's write-back runs unlocked, or a device
 * of it is plugged in unlocked (an attach, a return, its create).
 */
static int vcc_busy(struct vcc_cache *c, struct netlink_ext_ack *ext)
{
	lockdep_assert_held(&vcc_lock);
	if (c->plugging) {
		vcc_ext_err(ext, "%s: a device is being attached, retry later",
			    c->name);
		return -EBUSY;
	}
	if (!c->busy)
		return 0;
	vcc_ext_err(ext, "%s: writing back for delete/detach, retry later", c->name);
	return -EBUSY;
}

/* ---------------------------------------------------------- teardown */
/* Unlist @c and stop its devices: the part that needs vcc_lock. */
static void vcc_teardown_unlist(struct vcc_cache *c)
{
	int i;

	lockdep_assert_held(&vcc_lock);
	c->state = VCACHE_STATE_STOPPING;
	if (c->engine)
		vc_cache_flush_cancel(c->engine);
	cancel_delayed_work_sync(&c->flush_work);
	vcc_proc_del(c);
	for (i = 0; i < VC_MAX_BACKING; i++)
		if (c->devs[i])
			vcc_dev_stop(c->devs[i]);
	if (!list_empty(&c->node))
		list_del_init(&c->node);
}

/* Shut the engine down, free the devices: @c is unlisted, no lock needed. */
static int vcc_teardown_release(struct vcc_cache *c, u32 shutdown_flags)
{
	int i, err = 0;

	if (c->engine) {
		err = vc_cache_shutdown(c->engine, shutdown_flags);
		c->engine = NULL;
	}
	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (!c->devs[i])
			continue;
		if (c->devs[i]->bh.bdev)
			vcd_bdev_close(&c->devs[i]->bh);
		kfree(c->devs[i]);
		c->devs[i] = NULL;
	}
	vcc_flash_close(c);
	return err;
}

/*
 * The one teardown of a cache for good (delete, a failed create):
 * vcc_teardown_unlist(), then the device I/O without vcc_lock, as @c's
 * unlocked operation (minutes on a slow or failing device): the engine
 * shut down with its superblocks erased (nothing loads it again) and the
 * card's region given back, whatever the shutdown did.  Returns the
 * shutdown's error, *@ferr the region's.  A card's removal and rmmod stop
 * caches with the same halves (vcc_stop_all()).
 */
static int vcc_teardown_forget(struct vcc_cache *c, int *ferr)
{
	int err;

	vcc_teardown_unlist(c);
	/* its name and flash stay taken until its region is given back */
	list_add(&c->node, &vcc_unlisted);
	vcc_unlock_op(&c->op, c);
	err = vcc_teardown_release(c, VC_SHUTDOWN_FORGET);
	*ferr = vcc_flash_forget(c);
	vcc_relock_op(&c->op);
	list_del_init(&c->node);
	return err;
}

void vcc_free(struct vcc_cache *c)
{
	if (c->card)
		vcd_card_put(c->card);
	kfree(c->failed_conf);
	kfree(c);
}

static void vcc_flush_work(struct work_struct *w);

bool vcc_is_ready(void)
{
	lockdep_assert_held(&vcc_lock);
	return vcc_ready;
}

struct vcc_cache *vcc_alloc(const char *name)
{
	struct vcc_cache *c = kzalloc_obj(*c, GFP_KERNEL);

	if (!c)
		return NULL;
	strscpy(c->name, name, sizeof(c->name));
	INIT_LIST_HEAD(&c->node);
	INIT_LIST_HEAD(&c->op.node);
	INIT_DELAYED_WORK(&c->flush_work, vcc_flush_work);
	return c;
}

/* Make @c visible (listed, /proc); the cache's state from its devices. */
void vcc_publish(struct vcc_cache *c)
{
	int i;

	c->state = VCACHE_STATE_RUNNING;
	for (i = 0; i < VC_MAX_BACKING; i++)
		if (c->devs[i] && c->devs[i]->state != VCACHE_BS_ATTACHED)
			c->state = VCACHE_STATE_WAITING;
	list_add_tail(&c->node, &vcc_caches);
	vcc_proc_add(c);
}

/* Recompute the state after a device came or went. */
void vcc_update_state(struct vcc_cache *c)
{
	enum vcache_state old = c->state;

	if (c->state == VCACHE_STATE_FAILED ||
	    c->state == VCACHE_STATE_STOPPING)
		return;
	c->state = VCACHE_STATE_RUNNING;
	if (c->engine && vc_cache_get_mode(c->engine) !=
	    vc_cache_get_requested_mode(c->engine))
		c->state = VCACHE_STATE_DEGRADED;
	for (int i = 0; i < VC_MAX_BACKING; i++)
		if (c->devs[i] && c->devs[i]->state != VCACHE_BS_ATTACHED)
			c->state = VCACHE_STATE_WAITING;
	if (c->state != old)
		vcnl_event(c, VCACHE_EV_STATE, NULL, 0, NULL);
}

/* ------------------------------------------------------------ create */
/*
 * The device I/O of a create, without vcc_lock: the flash opened (a
 * card's region made), the cache formatted, @d plugged in and recorded.
 * @c is not listed.  On failure @d is not in @c's devs[] unless the
 * recording failed; what was made is torn down by the caller.
 */
static int vcc_create_flash(struct vcc_cache *c, struct vcc_dev *d,
			    const struct vcc_create_args *a,
			    struct netlink_ext_ack *ext)
{
	int err;

	err = vcc_flash_open_new(c, a->cache_devt, a->size, ext);
	if (err)
		return err;
	err = vc_cache_create(&c->flash.dev, &a->cfg, &c->engine);
	if (err) {
		vcc_ext_err(ext, "cannot format the cache on %s (error %d)",
			    c->flash_name, err);
		return err;
	}
	err = vcc_dev_plug(d, a->backing_devt, false, false, ext);
	if (err)
		return err;
	err = vcc_record_dev(c, d);
	if (err)
		vcc_ext_err(ext, "cannot record cache %s in the card's table (error %d)",
			    c->name, err);
	return err;
}

/*
 * Is @name a cache's: listed, being created, or being deleted from @card
 * (its region, being given back, still on the card: a restore of @card
 * must not load it; NULL: no card)?
 */
bool vcc_name_taken(const char *name, struct vcd_card *card)
{
	struct vcc_cache *c;

	lockdep_assert_held(&vcc_lock);
	list_for_each_entry(c, &vcc_unlisted, node)
		if (!strcmp(c->name, name) &&
		    (c->state != VCACHE_STATE_STOPPING || (card && c->card == card)))
			return true;
	return vcc_find(name);
}

/*
 * The checks, under vcc_lock; then the device I/O without it
 * (vcc_create_flash()): a flash or a backing device that does not answer
 * holds no other command.  Meanwhile @c is on vcc_unlisted and its first
 * device on vcc_plugging: their names and devices are taken; @c is
 * plugging (a sysfs store to its device gets -EBUSY); a removal of its
 * card or rmmod waits for it (vcc_quiesce()) and then stops it, listed,
 * as any other cache (its data kept).
 */
int vcc_create(const struct vcc_create_args *a, struct netlink_ext_ack *ext)
{
	const char *devname = a->devname ? a->devname : a->name;
	struct vcc_cache *c;
	struct vcc_dev *d;
	int err, ferr;

	lockdep_assert_held(&vcc_lock);
	if (!vcc_ready)
		return -EAGAIN;
	if (!vcc_valid_name(a->name) || !vcc_valid_name(devname)) {
		vcc_ext_err(ext, "bad name: 1-%d of A-Z a-z 0-9 _ . - (not starting with . or -)",
			    VCACHE_NAME_MAX - 1);
		return -EINVAL;
	}
	if (!vcc_valid_ident(a->ident)) {
		vcc_ext_err(ext, "bad backing identity: 1-%d printable characters without spaces",
			    VCACHE_IDENT_MAX - 1);
		return -EINVAL;
	}
	if (vcc_name_taken(a->name, NULL)) {
		vcc_ext_err(ext, "a cache named %s exists", a->name);
		return -EEXIST;
	}
	if (vcc_find_devname(devname)) {
		vcc_ext_err(ext, "a cached device named %s exists", devname);
		return -EEXIST;
	}
	if (a->cache_devt == a->backing_devt) {
		vcc_ext_err(ext, "the cache device and the backing device are the same");
		return -EINVAL;
	}
	/* a card holds several caches (regions); other flash holds one */
	if ((!vcd_devt_is_card(a->cache_devt) &&
	     vcc_devt_in_use(a->cache_devt)) ||
	    vcc_devt_in_use(a->backing_devt)) {
		vcc_ext_err(ext, "the device is used by another cache already");
		return -EBUSY;
	}
	c = vcc_alloc(a->name);
	if (!c)
		return -ENOMEM;
	c->block_size = a->cfg.block_size;
	c->flash_devt = a->cache_devt;
	/* known before the lock goes: a removal of it waits for @c */
	c->card = vcd_card_get_by_devt(a->cache_devt);
	if ((c->card && vcd_card_going(c->card)) ||
	    (!c->card && vcd_devt_is_card(a->cache_devt))) {
		vcc_ext_err(ext, "card %d:%d is going", MAJOR(a->cache_devt),
			    MINOR(a->cache_devt));
		err = -ECANCELED;
		goto out_free;
	}
	d = vcc_dev_alloc(c, devname, a->ident);
	err = -ENOMEM;
	if (!d)
		goto out_free;
	list_add(&c->node, &vcc_unlisted);
	vcc_plug_begin(c, d, a->backing_devt);
	vcc_unlock_op(&c->op, c);
	err = vcc_create_flash(c, d, a, ext);
	vcc_relock_op(&c->op);
	vcc_plug_end(c, d);
	list_del_init(&c->node);
	if (c->devs[d->id] != d)	/* not plugged in: @c does not free it */
		kfree(d);
	if (err && (c->region || c->fbdev))	/* something was made */
		vcc_teardown_forget(c, &ferr);
	if (err)
		goto out_free;
	/*
	 * Listed even when its card or the module goes meanwhile: the
	 * removal, waiting for vcc_lock, stops it with the others.
	 */
	vcc_publish(c);
	pr_info("%s: created on %s (%llu MiB, %u-byte blocks, %s)\n", c->name,
		c->flash_name, c->size >> 20, c->block_size,
		vc_mode_name(a->cfg.mode));
	vcnl_event(c, VCACHE_EV_CREATED, NULL, 0, NULL);
	/* a card that died meanwhile: its notice went to listed caches only */
	if (vcc_card_killed(c))
		vcc_card_failed(c);
	return 0;

out_free:
	vcc_free(c);
	return err;
}

/* ------------------------------------------------------------ delete */
static int vcc_refuse_dirty(struct vcc_cache *c, u64 dirty, const char *what,
			    const char *flagname, struct netlink_ext_ack *ext)
{
	vcc_ext_err(ext, "%s: %llu bytes of dirty data: flush %s first, or --flush or %s",
		    what, dirty, c->name, flagname);
	return -EBUSY;
}

/* Refuse opens of @c's devices; -EBUSY (opens allowed again) if one is open. */
static int vcc_refuse_opens(struct vcc_cache *c, struct netlink_ext_ack *ext)
{
	int i;

	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (c->devs[i] && vcc_dev_open(c->devs[i])) {
			vcc_ext_err(ext, "/dev/%s (%s) is open or mounted: close it first",
				    c->devs[i]->disk->disk_name,
				    c->devs[i]->devname);
			vcc_allow_opens(c);
			return -EBUSY;
		}
	}
	return 0;
}

int vcc_delete(struct vcc_cache *c, u32 flags, struct netlink_ext_ack *ext)
{
	bool failed;
	u64 dirty;
	int i, err, ferr;

	lockdep_assert_held(&vcc_lock);
	err = vcc_busy(c, ext);
	if (err)
		return err;
	/* from here no new open: nothing written after the dirty check */
	err = vcc_refuse_opens(c, ext);
	if (err)
		return err;
	if (c->engine && (flags & VCACHE_F_FLUSH)) {
		err = vcc_flush_unlocked(c, VC_DEV_ID_ALL);
		if (err) {
			vcc_ext_err(ext, "cache %s: write-back %s; nothing deleted",
				    c->name, vcc_flush_how(c, err));
			vcc_allow_opens(c);
			return err;
		}
		/* a device came back meanwhile, or comes back (hotplug) */
		err = vcc_busy(c, ext);
		if (err) {
			vcc_allow_opens(c);
			return err;
		}
		err = vcc_refuse_opens(c, ext);
		if (err)
			return err;
	}
	dirty = vcc_dirty_bytes(c);
	if (dirty && !(flags & VCACHE_F_DISCARD_DIRTY)) {
		vcc_allow_opens(c);
		return vcc_refuse_dirty(c, dirty, c->name, "--discard-dirty",
					ext);
	}
	for (i = 0; i < VC_MAX_BACKING; i++)
		if (c->devs[i])
			vcc_dev_stop(c->devs[i]);
	/* every bio has ended: what is dirty now is what gets discarded */
	dirty = vcc_dirty_bytes(c);
	if (dirty && !(flags & VCACHE_F_DISCARD_DIRTY)) {
		pr_err("%s: %llu bytes became dirty during the delete: not deleted\n",
		       c->name, dirty);
		for (i = 0; i < VC_MAX_BACKING; i++)
			if (c->devs[i] &&
			    c->devs[i]->state == VCACHE_BS_ATTACHED &&
			    vcc_dev_start(c->devs[i]))
				pr_err("%s: cannot create the cached device of %s again\n",
				       c->name, c->devs[i]->devname);
		return vcc_refuse_dirty(c, dirty, c->name, "--discard-dirty",
					ext);
	}
	for (i = 0; i < VC_MAX_BACKING && c->engine && dirty; i++)
		if (c->devs[i])
			vc_cache_detach(c->engine, i, VC_DETACH_FORCE);
	vcnl_event(c, VCACHE_EV_DELETED, NULL, 0, NULL);
	failed = c->state == VCACHE_STATE_FAILED;
	err = vcc_teardown_forget(c, &ferr);
	if (failed && (err || ferr)) {
		/* its flash is dead: nothing more to lose, the cache is gone */
		pr_warn("%s: its failed flash could not record the delete (errors %d, %d): a card that comes back brings it back, delete it again then\n",
			c->name, err, ferr);
		err = 0;
	} else if (!err) {
		err = ferr;
	}
	pr_info("%s: deleted%s\n", c->name,
		dirty ? " (dirty data discarded)" : "");
	vcc_free(c);
	return err;
}

/* ------------------------------------------------------ attach/detach */
/*
 * Plug new, private @nd of @c in as @devt (vcc_dev_plug()) without
 * vcc_lock: the open, the compare read of a hotplug and the cached
 * device's start (its partition scan reads the disk) are device I/O, on a
 * disk that may not answer.  Meanwhile @nd is on vcc_plugging (its name
 * and device are taken), @c refuses what would change it (vcc_busy()),
 * and a card's removal or rmmod waits for it (vcc_quiesce()).  The caller
 * lists @nd, or frees it on an error.
 */
static int vcc_plug_unlocked(struct vcc_cache *c, struct vcc_dev *nd,
			     dev_t devt, bool hotplug, bool returning,
			     struct netlink_ext_ack *ext)
{
	struct vcc_op op;
	int err;

	lockdep_assert_held(&vcc_lock);
	/* no new wait for a removal or an unload (vcc_quiesce()) */
	if (!vcc_ready || (c->card && vcd_card_going(c->card))) {
		vcc_ext_err(ext, "cache %s: its card or the module is going",
			    c->name);
		return -ECANCELED;
	}
	vcc_plug_begin(c, nd, devt);
	vcc_unlock_op(&op, c);
	err = vcc_dev_plug(nd, devt, hotplug, returning, ext);
	vcc_relock_op(&op);
	vcc_plug_end(c, nd);
	return err;
}

/*
 * Waiting (or detached-dirty) @d comes back as @devt, plugged in unlocked
 * (vcc_plug_unlocked()) as a new vcc_dev that takes @d's place under the
 * lock.  Readers see @d, waiting, until then.
 */
static int vcc_dev_return(struct vcc_cache *c, struct vcc_dev *d, dev_t devt,
			  bool hotplug, struct netlink_ext_ack *ext)
{
	struct vcc_dev *nd;
	int err;

	lockdep_assert_held(&vcc_lock);
	if (d->plugging) {
		/* EALREADY: udev's second offer of the disk is no error */
		vcc_ext_err(ext, "%s is being attached already", d->devname);
		return -EALREADY;
	}
	nd = vcc_dev_alloc(c, d->devname, d->ident);
	if (!nd)
		return -ENOMEM;
	nd->id = d->id;
	d->plugging = true;
	err = vcc_plug_unlocked(c, nd, devt, hotplug, true, ext);
	d->plugging = false;
	if (err) {
		kfree(nd);
		return err;
	}
	/*
	 * @d is still in its slot: nothing that frees it runs while @c
	 * plugs.  The engine gives the disk @d's slot back: it keeps a
	 * waiting device's slot, even one whose detach could not record it
	 * free.  Should it ever give another one, the disk is a new device
	 * there, recorded as an attach's, and @d's place is emptied.
	 */
	c->devs[d->id] = NULL;
	if (nd->id != d->id) {
		memset(&c->conf[d->id], 0, sizeof(c->conf[d->id]));
		vcc_record_dev(c, nd);
	} else {
		c->devs[nd->id] = nd;
	}
	kfree(d);
	vcnl_event(c, VCACHE_EV_ATTACHED, nd, 0, NULL);
	vcc_update_state(c);
	return 0;
}

int vcc_attach(struct vcc_cache *c, dev_t devt, const char *ident,
	       const char *devname, struct netlink_ext_ack *ext)
{
	char name[VCACHE_NAME_MAX];
	struct vcc_dev *d;
	int i, err;

	lockdep_assert_held(&vcc_lock);
	/*
	 * a device may come while @c is busy or another one returns:
	 * delete checks again after its write-back
	 */
	if (!c->engine || c->state == VCACHE_STATE_FAILED) {
		vcc_ext_err(ext, "cache %s is %s: cannot attach", c->name,
			    vcc_state_name(c->state));
		return -EIO;
	}
	if (!vcc_valid_ident(ident)) {
		vcc_ext_err(ext, "bad backing identity");
		return -EINVAL;
	}
	for (i = 0; i < VC_MAX_BACKING; i++) {
		d = c->devs[i];
		if (d && !strcmp(d->ident, ident)) {
			if (d->state == VCACHE_BS_ATTACHED) {
				vcc_ext_err(ext, "%s is attached to %s already as %s",
					    ident, c->name, d->devname);
				return -EEXIST;
			}
			/* a waiting device came back */
			return vcc_dev_return(c, d, devt, false, ext);
		}
	}
	list_for_each_entry(d, &vcc_plugging, plug_node) {
		if (d->cache == c && !strcmp(d->ident, ident)) {
			vcc_ext_err(ext, "%s is being attached to %s already as %s",
				    ident, c->name, d->devname);
			return -EALREADY;
		}
	}
	if (vcc_devt_in_use(devt)) {
		vcc_ext_err(ext, "%d:%d is used by a cache already", MAJOR(devt),
			    MINOR(devt));
		return -EBUSY;
	}
	if (!devname) {
		for (i = 1; i < 100; i++) {
			snprintf(name, sizeof(name), "%.*s-%d",
				 VCACHE_NAME_MAX - 5, c->name, i);
			if (!vcc_find_devname(name))
				break;
		}
		devname = name;
	}
	if (!vcc_valid_name(devname)) {
		vcc_ext_err(ext, "bad cached device name: 1-%d of A-Z a-z 0-9 _ . - (not starting with . or -)",
			    VCACHE_NAME_MAX - 1);
		return -EINVAL;
	}
	if (vcc_find_devname(devname)) {
		vcc_ext_err(ext, "a cached device named %s exists", devname);
		return -EEXIST;
	}
	d = vcc_dev_alloc(c, devname, ident);
	if (!d)
		return -ENOMEM;
	err = vcc_plug_unlocked(c, d, devt, false, false, ext);
	if (err && d->kept) {
		/* listed as the engine has it: waiting, to detach or attach */
		pr_warn("%s: %s could not be attached nor recorded gone: it waits as %s\n",
			c->name, d->ident, d->devname);
		vcc_record_dev(c, d);
		vcc_update_state(c);
		return err;
	}
	if (err) {
		kfree(d);
		return err;
	}
	vcc_record_dev(c, d);
	vcnl_event(c, VCACHE_EV_ATTACHED, d, 0, NULL);
	vcc_update_state(c);
	return 0;
}

/*
 * detach --keep-dirty: the cached device goes and the backing device is
 * let go, but its dirty blocks stay on flash, its id and identity with
 * them (in the engine and in the card's table): it is "detached-dirty"
 * until it is attached again (attach, hotplug) and takes them back.
 */
/* Stop @d's disk, have the engine let go of it (@flags), close it. */
static int vcc_dev_leave(struct vcc_cache *c, struct vcc_dev *d, u32 flags,
			 struct netlink_ext_ack *ext)
{
	int err = 0;

	vcc_dev_stop(d);
	if (c->engine)
		err = vc_cache_detach(c->engine, d->id, flags);
	if (err == -EINTR)	/* no command may return it (vc_nl.c) */
		err = -ECANCELED;
	if (err) {
		vcc_ext_err(ext, "%s: detach failed (error %d): its disk is gone, the device stays reserved",
			    d->devname, err);
		vcc_dev_unplug(d);
		vcc_update_state(c);
		return err;
	}
	if (d->bh.bdev)
		vcd_bdev_close(&d->bh);
	return 0;
}

static int vcc_detach_keep(struct vcc_cache *c, struct vcc_dev *d, u64 dirty,
			   struct netlink_ext_ack *ext)
{
	int err = vcc_dev_leave(c, d, VC_DETACH_KEEP, ext);

	if (err)
		return err;
	d->state = VCACHE_BS_DETACHED_DIRTY;
	vcnl_event(c, VCACHE_EV_DETACHED, d, 0, "dirty data kept");
	pr_info("%s: %s detached, %llu bytes of its dirty data kept on flash until it is attached again\n",
		c->name, d->devname, dirty);
	vcc_update_state(c);
	return 0;
}

int vcc_detach(struct vcc_cache *c, struct vcc_dev *d, u32 flags,
	       struct netlink_ext_ack *ext)
{
	u64 dirty;
	int err;

	lockdep_assert_held(&vcc_lock);
	err = vcc_busy(c, ext);
	if (err)
		return err;
	/* from here no new open: nothing written after the dirty check */
	if (vcc_dev_open(d)) {
		vcc_ext_err(ext, "/dev/%s (%s) is open or mounted: close it first",
			    d->disk->disk_name, d->devname);
		return -EBUSY;
	}
	if (d->state == VCACHE_BS_ATTACHED && (flags & VCACHE_F_FLUSH)) {
		err = vcc_flush_unlocked(c, d->id);
		if (err) {
			vcc_ext_err(ext, "%s: write-back %s; still attached",
				    d->devname, vcc_flush_how(c, err));
			vcc_dev_allow_opens(d);
			return err;
		}
	}
	dirty = vcc_dev_dirty_bytes(c, d->id);
	if (dirty && (flags & VCACHE_F_KEEP_DIRTY) &&
	    d->state == VCACHE_BS_ATTACHED)
		return vcc_detach_keep(c, d, dirty, ext);
	if (dirty) {
		vcc_dev_allow_opens(d);
		return vcc_refuse_dirty(c, dirty, d->devname,
					"--keep-dirty", ext);
	}
	err = vcc_dev_leave(c, d, 0, ext);
	if (err)
		return err;
	memset(&c->conf[d->id], 0, sizeof(c->conf[d->id]));
	c->devs[d->id] = NULL;
	err = vcc_save_conf(c);
	if (err)
		pr_warn("%s: cannot record the detach of %s in the card's table (error %d): it is listed as waiting after the next probe\n",
			c->name, d->devname, err);
	vcnl_event(c, VCACHE_EV_DETACHED, d, 0, NULL);
	pr_info("%s: %s detached\n", c->name, d->devname);
	kfree(d);
	vcc_update_state(c);
	return 0;
}

int vcc_hotplug(dev_t devt, const char *ident, struct netlink_ext_ack *ext)
{
	struct vcc_cache *c;
	int i;

	lockdep_assert_held(&vcc_lock);
	if (!vcc_ready)
		return -EAGAIN;
	list_for_each_entry(c, &vcc_caches, node) {
		for (i = 0; i < VC_MAX_BACKING; i++) {
			struct vcc_dev *d = c->devs[i];

			if (!d || (d->state != VCACHE_BS_WAITING &&
				   d->state != VCACHE_BS_DETACHED_DIRTY) ||
			    strcmp(d->ident, ident))
				continue;
			if (!c->engine || c->state == VCACHE_STATE_FAILED) {
				vcc_ext_err(ext, "cache %s is %s: cannot attach",
					    c->name, vcc_state_name(c->state));
				return -EIO;
			}
			return vcc_dev_return(c, d, devt, true, ext);
		}
	}
	return -ENOENT;
}

/* ------------------------------------------------------------ settings */
int vcc_set(struct vcc_cache *c, const struct vcc_settings *s,
	    struct netlink_ext_ack *ext)
{
	struct vc_params old;
	int old_policy, old_mode;
	u32 mask = 0;
	int i, err;

	lockdep_assert_held(&vcc_lock);
	err = vcc_busy(c, ext);
	if (err)
		return err;
	if (!c->engine) {
		vcc_ext_err(ext, "cache %s is %s", c->name, vcc_state_name(c->state));
		return -EIO;
	}
	/*
	 * All or nothing: the parameters are checked and applied together
	 * (dirty-low may rise above the old dirty-high in the same SET), the
	 * policy and mode after them, and the card's copy last; whatever is
	 * refused rolls back everything applied before it.
	 */
	old_policy = vc_cache_get_policy(c->engine);
	old_mode = vc_cache_get_requested_mode(c->engine);
	for (i = 0; i < VC_NR_PARAMS; i++) {
		old.v[i] = vc_cache_get_param(c->engine, i);
		if (!s->has[i])
			continue;
		mask |= 1u << i;
		if (vc_param_check(i, s->v[i])) {
			vcc_ext_err(ext, "%s=%llu is out of range",
				    vc_param_name(i), s->v[i]);
			return -EINVAL;
		}
	}
	if (mask) {
		err = vc_cache_set_params(c->engine, mask, s->v);
		if (err) {
			vcc_ext_err(ext, "dirty_low must not exceed dirty_high (as percentages, and as bytes if set)");
			return err;
		}
	}
	if (s->policy >= 0 && s->policy != old_policy) {
		err = vc_cache_set_policy(c->engine, s->policy);
		if (err) {
			vcc_ext_err(ext, "policy %d refused", s->policy);
			goto rollback;
		}
	}
	if (s->mode >= 0) {
		err = vc_cache_set_mode(c->engine, s->mode);
		if (err) {
			if (err == -EIO)
				vcc_ext_err(ext,
					    "cache %s: metadata not writable (flash errors): mode stays degraded",
					    c->name);
			else if (err == -EBUSY)
				vcc_ext_err(ext,
					    "cache %s: a FLUSH waits for the dirty data to drain after a failed cache flush: write-back once it is done",
					    c->name);
			else
				vcc_ext_err(ext, "mode refused by cache %s",
					    c->name);
			goto rollback;
		}
	}
	err = vcc_save_conf(c);
	if (err) {
		vcc_ext_err(ext, "cache %s: settings not recorded on the card (error %d): nothing changed",
			    c->name, err);
		if (s->mode >= 0 && s->mode != old_mode)
			vc_cache_set_mode(c->engine, old_mode);
		goto rollback;
	}
	vcc_update_state(c);
	vcnl_event(c, VCACHE_EV_SET, NULL, 0, NULL);
	return 0;

rollback:
	if (vc_cache_get_policy(c->engine) != old_policy)
		vc_cache_set_policy(c->engine, old_policy);
	if (mask)
		vc_cache_set_params(c->engine, mask, old.v);
	return err;
}

/* --------------------------------------------------------------- flush */
static void vcc_flush_work(struct work_struct *w)
{
	struct vcc_cache *c = container_of(to_delayed_work(w),
					   struct vcc_cache, flush_work);

	if (!READ_ONCE(c->flush_running))
		return;
	vcnl_event(c, VCACHE_EV_FLUSH_PROGRESS, NULL, 0, NULL);
	schedule_delayed_work(&c->flush_work, HZ);
}

static void vcc_flush_done(void *arg, int result)
{
	struct vcc_cache *c = arg;

	c->flush_result = result;
	WRITE_ONCE(c->flush_running, false);
	vcnl_event(c, VCACHE_EV_FLUSH_DONE, NULL, result, NULL);
}

int vcc_flush_start(struct vcc_cache *c, struct vcc_dev *d,
		    struct netlink_ext_ack *ext)
{
	int err;

	lockdep_assert_held(&vcc_lock);
	err = vcc_busy(c, ext);
	if (err)
		return err;
	if (!c->engine) {
		vcc_ext_err(ext, "cache %s is %s", c->name, vcc_state_name(c->state));
		return -EIO;
	}
	if (d && d->state != VCACHE_BS_ATTACHED) {
		vcc_ext_err(ext, "%s is %s: its dirty data waits for it", d->devname,
			    vcc_bstate_name(d->state));
		return -ENODEV;
	}
	WRITE_ONCE(c->flush_running, true);
	c->flush_seq++;
	err = vc_cache_flush_start(c->engine, d ? d->id : VC_DEV_ID_ALL,
				   vcc_flush_done, c);
	if (err) {
		WRITE_ONCE(c->flush_running, false);
		c->flush_seq--;
		vcc_ext_err(ext, "cache %s: a flush is running already", c->name);
		return err;
	}
	schedule_delayed_work(&c->flush_work, HZ);
	return 0;
}

void vcc_flush_cancel(struct vcc_cache *c)
{
	if (c->engine)
		vc_cache_flush_cancel(c->engine);
}

/* ------------------------------------------------------------ restore */
/*
 * A cache whose engine was loaded from its flash (vcc_card.c): its
 * backing slots become cached devices waiting for their disks.
 */
/* Is @name a cached device's, of a listed cache or of @c (not listed)? */
static bool vcc_devname_taken(struct vcc_cache *c, const char *name)
{
	int j;

	if (vcc_find_devname(name))
		return true;
	for (j = 0; j < VC_MAX_BACKING; j++)
		if (c->devs[j] && !strcmp(c->devs[j]->devname, name))
			return true;
	return false;
}

void vcc_restore_devs(struct vcc_cache *c)
{
	struct vc_backing_info bi;
	int i, k;

	for (i = 0; i < VC_MAX_BACKING; i++) {
		struct vcc_dev *d;
		char name[VCACHE_NAME_MAX];
		const char *devname = c->conf[i].devname;

		if (vc_cache_backing_info(c->engine, i, &bi))
			continue;
		/*
		 * A name from the table that is damaged, or taken (by
		 * another cache, or by another slot of this one, which is
		 * not listed yet): a made-up one, itself not taken.
		 */
		if (!c->conf[i].in_use || !vcc_valid_name(devname) ||
		    vcc_devname_taken(c, devname)) {
			k = i;
			do
				snprintf(name, sizeof(name), "%.*s-%d",
					 VCACHE_NAME_MAX - 12, c->name, k++);
			while (vcc_devname_taken(c, name) &&
			       k < i + 64 * VC_MAX_BACKING);
			devname = name;
		}
		d = vcc_dev_alloc(c, devname, bi.uuid);
		if (!d)
			continue;
		d->id = i;
		c->devs[i] = d;
		vcc_conf_set_dev(c, d);
		pr_info("%s: waiting for backing device %s (%s, %llu dirty blocks)\n",
			c->name, bi.uuid, d->devname, bi.dirty_blocks);
	}
}

/*
 * Tear down every cache on @card (card going away) or all (@card NULL).
 * Unlisted under vcc_lock, their engines shut down without it, as a
 * delete's (see vcc.h): a shutdown waits for write-back in flight, and a
 * backing device that does not answer would hold every command until it
 * does.  Each counts as an unlocked operation meanwhile, so that a module
 * unload racing a card's removal waits for it.
 */
void vcc_stop_all(struct vcd_card *card)
{
	struct vcc_cache *c, *t;
	LIST_HEAD(stopping);

	mutex_lock(&vcc_lock);
	vcc_quiesce(card);
	list_for_each_entry_safe(c, t, &vcc_caches, node) {
		if (card && c->card != card)
			continue;
		vcnl_event(c, VCACHE_EV_STATE, NULL, 0, "stopping");
		vcc_teardown_unlist(c);
		list_add_tail(&c->node, &stopping);
		vcc_op_begin(&c->op, c);
	}
	mutex_unlock(&vcc_lock);
	list_for_each_entry_safe(c, t, &stopping, node) {
		list_del_init(&c->node);
		vcc_teardown_release(c, 0);
		pr_info("%s: stopped\n", c->name);
		vcc_relock_op(&c->op);
		vcc_free(c);
		mutex_unlock(&vcc_lock);
	}
}

/*
 * The engine degrades a cache by itself (flash errors): a look every
 * second makes the state (sysfs, /proc, netlink) follow, with its event.
 */
static void vcc_watch_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(vcc_watch, vcc_watch_fn);

static void vcc_watch_fn(struct work_struct *w)
{
	struct vcc_cache *c;

	mutex_lock(&vcc_lock);
	list_for_each_entry(c, &vcc_caches, node)
		vcc_update_state(c);
	if (vcc_ready)
		schedule_delayed_work(&vcc_watch, HZ);
	mutex_unlock(&vcc_lock);
}

int vcc_init(void)
{
	int err;

	err = vcc_disk_init();
	if (err)
		return err;
	err = vcc_proc_init();
	if (err)
		goto out_disk;
	mutex_lock(&vcc_lock);
	vcc_ready = true;
	mutex_unlock(&vcc_lock);
	err = vcc_card_init();
	if (err)
		goto out_proc;
	schedule_delayed_work(&vcc_watch, HZ);
	return 0;

out_proc:
	mutex_lock(&vcc_lock);
	vcc_ready = false;
	mutex_unlock(&vcc_lock);
	vcc_proc_exit();
out_disk:
	vcc_disk_exit();
	return err;
}

void vcc_exit(void)
{
	mutex_lock(&vcc_lock);
	vcc_ready = false;
	mutex_unlock(&vcc_lock);
	cancel_delayed_work_sync(&vcc_watch);
	/*
	 * The caches first, the card notices after: a card removed in
	 * between still has its caches stopped before its regions go.
	 */
	vcc_stop_all(NULL);
	vcc_card_exit();
	vcc_proc_exit();
	vcc_disk_exit();
}
