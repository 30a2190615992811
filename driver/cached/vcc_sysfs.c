// SPDX-License-Identifier: GPL-2.0
/*
 * what a cache shows without a tool: /sys/block/vcacheN/vcache/ (state,
 * settings, writable parameters, counters) and /proc/vcache/NAME.
 */
#define pr_fmt(fmt) "vcache: " fmt

#include <linux/capability.h>
#include <linux/delay.h>
#include <linux/kobject.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "vc_release.h"
#include "vcc.h"

static struct proc_dir_entry *vcc_proc_dir;
static void vcc_sysfs_build(void);

const char * const vcc_stat_names[VCACHE_S_MAX + 1] = VCACHE_STAT_NAMES;

/* The ABI's per-device counters: where each one is in vc_dev_stats. */
#define VCC_DS(attr, field) \
	{ VCACHE_S_##attr, offsetof(struct vc_dev_stats, field) / sizeof(u64) }

static const struct {
	u8 attr;
	u8 off;
} vcc_dev_map[] = {
	VCC_DS(READS, reads), VCC_DS(WRITES, writes),
	VCC_DS(FLUSHES, flushes), VCC_DS(DISCARDS, discards),
	VCC_DS(WRITE_ZEROES, write_zeroes), VCC_DS(FUA_WRITES, fua_writes),
	VCC_DS(READ_HITS, read_hits), VCC_DS(READ_MISSES, read_misses),
	VCC_DS(WRITE_HITS, write_hits), VCC_DS(WRITE_MISSES, write_misses),
	VCC_DS(READ_BYTES, read_bytes), VCC_DS(WRITE_BYTES, write_bytes),
	VCC_DS(READ_HIT_BYTES, read_hit_bytes),
	VCC_DS(READ_MISS_BYTES, read_miss_bytes),
	VCC_DS(WRITE_HIT_BYTES, write_hit_bytes),
	VCC_DS(WRITE_MISS_BYTES, write_miss_bytes),
	VCC_DS(BYPASS_MODE, bypass[VC_BYP_MODE]),
	VCC_DS(BYPASS_SEQ, bypass[VC_BYP_SEQ]),
	VCC_DS(BYPASS_PID, bypass[VC_BYP_PID]),
	VCC_DS(BYPASS_ADMISSION, bypass[VC_BYP_ADMISSION]),
	VCC_DS(BYPASS_NOSPACE, bypass[VC_BYP_NOSPACE]),
	VCC_DS(BYPASS_BUSY, bypass[VC_BYP_BUSY]),
	VCC_DS(BYPASS_MODE_BYTES, bypass_bytes[VC_BYP_MODE]),
	VCC_DS(BYPASS_SEQ_BYTES, bypass_bytes[VC_BYP_SEQ]),
	VCC_DS(BYPASS_PID_BYTES, bypass_bytes[VC_BYP_PID]),
	VCC_DS(BYPASS_ADMISSION_BYTES, bypass_bytes[VC_BYP_ADMISSION]),
	VCC_DS(BYPASS_NOSPACE_BYTES, bypass_bytes[VC_BYP_NOSPACE]),
	VCC_DS(BYPASS_BUSY_BYTES, bypass_bytes[VC_BYP_BUSY]),
	VCC_DS(WB_BLOCKS, wb_blocks), VCC_DS(WB_BYTES, wb_bytes),
	VCC_DS(WB_IOS, wb_ios),
	VCC_DS(BACKING_READ_ERRORS, backing_read_errors),
	VCC_DS(BACKING_WRITE_ERRORS, backing_write_errors),
	VCC_DS(LOST_BLOCKS, lost_blocks), VCC_DS(LOST_READS, lost_reads),
	VCC_DS(BACKING_FLUSHES, backing_flushes),
	VCC_DS(WB_FLUSHES, wb_flushes),
	VCC_DS(WB_THROTTLED, wb_throttled),
	VCC_DS(WRITE_WAITS, write_waits),
	VCC_DS(FILLS_OVERTAKEN, fills_overtaken),
	VCC_DS(READAHEAD_BLOCKS, readahead_blocks),
};

static_assert(VC_NR_BYPASS == 6, "the ABI has six bypass reasons");
static_assert((int)VC_LAT_READ_HIT == (int)VCACHE_LAT_READ_HIT &&
	      (int)VC_LAT_WRITE_MISS == (int)VCACHE_LAT_WRITE_MISS &&
	      (int)VC_LAT_BYPASS == (int)VCACHE_LAT_BYPASS &&
	      (int)VC_LAT_WRITEBACK == (int)VCACHE_LAT_WRITEBACK &&
	      (int)VC_LAT_FLUSH == (int)VCACHE_LAT_FLUSH,
	      "engine and ABI latency paths differ");
static_assert((int)VC_LAT_BUCKETS == (int)VCACHE_LAT_BUCKETS &&
	      (int)VC_LAT_MIN_SHIFT == (int)VCACHE_LAT_MIN_SHIFT &&
	      (int)VC_LAT_SUB_BITS == (int)VCACHE_LAT_SUB_BITS &&
	      (int)VC_NR_LAT == (int)VCACHE_NR_LAT_PATHS,
	      "engine and ABI latency buckets differ");

static void vcc_dev_part(u64 *v, const struct vc_dev_stats *d)
{
	const u64 *f = (const u64 *)d;
	int i;

	for (i = 0; i < ARRAY_SIZE(vcc_dev_map); i++)
		v[vcc_dev_map[i].attr] = f[vcc_dev_map[i].off];
}

/* Fill @v (indexed by enum vcache_stat_attr) from the engine of @c. */
int vcc_stats_fill(struct vcc_cache *c, u64 *v)
{
	struct vc_stats *st;
	struct vc_cache *e = READ_ONCE(c->engine);

	memset(v, 0, sizeof(u64) * (VCACHE_S_MAX + 1));
	if (!e)
		return 0;
	st = kmalloc_obj(*st, GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	vc_cache_get_stats(e, st);
	vcc_dev_part(v, &st->dev_sum);
	v[VCACHE_S_ADMITTED] = st->admitted;
	v[VCACHE_S_NOT_ADMITTED] = st->not_admitted;
	v[VCACHE_S_EVICTIONS] = st->evictions;
	v[VCACHE_S_CLEAN_WATERMARK] = st->cleanings[VC_CLEAN_WATERMARK];
	v[VCACHE_S_CLEAN_AGE] = st->cleanings[VC_CLEAN_AGE];
	v[VCACHE_S_CLEAN_IDLE] = st->cleanings[VC_CLEAN_IDLE];
	v[VCACHE_S_CLEAN_FLUSH] = st->cleanings[VC_CLEAN_FLUSH];
	v[VCACHE_S_CLEAN_MODE] = st->cleanings[VC_CLEAN_MODE];
	v[VCACHE_S_CLEAN_TAIL] = st->cleanings[VC_CLEAN_TAIL];
	v[VCACHE_S_CACHE_READ_ERRORS] = st->cache_read_errors;
	v[VCACHE_S_CACHE_WRITE_ERRORS] = st->cache_write_errors;
	v[VCACHE_S_READ_RETRIES] = st->read_retries;
	v[VCACHE_S_LOST_MARKED] = st->lost_marked;
	v[VCACHE_S_LOAD_BAD_SECTORS] = st->load_bad_sectors;
	v[VCACHE_S_LOAD_BAD_RECORDS] = st->load_bad_records;
	v[VCACHE_S_DEGRADATIONS] = st->degradations;
	v[VCACHE_S_FLASH_BYTES_WRITTEN] = st->flash_bytes_written;
	v[VCACHE_S_FLASH_BYTES_READ] = st->flash_bytes_read;
	v[VCACHE_S_BACKING_BYTES_WRITTEN] = st->backing_bytes_written;
	v[VCACHE_S_BACKING_BYTES_READ] = st->backing_bytes_read;
	v[VCACHE_S_BACKING_IOS] = st->backing_ios;
	v[VCACHE_S_MD_WRITES] = st->md_writes;
	v[VCACHE_S_COMMITS] = st->commits;
	v[VCACHE_S_CACHE_FLUSHES] = st->cache_flushes;
	v[VCACHE_S_NR_BLOCKS] = st->nr_blocks;
	v[VCACHE_S_VALID_BLOCKS] = st->valid_blocks;
	v[VCACHE_S_DIRTY_BLOCKS] = st->dirty_blocks;
	v[VCACHE_S_DIRTY_BYTES] = st->dirty_blocks * st->block_size;
	v[VCACHE_S_MEM_BYTES] = st->mem_bytes;
	v[VCACHE_S_OLDEST_DIRTY_AGE_NS] = st->oldest_dirty_age_ms * NSEC_PER_MSEC;
	v[VCACHE_S_ELAPSED_NS] = st->elapsed_ns;
	v[VCACHE_S_WB_RATE_BPS] = st->wb_rate_bps;
	v[VCACHE_S_DIRTY_OVERWRITES] = st->dirty_overwrites;
	v[VCACHE_S_OOP_WRITES] = st->oop_writes;
	kfree(st);
	return 0;
}

bool vcc_stat_per_dev(int attr)
{
	int i;

	if (attr == VCACHE_S_DIRTY_BYTES || attr == VCACHE_S_ELAPSED_NS)
		return true;
	for (i = 0; i < ARRAY_SIZE(vcc_dev_map); i++)
		if (vcc_dev_map[i].attr == attr)
			return true;
	return false;
}

/*
 * The counters of backing device @id of @c into @v (indexed as above;
 * only those vcc_stat_per_dev() names are set, the rest are 0).
 */
void vcc_dev_stats_fill(struct vcc_cache *c, u32 id, u64 *v)
{
	struct vc_cache *e = READ_ONCE(c->engine);
	struct vc_dev_stats ds;

	memset(v, 0, sizeof(u64) * (VCACHE_S_MAX + 1));
	if (!e)
		return;
	vc_cache_get_dev_stats(e, id, &ds);
	vcc_dev_part(v, &ds);
	v[VCACHE_S_DIRTY_BYTES] = vcc_dev_dirty_bytes(c, id);
	v[VCACHE_S_ELAPSED_NS] = vc_cache_stats_elapsed_ns(e);
}

/* The histogram of @path: false (buckets zero) without an engine. */
bool vcc_latency(struct vcc_cache *c, int path, u64 *buckets, u64 *count,
		 u64 *sum_ns)
{
	struct vc_cache *e = READ_ONCE(c->engine);
	int i;

	*count = 0;
	*sum_ns = 0;
	memset(buckets, 0, sizeof(u64) * VCACHE_LAT_BUCKETS);
	if (!e)
		return false;
	vc_cache_get_latency(e, path, buckets, sum_ns);
	for (i = 0; i < VCACHE_LAT_BUCKETS; i++)
		*count += buckets[i];
	return true;
}

const char * const vcc_lat_names[VCACHE_NR_LAT_PATHS] = VCACHE_LAT_PATH_NAMES;

/* --------------------------------------------------------------- /proc */
/* "backing0.read_hits 12": the counters of each backing device */
static void vcc_proc_devs(struct seq_file *m, struct vcc_cache *c, u64 *v)
{
	int i, k;

	for (i = 0; i < VC_MAX_BACKING; i++) {
		if (!c->devs[i])
			continue;
		vcc_dev_stats_fill(c, i, v);
		for (k = 1; k <= VCACHE_S_MAX; k++)
			if (vcc_stat_names[k] && vcc_stat_per_dev(k))
				seq_printf(m, "backing%d.%s %llu\n", i,
					   vcc_stat_names[k], v[k]);
	}
}

/* "latency.read_hit.p99_ns 1024": count and quantiles of each path */
static void vcc_proc_latency(struct seq_file *m, struct vcc_cache *c)
{
	static const struct { const char *name; u64 ppm; } q[] = {
		{ "p50", 500000 }, { "p99", 990000 }, { "p999", 999000 },
	};
	u64 *b = kmalloc_array(VCACHE_LAT_BUCKETS, sizeof(*b), GFP_KERNEL);
	u64 n, sum;
	int p, k;

	if (!b)
		return;
	for (p = 0; p < VCACHE_NR_LAT_PATHS; p++) {
		if (!vcc_latency(c, p, b, &n, &sum))
			break;
		seq_printf(m, "latency.%s.count %llu\n", vcc_lat_names[p], n);
		seq_printf(m, "latency.%s.sum_ns %llu\n", vcc_lat_names[p], sum);
		for (k = 0; k < ARRAY_SIZE(q); k++)
			seq_printf(m, "latency.%s.%s_ns %llu\n", vcc_lat_names[p],
				   q[k].name, vcache_lat_quantile(b, n, q[k].ppm));
	}
	kfree(b);
}

static int vcc_proc_show_locked(struct seq_file *m, struct vcc_cache *c)
{
	bool priv = file_ns_capable(m->file, &init_user_ns, CAP_SYS_ADMIN);
	u64 *v;
	int i;

	lockdep_assert_held(&vcc_lock);
	seq_printf(m, "name %s\nstate %s\nflash %s\nregion_start %llu\nsize %llu\nblock_size %u\n",
		   c->name, vcc_state_name(c->state), c->flash_name,
		   c->region_start, c->size, c->block_size);
	if (c->engine) {
		seq_printf(m, "mode %s\nrequested_mode %s\npolicy %s\n",
			   vc_mode_name(vc_cache_get_mode(c->engine)),
			   vc_mode_name(vc_cache_get_requested_mode(c->engine)),
			   vc_policy_name(vc_cache_get_policy(c->engine)));
		for (i = 0; i < VC_NR_PARAMS; i++)
			seq_printf(m, "%s %llu\n", vc_param_name(i),
				   vc_cache_get_param(c->engine, i));
	}
	for (i = 0; i < VC_MAX_BACKING; i++) {
		struct vcc_dev *d = c->devs[i];

		if (!d)
			continue;
		/* the identity (what auto-attach matches) only for root */
		seq_printf(m, "backing%d %s %s %s %s %s %llu\n", i, d->devname,
			   d->disk ? d->disk->disk_name : "-",
			   d->state == VCACHE_BS_ATTACHED ? d->bdev_name : "-",
			   priv ? d->ident : "-", vcc_bstate_name(d->state),
			   vcc_dev_dirty_bytes(c, i));
	}
	v = kmalloc_array(VCACHE_S_MAX + 1, sizeof(*v), GFP_KERNEL);
	if (!v || vcc_stats_fill(c, v)) {
		kfree(v);
		return -ENOMEM;
	}
	for (i = 1; i <= VCACHE_S_MAX; i++)
		if (vcc_stat_names[i])
			seq_printf(m, "%s %llu\n", vcc_stat_names[i], v[i]);
	vcc_proc_devs(m, c, v);
	kfree(v);
	vcc_proc_latency(m, c);
	return 0;
}

/*
 * /proc/vcache/NAME is world-readable: the cache's devices come and go
 * under vcc_lock (attach, detach free them), so the reader takes it.  The
 * entry itself lives until vcc_proc_del(), which runs under vcc_lock and
 * waits for readers: a reader that cannot take the lock gives up once the
 * entry is going, instead of waiting for a lock its remover holds.
 */
static int vcc_proc_show(struct seq_file *m, void *unused)
{
	struct vcc_cache *c = m->private;
	int err;

	while (!mutex_trylock(&vcc_lock)) {
		if (READ_ONCE(c->proc_closing))
			return -ENODEV;
		if (msleep_interruptible(5))
			return -EINTR;
	}
	err = vcc_proc_show_locked(m, c);
	mutex_unlock(&vcc_lock);
	return err;
}

void vcc_proc_add(struct vcc_cache *c)
{
	WRITE_ONCE(c->proc_closing, false);
	if (vcc_proc_dir)
		c->proc = proc_create_single_data(c->name, 0444, vcc_proc_dir,
						  vcc_proc_show, c);
}

void vcc_proc_del(struct vcc_cache *c)
{
	lockdep_assert_held(&vcc_lock);
	WRITE_ONCE(c->proc_closing, true);
	proc_remove(c->proc);	/* waits for readers */
	c->proc = NULL;
}

int vcc_proc_init(void)
{
	vcc_sysfs_build();
	vcc_proc_dir = proc_mkdir("vcache", NULL);
	return vcc_proc_dir ? 0 : -ENOMEM;
}

void vcc_proc_exit(void)
{
	proc_remove(vcc_proc_dir);
	vcc_proc_dir = NULL;
}

/* --------------------------------------------------------------- sysfs */
struct vcc_attr {
	struct attribute attr;
	ssize_t (*show)(struct vcc_dev *d, char *buf, int arg);
	ssize_t (*store)(struct vcc_dev *d, const char *buf, size_t n, int arg);
	int arg;
};

/*
 * The kobject of /sys/block/vcacheN/vcache, allocated per add and freed by
 * its release: a reference still held after kobject_del() (a uevent in
 * flight) never sees the next one.  @d is valid while the files are
 * there: kobject_del() waits for their readers and writers.
 */
struct vcc_kobj {
	struct kobject kobj;
	struct vcc_dev *d;
};

static struct vcc_dev *vcc_kobj_dev(struct kobject *k)
{
	return container_of(k, struct vcc_kobj, kobj)->d;
}

static ssize_t vcc_attr_show(struct kobject *k, struct attribute *a, char *buf)
{
	struct vcc_attr *va = container_of(a, struct vcc_attr, attr);

	return va->show(vcc_kobj_dev(k), buf, va->arg);
}

static ssize_t vcc_attr_store(struct kobject *k, struct attribute *a,
			      const char *buf, size_t n)
{
	struct vcc_attr *va = container_of(a, struct vcc_attr, attr);
	ssize_t ret;

	if (!va->store)
		return -EPERM;
	/* kobject_del() under vcc_lock waits for us: never block on it */
	if (!mutex_trylock(&vcc_lock))
		return restart_syscall();
	ret = va->store(vcc_kobj_dev(k), buf, n, va->arg);
	mutex_unlock(&vcc_lock);
	return ret;
}

static const struct sysfs_ops vcc_sysfs_ops = {
	.show = vcc_attr_show,
	.store = vcc_attr_store,
};

static ssize_t show_info(struct vcc_dev *d, char *buf, int arg)
{
	struct vcc_cache *c = d->cache;
	struct vc_cache *e = c->engine;

	if (!e && arg >= 3 && arg != 5 && arg != 6 && arg != 7 && arg != 8)
		return sysfs_emit(buf, "-\n");
	switch (arg) {
	case 0:
		return sysfs_emit(buf, "%s\n", d->devname);
	case 1:
		return sysfs_emit(buf, "%s\n", c->name);
	case 2:
		return sysfs_emit(buf, "%s\n", vcc_state_name(c->state));
	case 3:
		return sysfs_emit(buf, "%s\n", vc_mode_name(vc_cache_get_mode(e)));
	case 4:
		return sysfs_emit(buf, "%s\n", vc_policy_name(vc_cache_get_policy(e)));
	case 5:
		return sysfs_emit(buf, "%s\n", d->bdev_name);
	case 6:
		return sysfs_emit(buf, "%s\n", d->ident);
	case 7:
		return sysfs_emit(buf, "%s\n", c->flash_name);
	case 8:
		return sysfs_emit(buf, "%llu\n", vcc_dev_dirty_bytes(c, d->id));
	default:
		return sysfs_emit(buf, "%s\n",
				  vc_mode_name(vc_cache_get_requested_mode(e)));
	}
}

static ssize_t store_mode(struct vcc_dev *d, const char *buf, size_t n,
			  int arg)
{
	struct vcc_settings s = { .mode = -1, .policy = -1 };
	int i, err;

	for (i = 0; i < (arg ? VC_NR_POLICIES : VC_NR_MODES); i++) {
		if (sysfs_streq(buf, arg ? vc_policy_name(i) : vc_mode_name(i)))
			break;
	}
	if (i == (arg ? VC_NR_POLICIES : VC_NR_MODES))
		return -EINVAL;
	if (arg)
		s.policy = i;
	else
		s.mode = i;
	err = vcc_set(d->cache, &s, NULL);
	return err ? err : n;
}

static ssize_t show_param(struct vcc_dev *d, char *buf, int arg)
{
	struct vc_cache *e = d->cache->engine;

	return e ? sysfs_emit(buf, "%llu\n", vc_cache_get_param(e, arg)) : -EIO;
}

static ssize_t store_param(struct vcc_dev *d, const char *buf, size_t n,
			   int arg)
{
	struct vcc_settings s = { .mode = -1, .policy = -1 };
	int err;

	err = kstrtou64(buf, 0, &s.v[arg]);
	if (err)
		return err;
	s.has[arg] = true;
	err = vcc_set(d->cache, &s, NULL);
	return err ? err : n;
}

static ssize_t show_stat(struct vcc_dev *d, char *buf, int arg)
{
	u64 *v = kmalloc_array(VCACHE_S_MAX + 1, sizeof(*v), GFP_KERNEL);
	ssize_t ret = -ENOMEM;

	if (v && !vcc_stats_fill(d->cache, v))
		ret = sysfs_emit(buf, "%llu\n", v[arg]);
	kfree(v);
	return ret;
}

static ssize_t show_dev_stat(struct vcc_dev *d, char *buf, int arg)
{
	u64 *v = kmalloc_array(VCACHE_S_MAX + 1, sizeof(*v), GFP_KERNEL);
	ssize_t ret = -ENOMEM;

	if (v) {
		vcc_dev_stats_fill(d->cache, d->id, v);
		ret = sysfs_emit(buf, "%llu\n", v[arg]);
	}
	kfree(v);
	return ret;
}

/* latency/<path>_<what>: arg = path * 4 + what (count, p50, p99, p999) */
static ssize_t show_latency(struct vcc_dev *d, char *buf, int arg)
{
	static const u64 ppm[] = { 0, 500000, 990000, 999000 };
	u64 *b = kmalloc_array(VCACHE_LAT_BUCKETS, sizeof(*b), GFP_KERNEL);
	ssize_t ret = -ENOMEM;
	u64 n, sum;

	if (b) {
		vcc_latency(d->cache, arg / 4, b, &n, &sum);
		ret = sysfs_emit(buf, "%llu\n", arg % 4 ?
				 vcache_lat_quantile(b, n, ppm[arg % 4]) : n);
	}
	kfree(b);
	return ret;
}

#define VCC_RO(_name, _arg) \
	{ .attr = { .name = _name, .mode = 0444 }, .show = show_info, .arg = _arg }

static struct vcc_attr vcc_info_attrs[] = {
	VCC_RO("name", 0), VCC_RO("cache", 1), VCC_RO("state", 2),
	{ .attr = { .name = "mode", .mode = 0644 }, .show = show_info,
	  .store = store_mode, .arg = 3 },
	{ .attr = { .name = "policy", .mode = 0644 }, .show = show_info,
	  .store = store_mode, .arg = 4 },
	VCC_RO("backing", 5), VCC_RO("flash", 7),
	/* what auto-attach matches: root only, as in GET */
	{ .attr = { .name = "ident", .mode = 0400 }, .show = show_info,
	  .arg = 6 },
	VCC_RO("dirty_bytes", 8), VCC_RO("requested_mode", 9),
};

static struct attribute *vcc_default_attrs[ARRAY_SIZE(vcc_info_attrs) + 1];
static struct vcc_attr vcc_param_attrs[VC_NR_PARAMS];
static struct attribute *vcc_param_ptrs[VC_NR_PARAMS + 1];
static struct vcc_attr vcc_stat_attrs[VCACHE_S_MAX];
static struct attribute *vcc_stat_ptrs[VCACHE_S_MAX + 1];
static struct vcc_attr vcc_dstat_attrs[VCACHE_S_MAX];
static struct attribute *vcc_dstat_ptrs[VCACHE_S_MAX + 1];
#define VCC_NR_LAT_FILES (VCACHE_NR_LAT_PATHS * 4)
static struct vcc_attr vcc_lat_attrs[VCC_NR_LAT_FILES];
static struct attribute *vcc_lat_ptrs[VCC_NR_LAT_FILES + 1];
static char vcc_lat_file_names[VCC_NR_LAT_FILES][32];

static const struct attribute_group vcc_info_group = {
	.attrs = vcc_default_attrs,
};

static const struct attribute_group vcc_param_group = {
	.name = "params",
	.attrs = vcc_param_ptrs,
};

static const struct attribute_group vcc_stat_group = {
	.name = "stats",
	.attrs = vcc_stat_ptrs,
};

/* this backing device's own counters (stats/ has the cache's) */
static const struct attribute_group vcc_dstat_group = {
	.name = "dev_stats",
	.attrs = vcc_dstat_ptrs,
};

static const struct attribute_group vcc_lat_group = {
	.name = "latency",
	.attrs = vcc_lat_ptrs,
};

static const struct attribute_group *vcc_groups[] = {
	&vcc_info_group, &vcc_param_group, &vcc_stat_group, &vcc_dstat_group,
	&vcc_lat_group, NULL,
};

static void vcc_kobj_release(struct kobject *k)
{
	kfree(container_of(k, struct vcc_kobj, kobj));
	vcd_release_done();
}

static const struct kobj_type vcc_ktype = {
	.sysfs_ops = &vcc_sysfs_ops,
	.release = vcc_kobj_release,
	.default_groups = vcc_groups,
};

/* The attribute tables come from the engine's names: built at init. */
static void vcc_sysfs_build(void)
{
	static const char * const what[] = { "count", "p50_ns", "p99_ns",
					     "p999_ns" };
	int i, n = 0, nd = 0;

	for (i = 0; i < ARRAY_SIZE(vcc_info_attrs); i++)
		vcc_default_attrs[i] = &vcc_info_attrs[i].attr;
	for (i = 0; i < VC_NR_PARAMS; i++) {
		vcc_param_attrs[i].attr.name = vc_param_name(i);
		vcc_param_attrs[i].attr.mode = 0644;
		vcc_param_attrs[i].show = show_param;
		vcc_param_attrs[i].store = store_param;
		vcc_param_attrs[i].arg = i;
		vcc_param_ptrs[i] = &vcc_param_attrs[i].attr;
	}
	for (i = 1; i <= VCACHE_S_MAX; i++) {
		if (!vcc_stat_names[i])
			continue;
		vcc_stat_attrs[n].attr.name = vcc_stat_names[i];
		vcc_stat_attrs[n].attr.mode = 0444;
		vcc_stat_attrs[n].show = show_stat;
		vcc_stat_attrs[n].arg = i;
		vcc_stat_ptrs[n] = &vcc_stat_attrs[n].attr;
		n++;
		if (!vcc_stat_per_dev(i))
			continue;
		vcc_dstat_attrs[nd].attr.name = vcc_stat_names[i];
		vcc_dstat_attrs[nd].attr.mode = 0444;
		vcc_dstat_attrs[nd].show = show_dev_stat;
		vcc_dstat_attrs[nd].arg = i;
		vcc_dstat_ptrs[nd] = &vcc_dstat_attrs[nd].attr;
		nd++;
	}
	for (i = 0; i < VCC_NR_LAT_FILES; i++) {
		snprintf(vcc_lat_file_names[i], sizeof(vcc_lat_file_names[i]),
			 "%s_%s", vcc_lat_names[i / 4], what[i % 4]);
		vcc_lat_attrs[i].attr.name = vcc_lat_file_names[i];
		vcc_lat_attrs[i].attr.mode = 0444;
		vcc_lat_attrs[i].show = show_latency;
		vcc_lat_attrs[i].arg = i;
		vcc_lat_ptrs[i] = &vcc_lat_attrs[i].attr;
	}
}

int vcc_sysfs_add(struct vcc_dev *d)
{
	struct vcc_kobj *ko = kzalloc_obj(*ko, GFP_KERNEL);
	int err;

	if (!ko)
		return -ENOMEM;
	ko->d = d;
	vcd_release_hold();	/* done by vcc_kobj_release(), even on error */
	err = kobject_init_and_add(&ko->kobj, &vcc_ktype,
				   &disk_to_dev(d->disk)->kobj, "vcache");
	if (err) {
		kobject_put(&ko->kobj);	/* frees it */
		return err;
	}
	d->ko = ko;
	kobject_uevent(&ko->kobj, KOBJ_ADD);
	/* udev names /dev/vcache/<name> from vcache/name: tell it now */
	kobject_uevent(&disk_to_dev(d->disk)->kobj, KOBJ_CHANGE);
	return 0;
}

void vcc_sysfs_del(struct vcc_dev *d)
{
	if (!d->ko)
		return;
	kobject_del(&d->ko->kobj);	/* waits for readers and writers */
	kobject_put(&d->ko->kobj);
	d->ko = NULL;
}
