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
 * Entries of processes that exited are removed by vc_pidlist_expire()
 * (or by vc_pidlist_tick(), which runs it at most once per interval): the
 * owner supplies a "does this pid still exist" callback; the kernel side
 * uses find_get_pid(), userspace kill(pid, 0) or an injected function.
 *
 * Each list is bounded (capacity set at init, at most VC_PIDLIST_MAX);
 * adding to a full list fails with -ENOSPC.  Lists are sorted arrays
 * searched by bisection under a reader/writer lock: lookups, which happen
 * on every request, only take it shared, and skip it entirely while
 * both lists are empty and the mode is VC_PID_MODE_CACHE_ALL.
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
	VC_PID_NR_LISTS
};

/* Returns true while a process or thread with this id exists. */
typedef bool (*vc_pid_alive_fn)(void *ctx, s32 pid);

struct vc_pidlist_ids {
	unsigned int nr;
	s32 ids[VC_PIDLIST_MAX];	/* sorted ascending, unique */
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
	u64 expiry_interval_ns;
	u64 last_expiry_ns;
	u64 expired;			/* entries removed by expiry */
	struct vc_pidlist_ids lists[VC_PID_NR_LISTS];
};

/*
 * @capacity: entries per list, 1..VC_PIDLIST_MAX.  @alive may be NULL
 * (then nothing ever expires and adding never checks existence).
 * Returns 0 or -EINVAL.  Starts in VC_PID_MODE_CACHE_ALL, lists empty.
 */
int vc_pidlist_init(struct vc_pidlist *pl, unsigned int capacity,
		    vc_pid_alive_fn alive, void *alive_ctx);
void vc_pidlist_destroy(struct vc_pidlist *pl);

/*
 * Add @pid to @list.  Errors: -EINVAL (bad list or pid out of
 * 1..VC_PID_MAX), -EEXIST (already there), -ESRCH (no such process, per
 * the alive callback), -ENOSPC (list full).
 */
int vc_pidlist_add(struct vc_pidlist *pl, enum vc_pid_list list, s32 pid);
/* Errors: -EINVAL, -ENOENT (not on the list). */
int vc_pidlist_del(struct vc_pidlist *pl, enum vc_pid_list list, s32 pid);
/* Empty @list; returns -EINVAL for a bad list, else 0. */
int vc_pidlist_clear(struct vc_pidlist *pl, enum vc_pid_list list);

int vc_pidlist_set_mode(struct vc_pidlist *pl, enum vc_pid_mode mode);
enum vc_pid_mode vc_pidlist_mode(struct vc_pidlist *pl);

/* Should a request from (pid, tgid) be cached? */
bool vc_pidlist_should_cache(struct vc_pidlist *pl, s32 pid, s32 tgid);
/* Is @pid (or @tgid) on @list? */
bool vc_pidlist_contains(struct vc_pidlist *pl, enum vc_pid_list list,
			 s32 pid, s32 tgid);

/* Number of entries of @list (0 for a bad list). */
unsigned int vc_pidlist_count(struct vc_pidlist *pl, enum vc_pid_list list);
/*
 * Copy up to @max ids of @list, ascending, into @out; returns how many
 * the list holds (may exceed @max), or -EINVAL for a bad list.
 */
int vc_pidlist_get(struct vc_pidlist *pl, enum vc_pid_list list, s32 *out,
		   unsigned int max);

/*
 * Remove the entries of processes that no longer exist; returns how many
 * were removed.  The alive callback runs without the lock held.
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
