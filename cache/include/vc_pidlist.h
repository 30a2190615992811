/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vc_pidlist: which processes the vcache engine caches for.
 *
 * Two lists of process ids, an allow list and a deny list, and a mode:
 *  - VC_PID_MODE_CACHE_ALL: cache everything except requests from
 *    processes on the deny list;
 *  - VC_PID_MODE_CACHE_NONE: cache nothing except requests from processes
 *    on the allow list (and not on the deny list: deny always wins).
 *
 * A request is identified by (pid, tgid) of its submitter.  An entry X
 * matches when pid == X or tgid == X, so listing a process's pid (which is
 * its tgid) covers all its threads, and listing a thread id covers that
 * thread alone.
 *
 * What an id is belongs to the environment: userspace (tests, the
 * simulator) uses process numbers 1..VC_PID_MAX; the kernel uses the
 * addresses of struct pid, each entry holding a reference, so that an
 * entry names one process for its whole life and a new process that gets
 * a recycled number is never on a list (vc_pidlist_set_keys(): ids become
 * opaque keys, and an entry leaving a list is handed to a put callback).
 *
 * Two more lists, VC_CG_ALLOW and VC_CG_DENY, hold cgroups (keys of the
 * environment as well; the kernel: struct cgroup addresses, referenced).
 * A request matches a cgroup entry when its cgroup or one of that
 * cgroup's ancestors is the entry (the parent callback walks up).  The
 * kernel gives a request the cgroup its bio is charged to, which for
 * buffered writeback is the cgroup that dirtied the pages, not the
 * flusher thread's.  Deny (of either kind) always wins; in
 * VC_PID_MODE_CACHE_NONE an entry on either allow list admits.
 *
 * Entries of processes that exited are removed by vc_pidlist_expire()
 * (or by vc_pidlist_tick(), which runs it at most once per interval): the
 * owner supplies a "does this pid still exist" callback; the kernel side
 * tests whether the struct pid still has a task, userspace kill(pid, 0)
 * or an injected function.  Cgroup entries do not expire: a removed
 * cgroup is never charged again, its entry just stays until deleted.
 *
 * Each list is bounded (capacity set at init, at most VC_PIDLIST_MAX);
 * adding to a full list fails with -ENOSPC.  Lists are sorted arrays
 * searched by bisection under a reader/writer lock: lookups, which happen
 * on every request, only take it shared, and skip it entirely while
 * both deny lists are empty and the mode is VC_PID_MODE_CACHE_ALL.
 */
#ifndef VC_PIDLIST_H
#define VC_PIDLIST_H

#include "vc_env.h"

#define VC_PIDLIST_MAX		1024
#define VC_PIDLIST_DEF_CAP	128
#define VC_PID_MAX		4194304	/* PID_MAX_LIMIT on 64-bit Linux */
#define VC_PIDLIST_DEF_EXPIRY_NS (10ULL * 1000 * 1000 * 1000)

enum vc_pid_mode {
	VC_PID_MODE_CACHE_ALL = 0,	/* cache everything except deny */
	VC_PID_MODE_CACHE_NONE = 1,	/* cache nothing except allow */
};

enum vc_pid_list {
	VC_PID_ALLOW = 0,
	VC_PID_DENY = 1,
	VC_CG_ALLOW = 2,
	VC_CG_DENY = 3,
	VC_PID_NR_LISTS
};

/* Returns true while a process or thread with this id exists. */
typedef bool (*vc_pid_alive_fn)(void *ctx, u64 id);
/*
 * An entry left @list (deleted, cleared, expired, destroyed): drop what it
 * held.  Called with the list lock held: must not sleep or take locks that
 * a lookup may be under.
 */
typedef void (*vc_pid_put_fn)(int list, u64 id);
/* The parent of cgroup key @cg, 0 at the root.  Called under the lock. */
typedef u64 (*vc_cg_parent_fn)(u64 cg);

struct vc_pidlist_ids {
	unsigned int nr;
	u64 *ids;		/* capacity entries, sorted ascending, unique */
};

struct vc_pidlist {
	/*
	 * lock protects mode, lists[], expired, last_expiry_ns.
	 * Leaf lock: nothing else is taken while it is held, and the alive
	 * callback is never called under it.
	 */
	vc_rwlock_t lock;
	/* Non-zero when lookups can answer "cache" without the lock. */
	vc_atomic_t trivial;
	enum vc_pid_mode mode;
	unsigned int capacity;		/* per list */
	vc_pid_alive_fn alive;
	void *alive_ctx;
	vc_pid_put_fn put;		/* NULL: ids hold nothing */
	vc_cg_parent_fn parent;		/* NULL: cgroups have no parent */
	u64 id_max;			/* VC_PID_MAX, or keys: U64 max */
	u64 expiry_interval_ns;
	u64 last_expiry_ns;
	u64 expired;			/* entries removed by expiry */
	struct vc_pidlist_ids lists[VC_PID_NR_LISTS];
};

/*
 * @capacity: entries per list, 1..VC_PIDLIST_MAX.  @alive may be NULL
 * (then nothing ever expires and adding never checks existence).
 * Returns 0, -EINVAL or -ENOMEM.  Starts in VC_PID_MODE_CACHE_ALL, lists
 * empty, ids are process numbers 1..VC_PID_MAX.
 */
int vc_pidlist_init(struct vc_pidlist *pl, unsigned int capacity,
		    vc_pid_alive_fn alive, void *alive_ctx);
/* Empties every list (through the put callback) and frees the arrays. */
void vc_pidlist_destroy(struct vc_pidlist *pl);
/*
 * Ids are keys of the environment from now on (any non-zero u64; lists
 * must be empty): @put drops what an entry holds, @parent walks cgroups.
 */
void vc_pidlist_set_keys(struct vc_pidlist *pl, vc_pid_put_fn put,
			 vc_cg_parent_fn parent);

/*
 * Add @pid to @list.  Errors: -EINVAL (bad list or pid out of
 * 1..VC_PID_MAX), -EEXIST (already there), -ESRCH (no such process, per
 * the alive callback; not asked for cgroup lists), -ENOSPC (list full).
 * On success the list owns what the key holds (put when it leaves); on
 * an error the caller keeps it.
 */
int vc_pidlist_add(struct vc_pidlist *pl, enum vc_pid_list list, u64 pid);
/* Errors: -EINVAL, -ENOENT (not on the list). */
int vc_pidlist_del(struct vc_pidlist *pl, enum vc_pid_list list, u64 pid);
/* Empty @list; returns -EINVAL for a bad list, else 0. */
int vc_pidlist_clear(struct vc_pidlist *pl, enum vc_pid_list list);

int vc_pidlist_set_mode(struct vc_pidlist *pl, enum vc_pid_mode mode);
enum vc_pid_mode vc_pidlist_mode(struct vc_pidlist *pl);

/* Should a request from (pid, tgid), charged to cgroup @cg, be cached? */
bool vc_pidlist_classify(struct vc_pidlist *pl, u64 pid, u64 tgid, u64 cg);
/* The same for a request with no cgroup. */
bool vc_pidlist_should_cache(struct vc_pidlist *pl, u64 pid, u64 tgid);
/* Is @pid (or @tgid) on @list? */
bool vc_pidlist_contains(struct vc_pidlist *pl, enum vc_pid_list list,
			 u64 pid, u64 tgid);

/* Number of entries of @list (0 for a bad list). */
unsigned int vc_pidlist_count(struct vc_pidlist *pl, enum vc_pid_list list);
/*
 * Copy up to @max ids of @list, ascending, into @out; returns how many
 * the list holds (may exceed @max), or -EINVAL for a bad list.
 */
int vc_pidlist_get(struct vc_pidlist *pl, enum vc_pid_list list, u64 *out,
		   unsigned int max);

/*
 * Call @fn for each id of @list, ascending, under the read lock (@fn must
 * not sleep; with keys it may take its own reference); returns how many,
 * or -EINVAL for a bad list.
 */
int vc_pidlist_visit(struct vc_pidlist *pl, enum vc_pid_list list,
		     void (*fn)(void *arg, u64 id), void *arg);

/*
 * Remove the entries of processes that no longer exist; returns how many
 * were removed.  The alive callback runs without the lock held, except
 * with keys (vc_pidlist_set_keys), where it runs under the read lock and
 * must not sleep: a key may be put the moment the lock is dropped.
 */
unsigned int vc_pidlist_expire(struct vc_pidlist *pl);
/*
 * Run vc_pidlist_expire() if at least the expiry interval has passed since
 * the last run (by the caller's clock @now_ns); returns entries removed.
 */
unsigned int vc_pidlist_tick(struct vc_pidlist *pl, u64 now_ns);
void vc_pidlist_set_expiry_interval(struct vc_pidlist *pl, u64 interval_ns);
/* Total entries removed by expiry since init. */
u64 vc_pidlist_expired(struct vc_pidlist *pl);

#endif /* VC_PIDLIST_H */
