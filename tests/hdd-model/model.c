// SPDX-License-Identifier: GPL-2.0
/*
 * hdd-model: timing model of a 7200 rpm disk.  See model.h and README.md.
 *
 * Geometry: the capacity is laid on one surface of `zones` zones with the
 * same number of tracks each; sectors per track fall linearly from the
 * outer zone (outer_bps) to the inner one (inner_bps).  Sector angle =
 * its index on the track / sectors per track + track skew (the fraction of
 * a revolution a track-to-track seek takes, so a sequential transfer that
 * crosses a track loses only the switch).
 *
 * Seek (d tracks, x = (d-1)/(tracks-1)): t2t + b sqrt(x) + c x, with b and
 * c chosen so that seek(1) = t2t, seek(full stroke) = full and the mean
 * over uniformly random pairs of tracks (E[sqrt x] = 8/15, E[x] = 1/3) =
 * avg.
 *
 * Rotation: the platter angle at time t is phase0 + t / rev (mod 1); a
 * request waits for its first sector to come under the head after the
 * seek, from the angle at that moment.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

void hdd_defaults(struct hdd_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rpm = 7200;
	p->t2t_ns = 800000;
	p->avg_ns = 7600000;
	p->full_ns = 16000000;
	p->outer_bps = 200000000;
	p->inner_bps = 100000000;
	p->zones = 16;
	p->overhead_ns = 50000;
	p->ncq = 32;
	p->wc = true;
	p->wc_bytes = 16 << 20;
	p->wc_cmds = 128;
	p->ra_bytes = 1 << 20;
	p->starve_ns = 2000000000ULL;
	p->seed = 1;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double frac(double x)
{
	return x - floor(x);
}

int hdd_init(struct hdd *h, const struct hdd_params *p, char *err, int errlen)
{
	double rev, t2t, avg, full;
	uint64_t spt_sum = 0, tpz, s;
	uint32_t z;

	memset(h, 0, sizeof(*h));
	h->p = *p;
#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)
	if (p->rpm < 1000 || p->rpm > 30000)
		BAD("rpm %u out of range (1000-30000)", p->rpm);
	if (p->zones < 1 || p->zones > 64)
		BAD("zones %u out of range (1-64)", p->zones);
	if (p->inner_bps < 1000000 || p->outer_bps < p->inner_bps)
		BAD("need 1 MB/s <= inner rate (%llu) <= outer rate (%llu)",
		    (unsigned long long)p->inner_bps,
		    (unsigned long long)p->outer_bps);
	if (p->capacity < (1 << 20) || p->capacity % 512)
		BAD("capacity %llu: need a multiple of 512, at least 1 MiB",
		    (unsigned long long)p->capacity);
	if (p->ncq < 1 || p->ncq > 256)
		BAD("ncq %u out of range (1-256)", p->ncq);
	if (p->wc && (p->wc_cmds < 1 || p->wc_bytes < 4096))
		BAD("write cache needs wc-cmds >= 1 and wc-size >= 4096");
	t2t = p->t2t_ns;
	avg = p->avg_ns;
	full = p->full_ns;
	if (!(t2t > 0 && t2t < avg && avg < full))
		BAD("need 0 < track-to-track < average < full-stroke seek");
	/* b + c = full - t2t; 8/15 b + 1/3 c = avg - t2t */
	h->seek_b = (avg - t2t - (full - t2t) / 3.0) / (8.0 / 15.0 - 1.0 / 3.0);
	h->seek_c = full - t2t - h->seek_b;
	if (h->seek_b < 0 || h->seek_c < 0)
		BAD("seek figures inconsistent: the average (%.2f ms) must lie "
		    "between t2t + (full - t2t)/3 (%.2f ms) and t2t + 8/15 "
		    "(full - t2t) (%.2f ms)", avg / 1e6,
		    (t2t + (full - t2t) / 3) / 1e6,
		    (t2t + 8 * (full - t2t) / 15) / 1e6);
#undef BAD
	rev = 60e9 / p->rpm;
	h->rev_ns = (uint64_t)rev;
	h->nsect = p->capacity / 512;
	for (z = 0; z < p->zones; z++) {
		double bps = p->outer_bps;

		if (p->zones > 1)
			bps -= (double)(p->outer_bps - p->inner_bps) * z /
			       (p->zones - 1);
		h->zone_spt[z] = (uint32_t)(bps * rev / 1e9 / 512);
		if (h->zone_spt[z] < 1)
			h->zone_spt[z] = 1;
		spt_sum += h->zone_spt[z];
	}
	tpz = (h->nsect + spt_sum - 1) / spt_sum;
	s = 0;
	for (z = 0; z < p->zones; z++) {
		h->zone_lba[z] = s;
		h->zone_trk[z] = z * tpz;
		s += tpz * h->zone_spt[z];
	}
	h->zone_lba[p->zones] = s;
	h->zone_trk[p->zones] = p->zones * tpz;
	h->tracks = hdd_track_of(h, h->nsect - 1, NULL, NULL) + 1;
	h->skew = t2t / rev;
	s = p->seed;
	h->phase0 = (splitmix(&s) >> 11) * (1.0 / 9007199254740992.0);
	h->head_trk = splitmix(&s) % h->tracks;
	return 0;
}

uint64_t hdd_seek_ns(const struct hdd *h, uint64_t dist)
{
	double x;

	if (dist == 0)
		return 0;
	x = h->tracks > 1 ? (double)(dist - 1) / (h->tracks - 1) : 0;
	if (x > 1)
		x = 1;
	return (uint64_t)(h->p.t2t_ns + h->seek_b * sqrt(x) + h->seek_c * x);
}

uint64_t hdd_track_of(const struct hdd *h, uint64_t lba, uint32_t *spt,
		      uint32_t *sect)
{
	uint32_t z = 0;
	uint64_t off;

	while (z + 1 < h->p.zones && lba >= h->zone_lba[z + 1])
		z++;
	off = lba - h->zone_lba[z];
	if (spt)
		*spt = h->zone_spt[z];
	if (sect)
		*sect = off % h->zone_spt[z];
	return h->zone_trk[z] + off / h->zone_spt[z];
}

double hdd_angle_at(const struct hdd *h, uint64_t t)
{
	return frac(h->phase0 + (double)t / (60e9 / h->p.rpm));
}

double hdd_angle_of(const struct hdd *h, uint64_t lba)
{
	uint32_t spt, sect;
	uint64_t trk = hdd_track_of(h, lba, &spt, &sect);

	return frac((double)sect / spt + (double)trk * h->skew);
}

uint64_t hdd_xfer_ns(const struct hdd *h, uint64_t lba, uint32_t nsect)
{
	double rev = 60e9 / h->p.rpm, t = 0;

	while (nsect) {
		uint32_t spt, sect, take;

		hdd_track_of(h, lba, &spt, &sect);
		take = spt - sect;
		if (take > nsect)
			take = nsect;
		t += rev * take / spt;
		nsect -= take;
		lba += take;
		if (nsect)
			t += h->skew * rev;
	}
	return (uint64_t)t;
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static uint64_t overhead(const struct hdd *h, const struct hdd_req *r)
{
	return r->op == HDD_DESTAGE ? 0 : h->p.overhead_ns;
}

uint64_t hdd_position_ns(const struct hdd *h, uint64_t now, uint64_t lba)
{
	uint64_t trk = hdd_track_of(h, lba, NULL, NULL);
	uint64_t seek = hdd_seek_ns(h, dist(trk, h->head_trk));
	double rot = frac(hdd_angle_of(h, lba) - hdd_angle_at(h, now + seek));

	return seek + (uint64_t)(rot * (60e9 / h->p.rpm));
}

/* ------------------------------------------------------ read-ahead */
static double ra_rate(const struct hdd *h)	/* sectors per ns */
{
	uint32_t spt;

	hdd_track_of(h, h->ra_lo < h->nsect ? h->ra_lo : 0, &spt, NULL);
	return spt / (60e9 / h->p.rpm);
}

/* End of what the buffer holds at time now. */
static uint64_t ra_end(const struct hdd *h, uint64_t now)
{
	uint64_t cap = h->ra_lo + h->ra_len, e;

	if (!h->ra_live)
		return h->ra_hi;
	e = h->ra_lo;
	if (now > h->ra_t)
		e += (uint64_t)((now - h->ra_t) * ra_rate(h));
	if (e > cap)
		e = cap;
	return e > h->nsect ? h->nsect : e;
}

/*
 * Can the read be served from the read-ahead buffer (already there, or
 * arriving behind the head that is still reading ahead)?  Its completion.
 */
static bool ra_serves(const struct hdd *h, uint64_t now,
		      const struct hdd_req *r, uint64_t *done)
{
	uint64_t end = r->lba + r->nsect, have;

	if (!h->p.ra_bytes || r->op != HDD_READ || r->lba < h->ra_lo)
		return false;
	have = ra_end(h, now);
	if (r->lba > have)
		return false;
	if (end <= have) {
		*done = now + h->p.overhead_ns;
		return true;
	}
	if (!h->ra_live || end > h->ra_lo + h->ra_len + r->nsect)
		return false;
	/* streaming: wait for the head to read up to end */
	*done = now + h->p.overhead_ns +
		(uint64_t)((end - have) / ra_rate(h));
	return true;
}

static void ra_stop(struct hdd *h, uint64_t now)
{
	if (h->ra_live) {
		h->ra_hi = ra_end(h, now);
		h->ra_live = false;
		if (h->ra_hi > h->ra_lo)
			h->head_trk = hdd_track_of(h, h->ra_hi - 1, NULL, NULL);
	}
}

static void ra_start(struct hdd *h, uint64_t lba, uint64_t t)
{
	h->ra_live = h->p.ra_bytes && lba < h->nsect;
	h->ra_lo = lba;
	h->ra_hi = lba;
	h->ra_t = t;
	h->ra_len = h->p.ra_bytes / 512;
}

/* ------------------------------------------------------------ queue */
void hdd_enqueue(struct hdd *h, struct hdd_req *r)
{
	struct hdd_req **pp = &h->queue;

	while (*pp)
		pp = &(*pp)->next;
	r->next = NULL;
	r->done = false;
	*pp = r;
	h->nqueue++;
	if (h->nqueue > h->st.max_queue)
		h->st.max_queue = h->nqueue;
	if (r->op == HDD_READ) {
		h->st.reads++;
		h->st.read_bytes += (uint64_t)r->nsect * 512;
	} else if (r->op == HDD_WRITE) {
		h->st.writes++;
		h->st.write_bytes += (uint64_t)r->nsect * 512;
	}
}

bool hdd_cache_write(struct hdd *h, uint64_t now, uint64_t lba,
		     uint32_t nsect)
{
	uint64_t bytes = (uint64_t)nsect * 512;
	struct hdd_req *r;

	if (h->dirty_cmds &&
	    (h->dirty_bytes + bytes > h->p.wc_bytes ||
	     h->dirty_cmds + 1 > h->p.wc_cmds))
		return false;
	r = calloc(1, sizeof(*r));
	if (!r)
		return false;
	r->op = HDD_DESTAGE;
	r->lba = lba;
	r->nsect = nsect;
	r->arrive = now;
	r->seq = ++h->write_seq;
	h->dirty_bytes += bytes;
	h->dirty_cmds++;
	hdd_enqueue(h, r);
	h->st.writes++;
	h->st.write_bytes += bytes;
	h->st.cached_writes++;
	return true;
}

static uint64_t cost(const struct hdd *h, uint64_t now,
		     const struct hdd_req *r)
{
	uint64_t done;

	/* positioning only: a read the head is already reading ahead
	 * costs nothing to reach (its transfer is not positioning) */
	if (ra_serves(h, now, r, &done))
		return h->p.overhead_ns;
	return overhead(h, r) + hdd_position_ns(h, now + overhead(h, r),
						 r->lba);
}

struct hdd_req *hdd_pick(struct hdd *h, uint64_t now)
{
	struct hdd_req **pp, **best = NULL;
	uint64_t best_cost = UINT64_MAX;
	uint32_t host = 0;

	if (!h->queue)
		return NULL;
	/* aging: the oldest command first once it has waited too long */
	if (h->p.starve_ns && now > h->queue->arrive &&
	    now - h->queue->arrive >= h->p.starve_ns) {
		best = &h->queue;
	} else {
		for (pp = &h->queue; *pp; pp = &(*pp)->next) {
			uint64_t c;

			/* host commands beyond the NCQ depth wait outside */
			if ((*pp)->op != HDD_DESTAGE && ++host > h->p.ncq)
				continue;
			c = cost(h, now, *pp);
			if (c < best_cost) {
				best_cost = c;
				best = pp;
			}
		}
	}
	{
		struct hdd_req *r = *best;

		*best = r->next;
		r->next = NULL;
		h->nqueue--;
		return r;
	}
}

uint64_t hdd_serve(struct hdd *h, uint64_t now, struct hdd_req *r)
{
	uint64_t done, trk, d, seek, rot, xfer, t, ovh;
	uint64_t end = r->lba + r->nsect;

	h->serving = r;
	h->st.media_ops++;
	if (ra_serves(h, now, r, &done)) {
		h->st.ra_hits++;
		h->st.xfer_ns += done - now;
		h->st.busy_ns += done - now;
		/* keep reading ahead past what was consumed */
		if (h->ra_live) {
			uint64_t have = ra_end(h, done);

			if (have < end)
				have = end;

			if (have >= h->ra_lo + h->ra_len) {
				/* the head had stopped at a full buffer: it
				 * resumes now, the unread rest still held */
				h->ra_t = done - (uint64_t)((have - end) /
							    ra_rate(h));
				h->ra_lo = end;
			} else {
				/* same head stream, window slides to end */
				h->ra_t += (uint64_t)((end - h->ra_lo) /
						      ra_rate(h));
				h->ra_lo = end;
			}
		}
		return done;
	}
	ra_stop(h, now);
	ovh = overhead(h, r);
	trk = hdd_track_of(h, r->lba, NULL, NULL);
	d = dist(trk, h->head_trk);
	seek = hdd_seek_ns(h, d);
	t = now + ovh + seek;
	rot = (uint64_t)(frac(hdd_angle_of(h, r->lba) - hdd_angle_at(h, t)) *
			 (60e9 / h->p.rpm));
	xfer = hdd_xfer_ns(h, r->lba, r->nsect);
	done = t + rot + xfer;
	h->head_trk = hdd_track_of(h, end - 1, NULL, NULL);
	if (d) {
		h->st.seeks++;
		h->st.seek_tracks += d;
	}
	h->st.seek_ns += seek;
	h->st.rot_ns += rot;
	h->st.xfer_ns += xfer;
	h->st.busy_ns += done - now;
	if (r->op == HDD_READ) {
		ra_start(h, end, done);
	} else if (r->lba < h->ra_hi && end > h->ra_lo) {
		h->ra_hi = h->ra_lo;	/* written over: buffer dropped */
	}
	return done;
}

void hdd_done(struct hdd *h, struct hdd_req *r)
{
	if (h->serving == r)
		h->serving = NULL;
	r->done = true;
	if (r->op == HDD_DESTAGE) {
		h->dirty_bytes -= (uint64_t)r->nsect * 512;
		h->dirty_cmds--;
		h->st.destages++;
	}
}

uint64_t hdd_oldest_dirty(const struct hdd *h)
{
	uint64_t m = UINT64_MAX;
	const struct hdd_req *r;

	if (h->serving && h->serving->op == HDD_DESTAGE)
		m = h->serving->seq;
	for (r = h->queue; r; r = r->next)
		if (r->op == HDD_DESTAGE && r->seq < m)
			m = r->seq;
	return m;
}

int hdd_stats_json(const struct hdd *h, char *buf, int len)
{
	const struct hdd_stats *s = &h->st;

	return snprintf(buf, len,
		"{\"reads\": %llu, \"writes\": %llu, \"flushes\": %llu, "
		"\"trims\": %llu, \"read_bytes\": %llu, \"write_bytes\": %llu, "
		"\"cached_writes\": %llu, \"destages\": %llu, "
		"\"media_ops\": %llu, \"seeks\": %llu, \"seek_tracks\": %llu, "
		"\"avg_seek_tracks\": %llu, \"seek_ns\": %llu, "
		"\"rot_ns\": %llu, \"xfer_ns\": %llu, \"busy_ns\": %llu, "
		"\"ra_hits\": %llu, \"max_queue\": %llu, \"dirty_bytes\": %llu, "
		"\"dirty_cmds\": %u, \"queue\": %u, \"flush_waiting\": %u, "
		"\"tracks\": %llu, \"rev_ns\": %llu, \"capacity\": %llu}",
		(unsigned long long)s->reads, (unsigned long long)s->writes,
		(unsigned long long)s->flushes, (unsigned long long)s->trims,
		(unsigned long long)s->read_bytes,
		(unsigned long long)s->write_bytes,
		(unsigned long long)s->cached_writes,
		(unsigned long long)s->destages,
		(unsigned long long)s->media_ops, (unsigned long long)s->seeks,
		(unsigned long long)s->seek_tracks,
		(unsigned long long)(s->seeks ? s->seek_tracks / s->seeks : 0),
		(unsigned long long)s->seek_ns, (unsigned long long)s->rot_ns,
		(unsigned long long)s->xfer_ns, (unsigned long long)s->busy_ns,
		(unsigned long long)s->ra_hits,
		(unsigned long long)s->max_queue,
		(unsigned long long)h->dirty_bytes,
		h->dirty_cmds, h->nqueue, h->flush_waiting,
		(unsigned long long)h->tracks,
		(unsigned long long)h->rev_ns,
		(unsigned long long)h->p.capacity);
}
