// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the disk model (model.c) in virtual time: the seek curve
 * against its three figures, rotational position, zoned transfer, SPTF,
 * aging, the write cache, and closed-loop workloads (a discrete-event
 * driver keeps QD commands outstanding) against published 7200 rpm
 * figures.  Prints TAP-like lines and "N passed, N failed".
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

/*
 * cmocka runs the tests (main below); inside one, CHECK prints a line per
 * figure and carries on, and the test fails at its end if any check did.
 */
static int failures;

#define CHECK(cond, ...) do {						\
	if (cond) { printf("ok - "); }					\
	else { failures++; printf("not ok - "); }			\
	printf(__VA_ARGS__); printf("\n");				\
} while (0)

static uint64_t rng = 42;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void mk(struct hdd *h, uint64_t cap, bool wc, uint32_t ncq)
{
	struct hdd_params p;
	char err[256];

	hdd_defaults(&p);
	p.capacity = cap;
	p.wc = wc;
	p.ncq = ncq;
	if (hdd_init(h, &p, err, sizeof(err))) {
		printf("Bail out! hdd_init: %s\n", err);
		exit(1);
	}
}

/* --------------------------------------------------- workload driver */
enum gen { G_RANDREAD, G_SEQREAD, G_SWEEP_SORTED, G_SWEEP_RANDOM };

struct wl {
	enum gen g;
	uint32_t bs;		/* bytes */
	uint64_t span;		/* bytes of the area */
	uint64_t stride;	/* sweep: one write per stride */
	uint64_t next;		/* sequential/sorted cursor */
	uint64_t *perm;		/* random order of the sweep */
	uint64_t nperm, iperm;
};

static void next_io(struct wl *w, bool *write, uint64_t *lba, uint32_t *ns)
{
	uint64_t off;

	*ns = w->bs / 512;
	*write = w->g >= G_SWEEP_SORTED;
	switch (w->g) {
	case G_RANDREAD:
		off = rnd() % (w->span / w->bs) * w->bs;
		break;
	case G_SEQREAD:
		off = w->next;
		w->next = (w->next + w->bs) % w->span;
		break;
	case G_SWEEP_SORTED:
		off = w->next;
		w->next = (w->next + w->stride) % w->span;
		break;
	default:
		off = w->perm[w->iperm++ % w->nperm] * w->stride;
		break;
	}
	*lba = off / 512;
}

struct slot {
	struct hdd_req req;
	uint64_t issue;
	bool busy, blocked;
	bool cached;
	uint64_t clba;
	uint32_t cns;
};

/* Closed loop: QD commands outstanding, n completions; returns IOPS. */
static double run(struct hdd *h, struct wl *w, int qd, uint64_t n,
		  uint64_t *elapsed)
{
	struct slot *s = calloc(qd, sizeof(*s));
	struct hdd_req *cur = NULL;
	uint64_t now = 0, act_done = 0, done = 0;
	int i;

	while (done < n) {
		uint64_t t = UINT64_MAX;

		if (cur)
			t = act_done;
		for (i = 0; i < qd; i++)
			if (!s[i].busy && !s[i].blocked && s[i].issue < t)
				t = s[i].issue;
		if (t == UINT64_MAX) {
			printf("Bail out! driver deadlock\n");
			exit(1);
		}
		if (t > now)
			now = t;
		if (cur && act_done <= now) {
			hdd_done(h, cur);
			if (cur->op == HDD_DESTAGE) {
				free(cur);
			} else {
				struct slot *sl = cur->priv;

				sl->busy = false;
				sl->issue = now;
				done++;
			}
			cur = NULL;
			for (i = 0; i < qd; i++)
				s[i].blocked = false;
		}
		for (i = 0; i < qd; i++) {
			bool wr;

			if (s[i].busy || s[i].blocked || s[i].issue > now)
				continue;
			if (!s[i].cached)
				next_io(w, &wr, &s[i].clba, &s[i].cns);
			else
				wr = true;
			if (wr && h->p.wc) {
				if (!hdd_cache_write(h, now, s[i].clba,
						     s[i].cns)) {
					s[i].cached = true;	/* retry */
					s[i].blocked = true;
					continue;
				}
				s[i].cached = false;
				s[i].issue = now + h->p.overhead_ns;
				done++;
				continue;
			}
			memset(&s[i].req, 0, sizeof(s[i].req));
			s[i].req.op = wr ? HDD_WRITE : HDD_READ;
			s[i].req.lba = s[i].clba;
			s[i].req.nsect = s[i].cns;
			s[i].req.arrive = now;
			s[i].req.priv = &s[i];
			s[i].busy = true;
			hdd_enqueue(h, &s[i].req);
		}
		if (!cur) {
			cur = hdd_pick(h, now);
			if (cur)
				act_done = hdd_serve(h, now, cur);
		}
	}
	/* drain the write cache (a flush): counted in the elapsed time */
	while (cur || h->queue) {
		if (!cur) {
			cur = hdd_pick(h, now);
			act_done = hdd_serve(h, now, cur);
		}
		now = act_done;
		hdd_done(h, cur);
		if (cur->op == HDD_DESTAGE)
			free(cur);
		cur = NULL;
	}
	free(s);
	if (elapsed)
		*elapsed = now;
	return n / (now / 1e9);
}

static const uint64_t GIB = 1ULL << 30;

static void test_params(void)
{
	struct hdd_params p;
	struct hdd h;
	char err[256];

	hdd_defaults(&p);
	p.capacity = 4 * GIB;
	CHECK(hdd_init(&h, &p, err, sizeof(err)) == 0, "defaults accepted");
	p.avg_ns = 15000000;
	CHECK(hdd_init(&h, &p, err, sizeof(err)) && strstr(err, "seek"),
	      "inconsistent seek figures refused (%s)", err);
	hdd_defaults(&p);
	p.capacity = 4 * GIB + 100;
	CHECK(hdd_init(&h, &p, err, sizeof(err)) && strstr(err, "capacity"),
	      "capacity not a multiple of 512 refused");
	hdd_defaults(&p);
	p.capacity = 4 * GIB;
	p.zones = 0;
	CHECK(hdd_init(&h, &p, err, sizeof(err)) && strstr(err, "zones"),
	      "zero zones refused");
	p.zones = 16;
	p.inner_bps = 300000000;
	CHECK(hdd_init(&h, &p, err, sizeof(err)) && strstr(err, "rate"),
	      "inner rate above outer refused");
	p.inner_bps = 100000000;
	p.rpm = 0;
	CHECK(hdd_init(&h, &p, err, sizeof(err)) && strstr(err, "rpm"),
	      "rpm 0 refused");
}

static void test_seek(void)
{
	struct hdd h;
	double sum = 0;
	uint64_t prev = 0, t, i;
	bool mono = true;
	int n = 200000;

	mk(&h, 500 * GIB, true, 32);
	CHECK(hdd_seek_ns(&h, 0) == 0, "no seek on the same track");
	CHECK(hdd_seek_ns(&h, 1) == h.p.t2t_ns, "seek(1) = track-to-track "
	      "(%llu ns)", (unsigned long long)hdd_seek_ns(&h, 1));
	t = hdd_seek_ns(&h, h.tracks - 1);
	CHECK(llabs((long long)t - (long long)h.p.full_ns) < 10000,
	      "full stroke = %llu ns (want %llu)", (unsigned long long)t,
	      (unsigned long long)h.p.full_ns);
	for (i = 1; i < h.tracks; i += 97) {
		t = hdd_seek_ns(&h, i);
		if (t < prev)
			mono = false;
		prev = t;
	}
	CHECK(mono, "seek time grows with distance");
	for (i = 0; i < (uint64_t)n; i++) {
		uint64_t a = rnd() % h.tracks, b = rnd() % h.tracks;

		sum += hdd_seek_ns(&h, a > b ? a - b : b - a);
	}
	sum /= n;
	CHECK(fabs(sum - h.p.avg_ns) / h.p.avg_ns < 0.03,
	      "mean seek over random pairs %.3f ms (want %.3f)", sum / 1e6,
	      h.p.avg_ns / 1e6);
}

static void test_rotation(void)
{
	struct hdd h;
	uint64_t lba = 12345678, t, pos;
	double a;

	mk(&h, 4 * GIB, true, 32);
	h.head_trk = hdd_track_of(&h, lba, NULL, NULL);
	/* find a time at which the target is 0.25 rev ahead of the head */
	a = hdd_angle_of(&h, lba) - 0.25 - h.phase0;
	a -= floor(a);
	t = (uint64_t)(a * h.rev_ns) + 10 * h.rev_ns;
	pos = hdd_position_ns(&h, t, lba);
	CHECK(llabs((long long)pos - (long long)h.rev_ns / 4) < 20000,
	      "same track, target a quarter turn ahead: waits %llu ns "
	      "(rev %llu)", (unsigned long long)pos,
	      (unsigned long long)h.rev_ns);
	pos = hdd_position_ns(&h, t + h.rev_ns / 2, lba);
	CHECK(llabs((long long)pos - (long long)h.rev_ns * 3 / 4) < 20000,
	      "half a turn later it has passed: waits %llu ns (3/4 rev)",
	      (unsigned long long)pos);
	CHECK(h.rev_ns == 8333333, "7200 rpm: a revolution is 8.333 ms");
}

static void test_zones(void)
{
	struct hdd h;
	uint64_t o, i;
	double ro, ri;

	mk(&h, 4 * GIB, true, 32);
	o = hdd_xfer_ns(&h, 0, 2048 * 8);
	i = hdd_xfer_ns(&h, h.nsect - 2048 * 8, 2048 * 8);
	ro = 8.0 * 1048576 / (o / 1e9) / 1e6;
	ri = 8.0 * 1048576 / (i / 1e9) / 1e6;
	CHECK(ro > 170 && ro <= 200, "outer zone 8 MiB transfer: %.0f MB/s",
	      ro);
	CHECK(ri > 85 && ri <= 101, "inner zone 8 MiB transfer: %.0f MB/s",
	      ri);
}

static void test_sptf_aging(void)
{
	struct hdd h;
	struct hdd_req far = {0}, near = {0}, *r;
	uint64_t now = 5000000000ULL;

	mk(&h, 4 * GIB, false, 32);
	h.head_trk = 10;
	far.op = HDD_READ;
	far.lba = h.nsect - 8;
	far.nsect = 8;
	far.arrive = now;
	near.op = HDD_READ;
	near.lba = hdd_track_of(&h, 0, NULL, NULL) == 0 ? h.zone_spt[0] * 11
							: 0;
	near.nsect = 8;
	near.arrive = now;
	hdd_enqueue(&h, &far);
	hdd_enqueue(&h, &near);
	r = hdd_pick(&h, now);
	CHECK(r == &near, "SPTF: the nearby command goes before the older "
	      "far one");
	hdd_enqueue(&h, r);
	far.arrive = now - h.p.starve_ns - 1;
	r = hdd_pick(&h, now);
	CHECK(r == &far, "aging: a command waiting past starve goes first");
	r = hdd_pick(&h, now);
	CHECK(r == &near && !h.queue, "queue empty afterwards");
}

static void test_cache(void)
{
	struct hdd h;
	struct hdd_req *r;
	uint64_t now = 0, seq;
	uint32_t i, n = 0;

	mk(&h, 4 * GIB, true, 32);
	for (i = 0; i < h.p.wc_cmds; i++)
		n += hdd_cache_write(&h, now, (rnd() % (h.nsect / 8)) * 8, 8);
	CHECK(n == h.p.wc_cmds, "the write cache takes %u writes", n);
	CHECK(!hdd_cache_write(&h, now, 0, 8), "then refuses (full)");
	seq = h.write_seq;
	CHECK(hdd_oldest_dirty(&h) <= seq, "a flush now has to wait");
	while ((r = hdd_pick(&h, now))) {
		now = hdd_serve(&h, now, r);
		hdd_done(&h, r);
		free(r);
	}
	CHECK(hdd_oldest_dirty(&h) == UINT64_MAX && h.dirty_bytes == 0,
	      "destaged: nothing dirty, flush done after %.1f ms", now / 1e6);
	CHECK(h.st.destages == n && h.st.media_ops == n,
	      "every cached write reached the media once");
}

static void test_workloads(void)
{
	struct hdd h;
	struct wl w;
	double q1, q32, q16, seq, sorted, random;
	uint64_t el, i, nperm;

	mk(&h, 4 * GIB, false, 32);
	memset(&w, 0, sizeof(w));
	w.g = G_RANDREAD;
	w.bs = 4096;
	w.span = 4 * GIB;
	q1 = run(&h, &w, 1, 3000, NULL);
	CHECK(q1 >= 80 && q1 <= 120, "4K random read QD1: %.0f IOPS (80-120)",
	      q1);
	CHECK(h.st.seeks > 2900 && h.st.seek_tracks / h.st.seeks >
	      h.tracks / 4, "QD1: %llu seeks, mean distance %llu of %llu "
	      "tracks", (unsigned long long)h.st.seeks,
	      (unsigned long long)(h.st.seek_tracks / h.st.seeks),
	      (unsigned long long)h.tracks);
	mk(&h, 4 * GIB, false, 32);
	q32 = run(&h, &w, 32, 5000, NULL);
	CHECK(q32 >= 150 && q32 <= 250, "4K random read QD32, NCQ: %.0f IOPS "
	      "(150-250)", q32);
	mk(&h, 4 * GIB, false, 32);
	q16 = run(&h, &w, 16, 5000, NULL);
	CHECK(q16 > q1 * 1.4 && q16 < q32, "QD16 (QEMU's NBD limit): %.0f IOPS,"
	      " between QD1 and QD32", q16);
	mk(&h, 4 * GIB, false, 1);
	q16 = run(&h, &w, 16, 3000, NULL);
	CHECK(q16 < q1 * 1.1, "ncq=1 (FIFO): QD16 %.0f IOPS, no better than "
	      "QD1", q16);

	mk(&h, 4 * GIB, false, 32);
	w.g = G_SEQREAD;
	w.bs = 1 << 20;
	w.next = 0;
	seq = run(&h, &w, 1, 500, NULL) * w.bs / 1e6;
	CHECK(seq >= 150 && seq <= 200, "sequential 1 MiB reads QD1 (outer "
	      "zone): %.0f MB/s (150-200)", seq);
	mk(&h, 4 * GIB, false, 32);
	w.next = 0;
	seq = run(&h, &w, 4, 500, NULL) * w.bs / 1e6;
	CHECK(seq >= 150 && seq <= 200, "sequential 1 MiB reads QD4: %.0f MB/s "
	      "(150-200; SPTF keeps the stream in order)", seq);

	/* 4 KiB writes, one per 64 KiB over the whole disk, sorted vs shuffled,
	 * QD16, flushed at the end; write cache off (the order reaches the
	 * media as issued, but for the NCQ window) and on (the disk's
	 * default: 128 cached writes reordered SPTF hide part of it) */
	memset(&w, 0, sizeof(w));
	w.bs = 4096;
	w.span = 4 * GIB;
	w.stride = 65536;
	nperm = w.span / w.stride;
	w.perm = malloc(nperm * sizeof(*w.perm));
	for (i = 0; i < nperm; i++)
		w.perm[i] = i;
	for (i = nperm - 1; i > 0; i--) {
		uint64_t j = rnd() % (i + 1), t = w.perm[i];

		w.perm[i] = w.perm[j];
		w.perm[j] = t;
	}
	w.nperm = nperm;
	for (i = 0; i < 2; i++) {
		mk(&h, 4 * GIB, i, 32);
		w.g = G_SWEEP_SORTED;
		w.next = 0;
		sorted = run(&h, &w, 16, nperm, &el);
		mk(&h, 4 * GIB, i, 32);
		w.g = G_SWEEP_RANDOM;
		random = run(&h, &w, 16, nperm, &el);
		CHECK(sorted >= (i ? 4 : 10) * random, "4K write sweep (1 per "
		      "64K over the disk, QD16, cache %s): sorted %.0f IOPS, "
		      "random order %.0f IOPS: %.1fx (>= %dx)", i ? "on" : "off",
		      sorted, random, sorted / random, i ? 4 : 10);
	}
	free(w.perm);
}

static void test_seed(void)
{
	struct hdd a, b, c;
	struct hdd_params p;
	char err[256];

	hdd_defaults(&p);
	p.capacity = 4 * GIB;
	hdd_init(&a, &p, err, sizeof(err));
	hdd_init(&b, &p, err, sizeof(err));
	p.seed = 2;
	hdd_init(&c, &p, err, sizeof(err));
	CHECK(a.phase0 == b.phase0 && a.head_trk == b.head_trk,
	      "same seed, same start");
	CHECK(a.phase0 != c.phase0, "another seed, another platter phase");
}

static void one_test(void **state)
{
	void (*const *fn)(void) = *state;

	failures = 0;
	(*fn)();
	if (failures)
		fail_msg("%d check(s) failed", failures);
}

static void (*const fns[])(void) = {
	test_params,
	test_seek,
	test_rotation,
	test_zones,
	test_sptf_aging,
	test_cache,
	test_seed,
	test_workloads,
};

int main(void)
{
#define T(i, n) { .name = #n, .test_func = one_test, .initial_state = (void *)&fns[i] }
	const struct CMUnitTest tests[] = {
		T(0, test_params),
		T(1, test_seek),
		T(2, test_rotation),
		T(3, test_zones),
		T(4, test_sptf_aging),
		T(5, test_cache),
		T(6, test_seed),
		T(7, test_workloads)
	};
#undef T
	int nfail = cmocka_run_group_tests(tests, NULL, NULL);

	printf("hdd-model: %d passed, %d failed\n",
	       (int)(sizeof(tests) / sizeof(tests[0])) - nfail, nfail);
	return nfail != 0;
}
