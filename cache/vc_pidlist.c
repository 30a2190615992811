// SPDX-License-Identifier: GPL-2.0
/*
 * vc_pidlist: allow and deny lists of processes (see include/vc_pidlist.h).
 */
#include "vc_pidlist.h"

static bool list_valid(enum vc_pid_list list)
{
	return (unsigned int)list < VC_PID_NR_LISTS;
}

static bool pid_valid(const struct vc_pidlist *pl, u64 pid)
{
	return pid >= 1 && pid <= pl->id_max;
}

static bool is_cg(int list)
{
	return list == VC_CG_ALLOW || list == VC_CG_DENY;
}

/* Index of the first id >= @pid in @l (l->nr when none). */
static unsigned int lower_bound(const struct vc_pidlist_ids *l, u64 pid)
{
	unsigned int lo = 0, hi = l->nr;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (l->ids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool has(const struct vc_pidlist_ids *l, u64 pid)
{
	unsigned int i;

	if (!l->nr || pid < l->ids[0] || pid > l->ids[l->nr - 1])
		return false;
	i = lower_bound(l, pid);
	return i < l->nr && l->ids[i] == pid;
}

static bool has_any(const struct vc_pidlist_ids *l, u64 pid, u64 tgid)
{
	return has(l, pid) || (tgid != pid && has(l, tgid));
}

/* @cg or an ancestor on cgroup list @l; bounded against a broken chain. */
static bool has_cg(const struct vc_pidlist *pl, const struct vc_pidlist_ids *l,
		   u64 cg)
{
	unsigned int depth;

	if (!l->nr)
		return false;
	for (depth = 0; cg && depth < 1024; depth++) {
		if (has(l, cg))
			return true;
		cg = pl->parent ? pl->parent(cg) : 0;
	}
	return false;
}

/* Called with the lock held for writing. */
static void update_trivial(struct vc_pidlist *pl)
{
	vc_atomic_set(&pl->trivial, pl->mode == VC_PID_MODE_CACHE_ALL &&
		      !pl->lists[VC_PID_DENY].nr && !pl->lists[VC_CG_DENY].nr);
}

/* Remove @pid from @l; caller holds the write lock.  True if it was there. */
static bool remove_id(struct vc_pidlist_ids *l, u64 pid)
{
	unsigned int i = lower_bound(l, pid);

	if (i >= l->nr || l->ids[i] != pid)
		return false;
	vc_memmove(&l->ids[i], &l->ids[i + 1],
		   (l->nr - i - 1) * sizeof(l->ids[0]));
	l->nr--;
	return true;
}

int vc_pidlist_init(struct vc_pidlist *pl, unsigned int capacity,
		    vc_pid_alive_fn alive, void *alive_ctx)
{
	int i;

	if (capacity < 1 || capacity > VC_PIDLIST_MAX)
		return -EINVAL;
	for (i = 0; i < VC_PID_NR_LISTS; i++) {
		pl->lists[i].nr = 0;
		pl->lists[i].ids = vc_zalloc(capacity * sizeof(u64),
					     VC_GFP_KERNEL);
		if (!pl->lists[i].ids) {
			while (i--) {
				vc_free(pl->lists[i].ids);
				pl->lists[i].ids = NULL;
			}
			return -ENOMEM;
		}
	}
	vc_rwlock_init(&pl->lock);
	pl->mode = VC_PID_MODE_CACHE_ALL;
	pl->capacity = capacity;
	pl->alive = alive;
	pl->alive_ctx = alive_ctx;
	pl->put = NULL;
	pl->parent = NULL;
	pl->id_max = VC_PID_MAX;
	pl->expiry_interval_ns = VC_PIDLIST_DEF_EXPIRY_NS;
	pl->last_expiry_ns = 0;
	pl->expired = 0;
	vc_atomic_set(&pl->trivial, 1);
	return 0;
}

/* Empty list @list; caller holds the write lock. */
static void drop_all(struct vc_pidlist *pl, int list)
{
	struct vc_pidlist_ids *l = &pl->lists[list];
	unsigned int i;

	if (pl->put)
		for (i = 0; i < l->nr; i++)
			pl->put(list, l->ids[i]);
	l->nr = 0;
}

void vc_pidlist_destroy(struct vc_pidlist *pl)
{
	int i;

	for (i = 0; i < VC_PID_NR_LISTS; i++) {
		if (!pl->lists[i].ids)
			continue;
		drop_all(pl, i);
		vc_free(pl->lists[i].ids);
		pl->lists[i].ids = NULL;
	}
	vc_rwlock_destroy(&pl->lock);
}

void vc_pidlist_set_keys(struct vc_pidlist *pl, vc_pid_put_fn put,
			 vc_cg_parent_fn parent)
{
	vc_write_lock(&pl->lock);
	pl->put = put;
	pl->parent = parent;
	pl->id_max = ~0ULL;
	vc_write_unlock(&pl->lock);
}

int vc_pidlist_add(struct vc_pidlist *pl, enum vc_pid_list list, u64 pid)
{
	struct vc_pidlist_ids *l;
	unsigned int i;
	int ret = 0;

	if (!list_valid(list) || !pid_valid(pl, pid))
		return -EINVAL;
	/* Checked outside the lock: the callback may sleep or be slow. */
	if (!is_cg(list) && pl->alive && !pl->alive(pl->alive_ctx, pid))
		return -ESRCH;
	l = &pl->lists[list];
	vc_write_lock(&pl->lock);
	i = lower_bound(l, pid);
	if (i < l->nr && l->ids[i] == pid) {
		ret = -EEXIST;
	} else if (l->nr >= pl->capacity) {
		ret = -ENOSPC;
	} else {
		vc_memmove(&l->ids[i + 1], &l->ids[i],
			   (l->nr - i) * sizeof(l->ids[0]));
		l->ids[i] = pid;
		l->nr++;
		update_trivial(pl);
	}
	vc_write_unlock(&pl->lock);
	return ret;
}

int vc_pidlist_del(struct vc_pidlist *pl, enum vc_pid_list list, u64 pid)
{
	int ret = -ENOENT;

	if (!list_valid(list) || !pid_valid(pl, pid))
		return -EINVAL;
	vc_write_lock(&pl->lock);
	if (remove_id(&pl->lists[list], pid)) {
		if (pl->put)
			pl->put(list, pid);
		ret = 0;
	}
	update_trivial(pl);
	vc_write_unlock(&pl->lock);
	return ret;
}

int vc_pidlist_clear(struct vc_pidlist *pl, enum vc_pid_list list)
{
	if (!list_valid(list))
		return -EINVAL;
	vc_write_lock(&pl->lock);
	drop_all(pl, list);
	update_trivial(pl);
	vc_write_unlock(&pl->lock);
	return 0;
}

int vc_pidlist_set_mode(struct vc_pidlist *pl, enum vc_pid_mode mode)
{
	if (mode != VC_PID_MODE_CACHE_ALL && mode != VC_PID_MODE_CACHE_NONE)
		return -EINVAL;
	vc_write_lock(&pl->lock);
	pl->mode = mode;
	update_trivial(pl);
	vc_write_unlock(&pl->lock);
	return 0;
}

enum vc_pid_mode vc_pidlist_mode(struct vc_pidlist *pl)
{
	enum vc_pid_mode m;

	vc_read_lock(&pl->lock);
	m = pl->mode;
	vc_read_unlock(&pl->lock);
	return m;
}

bool vc_pidlist_classify(struct vc_pidlist *pl, u64 pid, u64 tgid, u64 cg)
{
	bool cache;

	if (vc_atomic_read(&pl->trivial))
		return true;
	vc_read_lock(&pl->lock);
	if (has_any(&pl->lists[VC_PID_DENY], pid, tgid) ||
	    has_cg(pl, &pl->lists[VC_CG_DENY], cg))
		cache = false;
	else if (pl->mode == VC_PID_MODE_CACHE_NONE)
		cache = has_any(&pl->lists[VC_PID_ALLOW], pid, tgid) ||
			has_cg(pl, &pl->lists[VC_CG_ALLOW], cg);
	else
		cache = true;
	vc_read_unlock(&pl->lock);
	return cache;
}

bool vc_pidlist_should_cache(struct vc_pidlist *pl, u64 pid, u64 tgid)
{
	return vc_pidlist_classify(pl, pid, tgid, 0);
}

bool vc_pidlist_contains(struct vc_pidlist *pl, enum vc_pid_list list,
			 u64 pid, u64 tgid)
{
	bool r;

	if (!list_valid(list))
		return false;
	vc_read_lock(&pl->lock);
	r = is_cg(list) ? has_cg(pl, &pl->lists[list], pid) :
	    has_any(&pl->lists[list], pid, tgid);
	vc_read_unlock(&pl->lock);
	return r;
}

unsigned int vc_pidlist_count(struct vc_pidlist *pl, enum vc_pid_list list)
{
	unsigned int n;

	if (!list_valid(list))
		return 0;
	vc_read_lock(&pl->lock);
	n = pl->lists[list].nr;
	vc_read_unlock(&pl->lock);
	return n;
}

int vc_pidlist_get(struct vc_pidlist *pl, enum vc_pid_list list, u64 *out,
		   unsigned int max)
{
	const struct vc_pidlist_ids *l;
	unsigned int n;

	if (!list_valid(list))
		return -EINVAL;
	l = &pl->lists[list];
	vc_read_lock(&pl->lock);
	n = l->nr;
	if (out && max)
		vc_memcpy(out, l->ids, (n < max ? n : max) * sizeof(*out));
	vc_read_unlock(&pl->lock);
	return (int)n;
}

int vc_pidlist_visit(struct vc_pidlist *pl, enum vc_pid_list list,
		     void (*fn)(void *arg, u64 id), void *arg)
{
	const struct vc_pidlist_ids *l;
	unsigned int i, n;

	if (!list_valid(list))
		return -EINVAL;
	l = &pl->lists[list];
	vc_read_lock(&pl->lock);
	n = l->nr;
	for (i = 0; i < n; i++)
		fn(arg, l->ids[i]);
	vc_read_unlock(&pl->lock);
	return (int)n;
}

/*
 * Walk @list by value rather than by index, so that entries added or
 * removed concurrently never make the walk skip or repeat a live entry
 * other than the one that changed.
 */
static unsigned int expire_list(struct vc_pidlist *pl, enum vc_pid_list list)
{
	struct vc_pidlist_ids *l = &pl->lists[list];
	unsigned int removed = 0, i;
	u64 after = 0, pid;
	bool alive = true;

	for (;;) {
		vc_read_lock(&pl->lock);
		i = lower_bound(l, after + 1);
		pid = i < l->nr ? l->ids[i] : 0;
		/* a key may be put the moment the lock is dropped */
		if (pid && pl->put)
			alive = pl->alive(pl->alive_ctx, pid);
		vc_read_unlock(&pl->lock);
		if (!pid)
			break;
		after = pid;
		if (!pl->put)
			alive = pl->alive(pl->alive_ctx, pid);
		if (alive)
			continue;
		vc_write_lock(&pl->lock);
		if (remove_id(l, pid)) {
			if (pl->put)
				pl->put(list, pid);
			removed++;
			pl->expired++;
			update_trivial(pl);
		}
		vc_write_unlock(&pl->lock);
	}
	return removed;
}

unsigned int vc_pidlist_expire(struct vc_pidlist *pl)
{
	unsigned int n = 0;

	if (!pl->alive)
		return 0;
	n += expire_list(pl, VC_PID_ALLOW);
	n += expire_list(pl, VC_PID_DENY);
	return n;
}

unsigned int vc_pidlist_tick(struct vc_pidlist *pl, u64 now_ns)
{
	bool due;

	vc_write_lock(&pl->lock);
	due = now_ns - pl->last_expiry_ns >= pl->expiry_interval_ns ||
	      now_ns < pl->last_expiry_ns;
	if (due)
		pl->last_expiry_ns = now_ns;
	vc_write_unlock(&pl->lock);
	return due ? vc_pidlist_expire(pl) : 0;
}

void vc_pidlist_set_expiry_interval(struct vc_pidlist *pl, u64 interval_ns)
{
	vc_write_lock(&pl->lock);
	pl->expiry_interval_ns = interval_ns;
	vc_write_unlock(&pl->lock);
}

u64 vc_pidlist_expired(struct vc_pidlist *pl)
{
	u64 n;

	vc_read_lock(&pl->lock);
	n = pl->expired;
	vc_read_unlock(&pl->lock);
	return n;
}
