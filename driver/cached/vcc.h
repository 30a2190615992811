/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cached block device layer of vcache.ko: caches (an engine instance
 * on flash: a card region or any block device) and cached devices
 * (/dev/vcacheN, one per backing device).  Used by the netlink control
 * plane (driver/netlink/) and by sysfs and /proc.
 *
 * Locking: vcc_lock (a mutex) serialises every control operation (create,
 * delete, attach, detach, set, flush start, restore at card probe, card
 * removal) and protects the list of caches and each cache's devs[].  The
 * I/O path takes no lock of this layer: a cached device's bios hold a
 * percpu reference (vcc_dev.active) that detach kills and waits for.
 *
 * The long parts of an operation (the write-back of a delete or a detach
 * --flush, a deleted cache's engine shutdown, a create's format, the load
 * of a cache from a block device, a backing device's open, compare read
 * and start, new or returning) run without vcc_lock, so that other
 * caches, the tools and the state watch never wait behind device I/O:
 * the write-back with the cache marked busy (listed and readable; any
 * operation that would change it fails with -EBUSY), the shutdown with
 * the cache unlisted, the create and the load before the cache is
 * listed, an attach into a private vcc_dev listed under the lock when it
 * is done (a return's replaces the waiting one).  Meanwhile the names,
 * identities and devices they take are taken (vcc_plugging, vcc_unlisted)
 * and the cache is marked plugging (as busy).  Each is a struct vcc_op,
 * listed while it runs.  Card removal and module unload wait for those of
 * their own caches only, and stop such a write-back (vcc_quiesce());
 * their own caches' shutdowns run unlisted and unlocked too
 * (vcc_stop_all()).
 */
#ifndef VCC_H
#define VCC_H

#include <linux/blkdev.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/percpu-refcount.h>

#include <vcache/vcache_nl.h>

#include "compat.h"
#include "vc_engine.h"
#include "vc_linux.h"
#include "vcache_stack.h"

extern struct mutex vcc_lock;

struct vcc_cache;
struct vcc_kobj;

/* An operation of a cache running without vcc_lock (see above). */
struct vcc_op {
	struct list_head node;		/* vcc_lock: the running ones */
	struct vcc_cache *c;
};

/* A cached device: one backing device served through a cache. */
struct vcc_dev {
	struct vcc_cache *cache;
	u32 id;				/* the engine's backing id */
	char devname[VCACHE_NAME_MAX];	/* /dev/vcache/<devname> */
	char ident[VCACHE_IDENT_MAX];
	enum vcache_backing_state state;
	u64 size;			/* bytes, when attached */

	struct vcd_bdev_handle bh;	/* backing, held exclusively */
	struct vc_linux_dev ld;
	char bdev_name[BDEVNAME_SIZE];

	struct gendisk *disk;		/* /dev/vcacheN while attached */
	int index;			/* N */
	bool dying;			/* opens refused (delete, detach) */
	bool plugging;			/* vcc_lock: its return runs unlocked */
	bool kept;			/* failed attach: the engine keeps its slot */
	/* vcc_lock: on vcc_plugging while it is plugged in without the lock */
	struct list_head plug_node;
	dev_t plug_devt;
	struct percpu_ref active;	/* bios in flight */
	struct completion drained;
	struct vcc_kobj *ko;		/* /sys/block/vcacheN/vcache */
};

/* The settings kept with a card cache's region (vcc_conf.c). */
struct vcc_conf_dev {
	bool in_use;
	char devname[VCACHE_NAME_MAX];
	char ident[VCACHE_IDENT_MAX];
};

struct vcc_cache {
	struct list_head node;		/* vcc_caches, vcc_lock */
	char name[VCACHE_NAME_MAX];
	enum vcache_state state;

	/* flash: a card region, or a block device opened exclusively */
	struct vcd_card *card;
	char card_serial[VCACHE_NAME_MAX];
	struct vcd_region *region;
	struct vcd_bdev_handle fh;
	struct block_device *fbdev;
	char flash_name[BDEVNAME_SIZE];
	dev_t flash_devt;		/* what the user named */
	u64 region_start, size;		/* bytes */
	struct vc_linux_dev flash;
	struct vc_cache *engine;
	u32 block_size;

	struct vcc_dev *devs[VC_MAX_BACKING];
	struct vcc_conf_dev conf[VC_MAX_BACKING];
	/* a card cache that failed to load: its table settings, for SALVAGE */
	void *failed_conf;
	u32 failed_conf_len;

	/* background flush started by VCACHE_CMD_FLUSH */
	u32 flush_seq;
	int flush_result;
	bool flush_running;
	struct delayed_work flush_work;	/* progress events */

	struct proc_dir_entry *proc;
	bool proc_closing;		/* vcc_proc_del() under way */
	bool busy;			/* vcc_lock: write-back runs unlocked */
	int plugging;			/* vcc_lock: devices returning unlocked */
	struct vcc_op op;		/* its write-back's or shutdown's */
	bool stopping;			/* its unlocked write-back is to stop */
};

/* vcc_sysfs.c: the counters by enum vcache_stat_attr, named as in the ABI */
extern const char * const vcc_stat_names[VCACHE_S_MAX + 1];
int vcc_stats_fill(struct vcc_cache *c, u64 *v);
/* Counters of backing device @id; which ones: vcc_stat_per_dev(). */
void vcc_dev_stats_fill(struct vcc_cache *c, u32 id, u64 *v);
bool vcc_stat_per_dev(int attr);
/* Histogram of latency path @path (enum vcache_lat_path) and its count. */
bool vcc_latency(struct vcc_cache *c, int path, u64 *buckets, u64 *count,
		 u64 *sum_ns);
extern const char * const vcc_lat_names[VCACHE_NR_LAT_PATHS];

/* vcc_cache.c: caches */
/*
 * Set @ext's message (@ext may be NULL): NL_SET_ERR_MSG_FMT(), at most
 * NETLINK_MAX_FMTMSG_LEN - 1 characters, so the device and the reason
 * come first (the tool explains the rest).
 */
#define vcc_ext_err(ext, fmt, args...) NL_SET_ERR_MSG_FMT(ext, fmt, ##args)
int vcc_init(void);
void vcc_exit(void);
/*
 * Let go of vcc_lock (held) for @op, a long part of an operation of @c,
 * and take it again after it: vcc_quiesce() waits for @op meanwhile.
 */
void vcc_unlock_op(struct vcc_op *op, struct vcc_cache *c);
void vcc_relock_op(struct vcc_op *op);
struct vcc_cache *vcc_find(const char *name);
/* Names of caches and cached devices: [A-Za-z0-9_.-], no leading . or -. */
bool vcc_valid_name(const char *s);
/* Iterate the caches (vcc_lock held). */
struct vcc_cache *vcc_first(void);
struct vcc_cache *vcc_next(struct vcc_cache *c);

struct vcc_create_args {
	const char *name;
	dev_t cache_devt;
	u64 size;			/* 0: all */
	struct vc_cache_config cfg;
	dev_t backing_devt;
	const char *ident;
	const char *devname;		/* NULL: the cache's name */
};

int vcc_create(const struct vcc_create_args *a, struct netlink_ext_ack *ext);
int vcc_delete(struct vcc_cache *c, u32 flags, struct netlink_ext_ack *ext);
int vcc_attach(struct vcc_cache *c, dev_t devt, const char *ident,
	       const char *devname, struct netlink_ext_ack *ext);
int vcc_detach(struct vcc_cache *c, struct vcc_dev *d, u32 flags,
	       struct netlink_ext_ack *ext);
int vcc_hotplug(dev_t devt, const char *ident, struct netlink_ext_ack *ext);
/*
 * Load the cache a block device (not a card) holds; -ENODATA: none.  Damaged
 * metadata is refused unless @salvage (vcc_card.c: VCACHE_F_SALVAGE).
 */
int vcc_bdev_load(dev_t devt, bool salvage, struct netlink_ext_ack *ext);
/* Recompute @c's state (not FAILED or STOPPING) and announce a change. */
void vcc_update_state(struct vcc_cache *c);
/* SALVAGE: load again, salvaging, card cache @c that failed to load. */
int vcc_card_salvage(struct vcc_cache *c, struct netlink_ext_ack *ext);
/* REPAIR_TABLE (vcc_card.c): rewrite the damaged table of card @devt. */
int vcc_card_repair(dev_t devt, bool force, struct netlink_ext_ack *ext);
int vcc_flush_start(struct vcc_cache *c, struct vcc_dev *d,
		    struct netlink_ext_ack *ext);
void vcc_flush_cancel(struct vcc_cache *c);
/* Settings of a SET, validated and applied as a whole. */
struct vcc_settings {
	int mode;			/* -1: unchanged */
	int policy;
	bool has[VC_NR_PARAMS];
	u64 v[VC_NR_PARAMS];
};

int vcc_set(struct vcc_cache *c, const struct vcc_settings *s,
	    struct netlink_ext_ack *ext);
u64 vcc_dev_dirty_bytes(struct vcc_cache *c, u32 id);
struct vcc_dev *vcc_find_dev(struct vcc_cache *c, const char *devname,
			     dev_t devt);
int vcc_save_conf(struct vcc_cache *c);

/* vcc_disk.c: the cached block device */
int vcc_disk_init(void);
void vcc_disk_exit(void);
int vcc_dev_start(struct vcc_dev *d);
void vcc_dev_stop(struct vcc_dev *d);

/* vcc_sysfs.c: sysfs and /proc */
int vcc_proc_init(void);
void vcc_proc_exit(void);
void vcc_proc_add(struct vcc_cache *c);
void vcc_proc_del(struct vcc_cache *c);
int vcc_sysfs_add(struct vcc_dev *d);
void vcc_sysfs_del(struct vcc_dev *d);
const char *vcc_state_name(enum vcache_state s);
const char *vcc_bstate_name(enum vcache_backing_state s);

/* netlink events (driver/netlink/vc_nl.c) */
void vcnl_event(struct vcc_cache *c, enum vcache_event ev,
		const struct vcc_dev *d, int err, const char *msg);

#endif /* VCC_H */
