// SPDX-License-Identifier: GPL-2.0
/*
 * simdev: simulated block devices with a volatile write cache, power
 * domains, write-index power cuts and error injection (see simdev.h).
 *
 * Locking: one mutex per power domain protects the domain and every
 * device in it.  end_io callbacks are always called without it, so the
 * engine may submit again from a completion.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdev.h"

#define SECT	512u
#define MAX_RULES 32
#define HIST_MAX 16		/* unflushed versions kept per sector */

/* An unflushed version of a sector: any of them may survive a cut. */
struct ver {
	u64 seq;		/* write completion stamp */
	u8 data[SECT];
};

struct hist {
	u32 n, cap;
	struct ver *v;		/* oldest first */
};

struct pending {
	struct simdev *d;
	struct vc_dev_io *io;
	int err;
	u64 flush_snap;		/* FLUSH/PREFLUSH: writes completed by then */
};

struct simdev_power {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* pending queue / inflight changes */
	enum simdev_completion completion;
	u64 rng;
	bool cut;
	u64 cut_at;			/* 0 = disarmed */
	bool cut_meta_only;
	u64 cut_base;			/* counter value when armed */
	u64 writes, meta_writes;
	u64 wseq;			/* last write completion stamp */
	u64 cut_at_completion;		/* 0 = disarmed */
	u64 completions_base, completions;
	struct simdev *devs;
	struct pending *q;
	size_t nq, capq;
	unsigned int inflight;
	bool stop;
	bool has_thread;
	pthread_t thread;
};

struct err_rule {
	bool used;
	u32 mask;
	u64 start, end;
	int err;
	s64 count;
};

struct simdev {
	struct vc_dev dev;
	struct simdev_power *p;
	bool own_power;
	struct simdev *next;
	bool volatile_cache;
	bool ignore_flush;
	enum simdev_cut_mode cut_mode;
	u64 nr_sectors;
	u8 *cur;			/* what a reader sees */
	u8 *dur;			/* durable; == cur without a cache */
	u64 *wseq;			/* per sector: newest pending stamp, 0 */
	struct hist *hist;		/* per sector: unflushed versions */
	u64 *dirty;			/* sectors with wseq != 0 (maybe stale) */
	size_t ndirty, capdirty;
	u8 *listed;			/* sector is in dirty[] */
	u64 seed;
	u64 rng;
	struct err_rule rules[MAX_RULES];
	u64 werr_at, werr_base, werr_writes;
	bool werr_meta;
	int werr_err;
	u64 ferr_at, ferr_base, ferr_flushes;	/* K-th FLUSH fails */
	int ferr_err;
	u32 rand_mask, rand_ppm;
	int rand_err;
	struct simdev_stats st;
	s64 trace;			/* sector to trace, -1 none */
};

static const char *const op_names[] = { "READ", "WRITE", "FLUSH", "DISCARD",
					"WRITE_ZEROES" };

static void trace_io(struct simdev *d, const struct vc_dev_io *io,
		     const char *what, int err)
{
	u64 end = io->sector + io->len / SECT;

	if (d->trace == -1 || io->op > VC_DEV_WRITE_ZEROES)
		return;
	if (io->op != VC_DEV_FLUSH && d->trace >= 0 &&
	    ((u64)d->trace < io->sector || (u64)d->trace >= end))
		return;
	fprintf(stderr, "simdev %s: %s %s sector %llu len %u flags %#x err %d",
		d->dev.name, what, op_names[io->op],
		(unsigned long long)io->sector, io->len, io->flags, err);
	/* first words of the data, for test patterns that stamp sectors */
	if (io->op == VC_DEV_WRITE && !err && io->len >= 32 && io->buf) {
		u64 w[4];

		vc_buf_to_mem(w, io->buf, io->buf_off, sizeof(w));
		fprintf(stderr, " data %llx %llx %llx %llx",
			(unsigned long long)w[0], (unsigned long long)w[1],
			(unsigned long long)w[2], (unsigned long long)w[3]);
	}
	fputc('\n', stderr);
}

static u64 splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u64 mix(u64 a, u64 b)
{
	u64 x = a ^ (b * 0xd6e8feb86659fd93ULL);

	return splitmix64(&x);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		fprintf(stderr, "simdev: out of memory (%zu x %zu)\n", n, sz);
		abort();
	}
	return p;
}

/* ------------------------------------------------------------------ */

static void mark_dirty(struct simdev *d, u64 s, u64 seq)
{
	struct hist *h = &d->hist[s];

	/*
	 * The volatile cache may write out any of the versions it was given
	 * since the last FLUSH, in any order: keep them all (the newest
	 * HIST_MAX), so a cut can leave an older one.
	 */
	if (h->n == HIST_MAX) {
		memmove(h->v, h->v + 1, (h->n - 1) * sizeof(*h->v));
		h->n--;
	}
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 2;
		h->v = realloc(h->v, h->cap * sizeof(*h->v));
		if (!h->v)
			abort();
	}
	h->v[h->n].seq = seq;
	memcpy(h->v[h->n].data, d->cur + s * SECT, SECT);
	h->n++;
	d->wseq[s] = seq;
	if (d->listed[s])
		return;
	if (d->ndirty == d->capdirty) {
		d->capdirty = d->capdirty ? d->capdirty * 2 : 1024;
		d->dirty = realloc(d->dirty, d->capdirty * sizeof(u64));
		if (!d->dirty)
			abort();
	}
	d->dirty[d->ndirty++] = s;
	d->listed[s] = 1;
}

static void forget_versions(struct simdev *d, u64 s)
{
	d->hist[s].n = 0;
	d->wseq[s] = 0;
}

/*
 * A FLUSH that saw the writes stamped <= @snap complete: each sector's
 * newest such version is durable; newer ones stay volatile (a real device
 * may write them out too: the cut modes decide).
 */
static void persist(struct simdev *d, u64 snap)
{
	size_t i, j = 0;

	if (!d->volatile_cache || d->ignore_flush)
		return;
	for (i = 0; i < d->ndirty; i++) {
		u64 s = d->dirty[i];
		struct hist *h = &d->hist[s];
		u32 k = h->n;

		while (k && h->v[k - 1].seq > snap)
			k--;
		if (k) {
			memcpy(d->dur + s * SECT, h->v[k - 1].data, SECT);
			memmove(h->v, h->v + k, (h->n - k) * sizeof(*h->v));
			h->n -= k;
		}
		if (!h->n)
			d->wseq[s] = 0;
		if (d->wseq[s])
			d->dirty[j++] = s;
		else
			d->listed[s] = 0;
	}
	d->ndirty = j;
}

/*
 * The power went: each sector keeps its durable data or, by the cut
 * mode, one of its unflushed versions: none (drop), the newest (keep),
 * the newest whose write made it out (random writes, all or nothing per
 * write), or any of them, older ones included (random sectors: torn).
 */
static void cut_dev(struct simdev *d)
{
	size_t i;

	d->st.cuts++;
	if (!d->volatile_cache)
		return;
	for (i = 0; i < d->ndirty; i++) {
		u64 s = d->dirty[i];
		struct hist *h = &d->hist[s];
		const u8 *keep = NULL;
		u32 k;

		if (!h->n)
			goto revert;
		switch (d->cut_mode) {
		case SIMDEV_CUT_KEEP_ALL:
			keep = h->v[h->n - 1].data;
			break;
		case SIMDEV_CUT_RANDOM_WRITES:
			for (k = h->n; k-- > 0;)
				if (mix(d->seed, h->v[k].seq) & 1) {
					keep = h->v[k].data;
					break;
				}
			break;
		case SIMDEV_CUT_RANDOM_SECTORS:
			k = (u32)(mix(d->seed ^ s, h->v[h->n - 1].seq) %
				  (h->n + 1));
			if (k < h->n)
				keep = h->v[k].data;
			break;
		default:
			break;
		}
		if (keep)
			memcpy(d->dur + s * SECT, keep, SECT);
revert:
		memcpy(d->cur + s * SECT, d->dur + s * SECT, SECT);
		forget_versions(d, s);
		d->listed[s] = 0;
	}
	d->ndirty = 0;
}

static bool is_write_op(const struct vc_dev_io *io)
{
	return io->op == VC_DEV_WRITE || io->op == VC_DEV_DISCARD ||
	       io->op == VC_DEV_WRITE_ZEROES;
}

static void apply(struct simdev *d, struct vc_dev_io *io, u64 flush_snap);

/*
 * Writes in flight when the power goes may have reached the device
 * (its volatile cache, or the media for FUA) or not, in any order: by
 * the cut mode of their device, none (drop), all (keep) or a seeded
 * random subset in a random order.  p->lock held.
 */
static void land_inflight(struct simdev_power *p)
{
	size_t i, n = p->nq, *ord;

	if (!n)
		return;
	ord = xcalloc(n, sizeof(*ord));
	for (i = 0; i < n; i++)
		ord[i] = i;
	for (i = n; i > 1; i--) {
		size_t j = splitmix64(&p->rng) % i, t = ord[i - 1];

		ord[i - 1] = ord[j];
		ord[j] = t;
	}
	for (i = 0; i < n; i++) {
		struct pending *e = &p->q[ord[i]];
		bool land;

		if (e->err || !is_write_op(e->io))
			continue;
		switch (e->d->cut_mode) {
		case SIMDEV_CUT_KEEP_ALL:
			land = true;
			break;
		case SIMDEV_CUT_RANDOM_WRITES:
		case SIMDEV_CUT_RANDOM_SECTORS:
			land = splitmix64(&p->rng) & 1;
			break;
		default:
			land = false;
		}
		if (land) {
			apply(e->d, e->io, e->flush_snap);
			e->d->st.landed_at_cut++;
		}
	}
	free(ord);
}

/* Called with p->lock held. */
static void do_cut(struct simdev_power *p)
{
	struct simdev *d;
	size_t i;

	if (p->cut)
		return;
	p->cut = true;
	p->cut_at = 0;
	p->cut_at_completion = 0;
	land_inflight(p);
	for (d = p->devs; d; d = d->next)
		cut_dev(d);
	/* I/O in flight never reaches the media. */
	for (i = 0; i < p->nq; i++)
		if (!p->q[i].err)
			p->q[i].err = -EIO;
}

static bool range_hit(struct simdev *d, const struct vc_dev_io *io,
		      struct err_rule *r)
{
	u64 end;

	if (!(r->mask & (1u << io->op)))
		return false;
	if (io->op == VC_DEV_FLUSH)
		return true;
	end = io->sector + io->len / SECT;
	(void)d;
	return io->sector < r->end && end > r->start;
}

/* Decide the fate of @io at submission; p->lock held. */
static int submit_checks(struct simdev *d, struct vc_dev_io *io)
{
	struct simdev_power *p = d->p;
	bool is_write = io->op == VC_DEV_WRITE;
	bool meta = io->flags & VC_DEV_META;
	int i;

	if (p->cut)
		return -EIO;
	if (io->op > VC_DEV_WRITE_ZEROES)
		return -EOPNOTSUPP;
	if (io->op != VC_DEV_FLUSH &&
	    (io->len % SECT || io->sector > d->nr_sectors ||
	     io->len / SECT > d->nr_sectors - io->sector))
		return -EIO;	/* beyond the end, as the block layer says */
	if (is_write) {
		p->writes++;
		if (meta)
			p->meta_writes++;
		if (p->cut_at && (!p->cut_meta_only || meta)) {
			u64 n = p->cut_meta_only ? p->meta_writes : p->writes;

			if (n - p->cut_base == p->cut_at) {
				/*
				 * Torn mode: the interrupted write reached
				 * the media's volatile buffer; the cut keeps
				 * a random subset of its sectors.
				 */
				if (d->cut_mode == SIMDEV_CUT_RANDOM_SECTORS &&
				    d->volatile_cache &&
				    io->len / SECT <= d->nr_sectors &&
				    io->sector <= d->nr_sectors - io->len / SECT) {
					struct vc_dev_io torn = *io;

					/*
					 * Its PREFLUSH completed before the
					 * data went out (a cut during the
					 * preflush is the non-torn case).
					 */
					if (io->flags & VC_DEV_PREFLUSH)
						persist(d, p->wseq);
					torn.flags = 0;
					apply(d, &torn, 0);
				}
				do_cut(p);
				return -EIO;
			}
		}
		if (d->werr_at && (!d->werr_meta || meta)) {
			d->werr_writes++;
			if (d->werr_writes - d->werr_base == d->werr_at) {
				d->werr_at = 0;
				return d->werr_err;
			}
		}
	}
	if (io->op == VC_DEV_FLUSH && d->ferr_at) {
		d->ferr_flushes++;
		if (d->ferr_flushes - d->ferr_base == d->ferr_at) {
			d->ferr_at = 0;
			return d->ferr_err;
		}
	}
	for (i = 0; i < MAX_RULES; i++) {
		struct err_rule *r = &d->rules[i];

		if (r->used && r->count && range_hit(d, io, r)) {
			if (r->count > 0 && !--r->count)
				r->used = false;
			return r->err;
		}
	}
	if (d->rand_ppm && (d->rand_mask & (1u << io->op)) &&
	    splitmix64(&d->rng) % 1000000 < d->rand_ppm)
		return d->rand_err;
	return 0;
}

static void account(struct simdev *d, struct vc_dev_io *io)
{
	switch (io->op) {
	case VC_DEV_READ:
		d->st.reads++;
		d->st.read_bytes += io->len;
		break;
	case VC_DEV_WRITE:
		d->st.writes++;
		d->st.write_bytes += io->len;
		if (io->flags & VC_DEV_META)
			d->st.meta_writes++;
		if (io->flags & VC_DEV_FUA)
			d->st.fua++;
		if (io->flags & VC_DEV_PREFLUSH)
			d->st.preflush++;
		if (d->dev.physical_block_size > SECT &&
		    (((io->sector * SECT) | io->len) &
		     (d->dev.physical_block_size - 1))) {
			d->st.rmw_writes++;
			if (io->flags & VC_DEV_META)
				d->st.rmw_meta_writes++;
		}
		break;
	case VC_DEV_FLUSH:
		d->st.flushes++;
		break;
	case VC_DEV_DISCARD:
		d->st.discards++;
		break;
	case VC_DEV_WRITE_ZEROES:
		d->st.writes++;
		d->st.write_zeroes++;
		if (io->flags & VC_DEV_FUA)
			d->st.fua++;
		break;
	}
}

/*
 * Apply a successful I/O to the images; p->lock held.  Reads copy into
 * the buffer here too (the lock keeps the image stable meanwhile).
 */
static void apply(struct simdev *d, struct vc_dev_io *io, u64 flush_snap)
{
	struct simdev_power *p = d->p;
	u64 s, n = io->len / SECT, seq;
	bool fua = (io->flags & VC_DEV_FUA) && !d->ignore_flush;

	if (io->flags & VC_DEV_PREFLUSH)
		persist(d, flush_snap);
	switch (io->op) {
	case VC_DEV_READ:
		vc_buf_from_mem(io->buf, io->buf_off, d->cur + io->sector * SECT,
				io->len);
		break;
	case VC_DEV_WRITE:
	case VC_DEV_DISCARD:
	case VC_DEV_WRITE_ZEROES:
		seq = ++p->wseq;
		if (io->op == VC_DEV_WRITE)
			vc_buf_to_mem(d->cur + io->sector * SECT, io->buf,
				      io->buf_off, io->len);
		else
			memset(d->cur + io->sector * SECT, 0, io->len);
		if (!d->volatile_cache)
			break;
		for (s = io->sector; s < io->sector + n; s++) {
			if (fua) {
				memcpy(d->dur + s * SECT, d->cur + s * SECT,
				       SECT);
				forget_versions(d, s);
			} else {
				mark_dirty(d, s, seq);
			}
		}
		break;
	case VC_DEV_FLUSH:
		persist(d, flush_snap);
		break;
	}
}

/*
 * Two writes to overlapping sectors in flight at once land in any order:
 * an engine must never do that to its metadata (an older snapshot could
 * land last).  Count it; p->lock held.
 */
static void count_overlaps(struct simdev_power *p, struct simdev *d,
			   const struct vc_dev_io *io)
{
	u64 end = io->sector + io->len / SECT;
	size_t i;

	for (i = 0; i < p->nq; i++) {
		const struct vc_dev_io *o = p->q[i].io;

		if (p->q[i].d != d || !is_write_op(o) || p->q[i].err ||
		    o->sector >= end || o->sector + o->len / SECT <= io->sector)
			continue;
		d->st.overlapping_writes++;
		if ((o->flags | io->flags) & VC_DEV_META)
			d->st.overlapping_meta_writes++;
	}
}

/*
 * An I/O took effect: if the cut is armed for this completion, the power
 * goes now, before its submitter hears of it (it gets -EIO).  p->lock
 * held; returns the error to report.
 */
static int completion_cut(struct simdev_power *p, int err)
{
	if (err)
		return err;
	p->completions++;
	if (!p->cut_at_completion ||
	    p->completions - p->completions_base != p->cut_at_completion)
		return 0;
	do_cut(p);
	return -EIO;
}

static void submit(struct vc_dev *dev, struct vc_dev_io *io)
{
	struct simdev *d = dev->priv;
	struct simdev_power *p = d->p;
	int err;

	pthread_mutex_lock(&p->lock);
	err = submit_checks(d, io);
	trace_io(d, io, "submit", err);
	if (!err)
		account(d, io);
	else
		d->st.errors++;
	p->inflight++;
	if (p->completion == SIMDEV_COMPLETE_INLINE) {
		if (!err)
			apply(d, io, p->wseq);
		err = completion_cut(p, err);
		p->inflight--;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		io->end_io(io, err);
		return;
	}
	if (!err && is_write_op(io))
		count_overlaps(p, d, io);
	if (p->nq == p->capq) {
		p->capq = p->capq ? p->capq * 2 : 256;
		p->q = realloc(p->q, p->capq * sizeof(*p->q));
		if (!p->q)
			abort();
	}
	p->q[p->nq++] = (struct pending){ d, io, err, p->wseq };
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static const struct vc_dev_ops simdev_ops = { .submit = submit };

/* Complete queued I/O number @i; p->lock held on entry and exit. */
static void complete_at(struct simdev_power *p, size_t i)
{
	struct pending e = p->q[i];

	/* keep submission order of the rest (directed tests rely on it) */
	memmove(&p->q[i], &p->q[i + 1], (p->nq - i - 1) * sizeof(*p->q));
	p->nq--;
	if (p->cut && !e.err)
		e.err = -EIO;
	if (!e.err)
		apply(e.d, e.io, e.flush_snap);
	else if (p->cut)
		e.d->st.errors++;
	e.err = completion_cut(p, e.err);
	trace_io(e.d, e.io, "complete", e.err);
	pthread_mutex_unlock(&p->lock);
	e.io->end_io(e.io, e.err);
	pthread_mutex_lock(&p->lock);
	p->inflight--;
	pthread_cond_broadcast(&p->cond);
}

/* Complete one queued I/O chosen at random. */
static void complete_one(struct simdev_power *p)
{
	complete_at(p, splitmix64(&p->rng) % p->nq);
}

static bool matches(const struct pending *e, struct simdev *d, int op)
{
	return (!d || e->d == d) && (op < 0 || e->io->op == op);
}

unsigned int simdev_complete_match(struct simdev_power *p, struct simdev *d,
				   int op, bool newest)
{
	size_t i, n;
	unsigned int done = 0;

	pthread_mutex_lock(&p->lock);
	n = p->nq;
	for (i = 0; i < n; i++) {
		size_t j = newest ? n - 1 - i : i;

		if (matches(&p->q[j], d, op)) {
			complete_at(p, j);
			done = 1;
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return done;
}

unsigned int simdev_pending(struct simdev_power *p, struct simdev *d, int op)
{
	unsigned int n = 0;
	size_t i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nq; i++)
		if (matches(&p->q[i], d, op))
			n++;
	pthread_mutex_unlock(&p->lock);
	return n;
}

static void *completion_thread(void *arg)
{
	struct simdev_power *p = arg;
	unsigned int n = 0;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->nq && !p->stop)
			pthread_cond_wait(&p->cond, &p->lock);
		if (!p->nq && p->stop)
			break;
		complete_one(p);
		/* let submitters race with completions now and then */
		if ((++n & 7) == 0) {
			pthread_mutex_unlock(&p->lock);
			sched_yield();
			pthread_mutex_lock(&p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct simdev_power *simdev_power_new(enum simdev_completion completion,
				      u64 seed)
{
	struct simdev_power *p = xcalloc(1, sizeof(*p));

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->completion = completion;
	p->rng = seed;
	if (completion == SIMDEV_COMPLETE_THREAD) {
		if (pthread_create(&p->thread, NULL, completion_thread, p)) {
			fprintf(stderr, "simdev: cannot start thread\n");
			abort();
		}
		p->has_thread = true;
	}
	return p;
}

void simdev_power_free(struct simdev_power *p)
{
	if (!p)
		return;
	simdev_drain(p);
	if (p->has_thread) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	if (p->devs)
		fprintf(stderr, "simdev: power domain freed with devices\n");
	free(p->q);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

void simdev_power_cut(struct simdev_power *p)
{
	pthread_mutex_lock(&p->lock);
	do_cut(p);
	pthread_mutex_unlock(&p->lock);
}

void simdev_power_restore(struct simdev_power *p)
{
	pthread_mutex_lock(&p->lock);
	p->cut = false;
	pthread_mutex_unlock(&p->lock);
}

bool simdev_power_is_cut(struct simdev_power *p)
{
	bool r;

	pthread_mutex_lock(&p->lock);
	r = p->cut;
	pthread_mutex_unlock(&p->lock);
	return r;
}

void simdev_power_cut_at(struct simdev_power *p, u64 k, bool meta_only)
{
	pthread_mutex_lock(&p->lock);
	p->cut_at = k;
	p->cut_meta_only = meta_only;
	p->cut_base = meta_only ? p->meta_writes : p->writes;
	pthread_mutex_unlock(&p->lock);
}

void simdev_power_cut_at_completion(struct simdev_power *p, u64 k)
{
	pthread_mutex_lock(&p->lock);
	p->cut_at_completion = k;
	p->completions_base = p->completions;
	pthread_mutex_unlock(&p->lock);
}

u64 simdev_power_completions(struct simdev_power *p)
{
	u64 n;

	pthread_mutex_lock(&p->lock);
	n = p->completions;
	pthread_mutex_unlock(&p->lock);
	return n;
}

u64 simdev_power_writes(struct simdev_power *p, bool meta_only)
{
	u64 r;

	pthread_mutex_lock(&p->lock);
	r = meta_only ? p->meta_writes : p->writes;
	pthread_mutex_unlock(&p->lock);
	return r;
}

unsigned int simdev_power_inflight(struct simdev_power *p)
{
	unsigned int r;

	pthread_mutex_lock(&p->lock);
	r = p->inflight;
	pthread_mutex_unlock(&p->lock);
	return r;
}

unsigned int simdev_complete(struct simdev_power *p, unsigned int max)
{
	unsigned int n = 0;

	pthread_mutex_lock(&p->lock);
	while (p->nq && (!max || n < max)) {
		complete_one(p);
		n++;
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

void simdev_drain(struct simdev_power *p)
{
	pthread_mutex_lock(&p->lock);
	while (p->inflight) {
		if (p->has_thread) {
			pthread_cond_wait(&p->cond, &p->lock);
		} else if (p->nq) {
			complete_one(p);
		} else {
			/* inline completion running in another thread */
			pthread_cond_wait(&p->cond, &p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
}

struct simdev *simdev_new(const struct simdev_config *cfg)
{
	struct simdev *d;
	size_t bytes;

	if (!cfg->nr_sectors || cfg->nr_sectors > (1ULL << 32))
		return NULL;
	d = xcalloc(1, sizeof(*d));
	d->nr_sectors = cfg->nr_sectors;
	bytes = (size_t)cfg->nr_sectors * SECT;
	d->cur = xcalloc(1, bytes);
	d->volatile_cache = cfg->volatile_cache;
	if (d->volatile_cache) {
		d->dur = xcalloc(1, bytes);
		d->wseq = xcalloc(cfg->nr_sectors, sizeof(u64));
		d->hist = xcalloc(cfg->nr_sectors, sizeof(*d->hist));
		d->listed = xcalloc(cfg->nr_sectors, 1);
	} else {
		d->dur = d->cur;
	}
	d->cut_mode = cfg->cut_mode;
	d->ignore_flush = cfg->ignore_flush;
	d->seed = cfg->seed;
	d->trace = -1;
	d->rng = cfg->seed ^ 0x5deece66dULL;
	d->dev.ops = &simdev_ops;
	d->dev.priv = d;
	d->dev.nr_sectors = cfg->nr_sectors;
	d->dev.physical_block_size = cfg->physical_block_size;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s",
		 cfg->name ? cfg->name : "simdev");
	if (cfg->power) {
		d->p = cfg->power;
	} else {
		d->p = simdev_power_new(SIMDEV_COMPLETE_INLINE, cfg->seed);
		d->own_power = true;
	}
	pthread_mutex_lock(&d->p->lock);
	d->next = d->p->devs;
	d->p->devs = d;
	pthread_mutex_unlock(&d->p->lock);
	return d;
}

void simdev_free(struct simdev *d)
{
	struct simdev **pp;

	if (!d)
		return;
	simdev_drain(d->p);
	pthread_mutex_lock(&d->p->lock);
	for (pp = &d->p->devs; *pp; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	pthread_mutex_unlock(&d->p->lock);
	if (d->own_power)
		simdev_power_free(d->p);
	if (d->dur != d->cur)
		free(d->dur);
	free(d->cur);
	if (d->hist) {
		u64 i;

		for (i = 0; i < d->nr_sectors; i++)
			free(d->hist[i].v);
	}
	free(d->hist);
	free(d->wseq);
	free(d->listed);
	free(d->dirty);
	free(d);
}

struct vc_dev *simdev_dev(struct simdev *d)
{
	return &d->dev;
}

struct simdev *simdev_of(struct vc_dev *dev)
{
	return dev->ops == &simdev_ops ? dev->priv : NULL;
}

struct simdev_power *simdev_power_of(struct simdev *d)
{
	return d->p;
}

void simdev_trace(struct simdev *d, s64 sector)
{
	pthread_mutex_lock(&d->p->lock);
	d->trace = sector;
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_set_cut_mode(struct simdev *d, enum simdev_cut_mode mode)
{
	pthread_mutex_lock(&d->p->lock);
	d->cut_mode = mode;
	pthread_mutex_unlock(&d->p->lock);
}

static bool in_range(struct simdev *d, u64 sector, u32 len)
{
	return len % SECT == 0 && sector <= d->nr_sectors &&
	       len / SECT <= d->nr_sectors - sector;
}

void simdev_peek(struct simdev *d, u64 sector, void *dst, u32 len)
{
	if (!in_range(d, sector, len))
		abort();
	pthread_mutex_lock(&d->p->lock);
	memcpy(dst, d->cur + sector * SECT, len);
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_peek_durable(struct simdev *d, u64 sector, void *dst, u32 len)
{
	if (!in_range(d, sector, len))
		abort();
	pthread_mutex_lock(&d->p->lock);
	memcpy(dst, d->dur + sector * SECT, len);
	pthread_mutex_unlock(&d->p->lock);
}

bool simdev_pending_zeroes(struct simdev *d, u64 sector)
{
	static const u8 zero[SECT];
	struct hist *h;
	bool r = false;
	u32 k;

	if (!in_range(d, sector, SECT))
		abort();
	pthread_mutex_lock(&d->p->lock);
	h = &d->hist[sector];
	for (k = 0; k < h->n && !r; k++)
		r = !memcmp(h->v[k].data, zero, SECT);
	pthread_mutex_unlock(&d->p->lock);
	return r;
}

void simdev_poke(struct simdev *d, u64 sector, const void *src, u32 len)
{
	u64 s;

	if (!in_range(d, sector, len))
		abort();
	pthread_mutex_lock(&d->p->lock);
	memcpy(d->cur + sector * SECT, src, len);
	if (d->volatile_cache) {
		memcpy(d->dur + sector * SECT, src, len);
		for (s = sector; s < sector + len / SECT; s++)
			forget_versions(d, s);
	}
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_copy_image(struct simdev *dst, struct simdev *src)
{
	size_t bytes = (size_t)src->nr_sectors * SECT;

	if (dst->nr_sectors != src->nr_sectors)
		abort();
	pthread_mutex_lock(&src->p->lock);
	if (dst->p != src->p)
		pthread_mutex_lock(&dst->p->lock);
	memcpy(dst->cur, src->dur, bytes);
	if (dst->volatile_cache) {
		memcpy(dst->dur, src->dur, bytes);
		u64 s;

		for (s = 0; s < dst->nr_sectors; s++)
			forget_versions(dst, s);
		memset(dst->listed, 0, dst->nr_sectors);
		dst->ndirty = 0;
	}
	if (dst->p != src->p)
		pthread_mutex_unlock(&dst->p->lock);
	pthread_mutex_unlock(&src->p->lock);
}

u64 simdev_volatile_sectors(struct simdev *d)
{
	u64 n = 0;
	size_t i;

	pthread_mutex_lock(&d->p->lock);
	for (i = 0; i < d->ndirty; i++)
		if (d->wseq[d->dirty[i]])
			n++;
	pthread_mutex_unlock(&d->p->lock);
	return n;
}

int simdev_error_range(struct simdev *d, u32 op_mask, u64 sector,
		       u64 nr_sectors, int err, s64 count)
{
	int i, ret = -ENOSPC;

	pthread_mutex_lock(&d->p->lock);
	for (i = 0; i < MAX_RULES; i++) {
		if (d->rules[i].used)
			continue;
		d->rules[i] = (struct err_rule){
			.used = true, .mask = op_mask, .start = sector,
			.end = sector + nr_sectors, .err = err, .count = count,
		};
		ret = i;
		break;
	}
	pthread_mutex_unlock(&d->p->lock);
	return ret;
}

void simdev_error_remove(struct simdev *d, int rule)
{
	if (rule < 0 || rule >= MAX_RULES)
		return;
	pthread_mutex_lock(&d->p->lock);
	d->rules[rule].used = false;
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_error_at_write(struct simdev *d, u64 k, bool meta_only, int err)
{
	pthread_mutex_lock(&d->p->lock);
	d->werr_at = k;
	d->werr_meta = meta_only;
	d->werr_base = d->werr_writes;
	d->werr_err = err;
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_error_at_flush(struct simdev *d, u64 k, int err)
{
	pthread_mutex_lock(&d->p->lock);
	d->ferr_at = k;
	d->ferr_base = d->ferr_flushes;
	d->ferr_err = err;
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_error_random(struct simdev *d, u32 op_mask, u32 ppm, int err)
{
	pthread_mutex_lock(&d->p->lock);
	d->rand_mask = op_mask;
	d->rand_ppm = ppm;
	d->rand_err = err;
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_error_clear(struct simdev *d)
{
	pthread_mutex_lock(&d->p->lock);
	memset(d->rules, 0, sizeof(d->rules));
	d->werr_at = 0;
	d->ferr_at = 0;
	d->rand_ppm = 0;
	pthread_mutex_unlock(&d->p->lock);
}

void simdev_get_stats(struct simdev *d, struct simdev_stats *st)
{
	pthread_mutex_lock(&d->p->lock);
	*st = d->st;
	pthread_mutex_unlock(&d->p->lock);
}
