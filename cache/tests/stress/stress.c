// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-threaded stress of the vcache engine in userspace, built twice:
 * under ThreadSanitizer and under AddressSanitizer + UBSan.
 *
 * Worker threads own disjoint regions of the backing devices and check
 * every read of their region exactly against their own model; scanner
 * threads read anywhere and check that whatever comes back is data that
 * was written to that very sector (or zeroes), never another sector's;
 * control threads meanwhile switch modes and policies, change tunables,
 * run blocking and background flushes on demand, kick the cleaner and
 * read statistics.  Devices complete from their own thread in random
 * order; the engine's work runs on the posix worker thread.
 *
 * With --interleave the workers of a device share every cache block (each
 * owns every m-th 1 KiB chunk), so partial-block reads, writes, fills and
 * write-backs of different threads race inside one block.
 *
 *   stress [--seed N] [--ops N] [--threads N] [--interleave] [-v]
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vc_engine.h"
#include "vc_posix.h"
#include "harness.h"
#include "simdev.h"

#define NDEV		2
#define DEV_SECTORS	(8 * 2048)	/* 8 MiB */
#define CACHE_SECTORS	(2 * 2048)	/* 2 MiB */
#define MAX_WORKERS	16

struct req {
	struct vc_host_io hio;
	pthread_mutex_t m;
	pthread_cond_t cv;
	bool done;
	int err;
};

static struct vc_cache *cache;
static struct simdev *bdev[NDEV];
static u32 dev_id[NDEV];
static int nworkers = 4;
static u64 ops_per_worker = 20000;
static int stop_control;
static u64 failures;
static u64 total_reads, total_writes, total_checked, scanner_reads;
static u32 version_counter;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) > 10)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "STRESS FAILURE: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static u64 rnd(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void req_end(struct vc_host_io *hio, int err)
{
	struct req *r = vc_container_of(hio, struct req, hio);

	pthread_mutex_lock(&r->m);
	r->err = err;
	r->done = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->m);
}

/* Synchronous host I/O. */
static int sync_io(int d, int op, u32 flags, u64 sector, u32 len, u8 *data,
		   u64 stream, s32 pid)
{
	struct req r;
	int err;

	memset(&r, 0, sizeof(r));
	pthread_mutex_init(&r.m, NULL);
	pthread_cond_init(&r.cv, NULL);
	r.hio.dev_id = dev_id[d];
	r.hio.op = (u8)op;
	r.hio.flags = flags;
	r.hio.sector = sector;
	r.hio.len = len;
	r.hio.buf = len ? vc_buf_wrap(data, len) : NULL;
	r.hio.stream = stream;
	r.hio.pid = pid;
	r.hio.tgid = pid;
	r.hio.end_io = req_end;
	vc_cache_submit(cache, &r.hio);
	pthread_mutex_lock(&r.m);
	while (!r.done)
		pthread_cond_wait(&r.cv, &r.m);
	err = r.err;
	pthread_mutex_unlock(&r.m);
	vc_buf_free(r.hio.buf);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.m);
	return err;
}

struct worker {
	pthread_t th;
	int idx;
	u64 rng;
	int d;
	u64 base, nsect;	/* owned region */
	/*
	 * --interleave: the workers of a device share every cache block:
	 * worker j of m owns the 1 KiB chunks c with c % m == j.
	 */
	u32 m, j;
	u32 *model;		/* version per sector, 0 = zeroes */
	u32 *hist;		/* per sector: last 4 ops, 8 bits each */
	u64 reads, writes, checked;
};

static bool owns(const struct worker *w, u64 s)
{
	return w->m <= 1 || (s / 2) % w->m == w->j;
}

/* model flag: discarded since written; low bits: the version before */
#define DISCARDED	0x80000000u

static bool sector_ok(u32 m, long long v)
{
	if (m & DISCARDED)
		return v == 0 || v == (long long)(m & ~DISCARDED);
	return v == (long long)m;
}

/* op codes in the history: 1 write, 2 FUA write, 3 discard, 4 flush */
static void hist_add(struct worker *w, u64 off, u64 n, u32 code)
{
	u64 s;

	for (s = off; s < off + n; s++)
		w->hist[s] = (w->hist[s] << 8) | code;
}

static const char *hist_str(u32 h, char *buf)
{
	static const char *const names[] = { "-", "W", "F", "D", "?" };
	int i;

	buf[0] = 0;
	for (i = 3; i >= 0; i--) {
		u32 c = (h >> (i * 8)) & 0xff;

		strcat(buf, names[c < 4 ? c : 4]);
	}
	return buf;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	u8 *buf = malloc(64 * 1024);
	u64 i;

	for (i = 0; i < ops_per_worker && !__atomic_load_n(&failures,
							    __ATOMIC_RELAXED);
	     i++) {
		u64 x = rnd(&w->rng) % 100;
		u64 off = rnd(&w->rng) % w->nsect;
		u64 n = 1 + rnd(&w->rng) % 64, s;
		u32 len;
		int err;

		if (w->m > 1) {
			/* one of my chunks, its neighbours are others' */
			off = (rnd(&w->rng) % (w->nsect / (2 * w->m)) * w->m +
			       w->j) * 2;
			n = 2;
		}
		if (off + n > w->nsect)
			n = w->nsect - off;
		len = (u32)(n * H_SECT);
		if (x < 50) {
			memset(buf, 0xee, len);
			err = sync_io(w->d, VC_OP_READ, 0, w->base + off, len,
				      buf, (u64)w->idx, 1000 + w->idx);
			w->reads++;
			if (err) {
				fail("worker %d: read error %d", w->idx, err);
				break;
			}
			for (s = 0; s < n; s++) {
				long long v = h_sector_version(buf + s * H_SECT,
							       (u32)w->d,
							       w->base + off + s);

				w->checked++;
				if (!sector_ok(w->model[off + s], v)) {
					char hb[8];

					fail("worker %d: dev %d sector %llu: want version %u got %lld (history of the sector, oldest first: %s; read %llu+%llu)",
					     w->idx, w->d,
					     (unsigned long long)(w->base + off + s),
					     w->model[off + s], v,
					     hist_str(w->hist[off + s], hb),
					     (unsigned long long)(w->base + off),
					     (unsigned long long)n);
					break;
				}
			}
		} else if (x < 92) {
			u32 ver = __atomic_add_fetch(&version_counter, 1,
						     __ATOMIC_RELAXED);
			u32 flags = (x % 13 == 0) ? VC_IO_FUA : 0;

			for (s = 0; s < n; s++)
				h_fill_sector(buf + s * H_SECT, (u32)w->d,
					      w->base + off + s, ver);
			err = sync_io(w->d, VC_OP_WRITE, flags, w->base + off,
				      len, buf, (u64)w->idx, 1000 + w->idx);
			w->writes++;
			if (err) {
				fail("worker %d: write error %d", w->idx, err);
				break;
			}
			for (s = 0; s < n; s++)
				w->model[off + s] = ver;
			hist_add(w, off, n, flags ? 2 : 1);
		} else if (x < 96) {
			err = sync_io(w->d, VC_OP_FLUSH, 0, 0, 0, NULL, 0,
				      1000 + w->idx);
			if (err)
				fail("worker %d: flush error %d", w->idx, err);
		} else {
			err = sync_io(w->d, VC_OP_DISCARD, 0, w->base + off,
				      len, NULL, 0, 1000 + w->idx);
			if (err) {
				fail("worker %d: discard error %d", w->idx,
				     err);
				break;
			}
			hist_add(w, off, n, 3);
			/*
			 * Discarded data is undefined until written again:
			 * zeroes or the data it had are both fine.
			 */
			for (s = 0; s < n; s++)
				if (w->model[off + s] && !(w->model[off + s] &
							   DISCARDED))
					w->model[off + s] |= DISCARDED;
		}
	}
	free(buf);
	return NULL;
}

/* Reads anywhere: data must belong to the sector it was read from. */
static void *scanner_fn(void *arg)
{
	u64 rng = (u64)(uintptr_t)arg;
	u8 *buf = malloc(64 * 1024);
	u64 reads = 0;

	while (!__atomic_load_n(&stop_control, __ATOMIC_ACQUIRE)) {
		int d = (int)(rnd(&rng) % NDEV);
		u64 sec = rnd(&rng) % (DEV_SECTORS - 128), s;
		int err = sync_io(d, VC_OP_READ, 0, sec, 64 * 1024, buf, 77,
				  2000);

		reads++;
		if (err) {
			fail("scanner: read error %d", err);
			break;
		}
		for (s = 0; s < 128; s++)
			if (h_sector_version(buf + s * H_SECT, (u32)d,
					     sec + s) < 0)
				fail("scanner: dev %d sector %llu holds another sector's data",
				     d, (unsigned long long)(sec + s));
	}
	__atomic_add_fetch(&scanner_reads, reads, __ATOMIC_RELAXED);
	free(buf);
	return NULL;
}

static u64 dirty_blocks_now(void)
{
	struct vc_stats st;

	vc_cache_get_stats(cache, &st);
	return st.dirty_blocks;
}

static void *control_fn(void *arg)
{
	u64 rng = (u64)(uintptr_t)arg;
	struct vc_stats st;
	struct vc_flush_progress p;
	u64 n = 0;

	while (!__atomic_load_n(&stop_control, __ATOMIC_ACQUIRE)) {
		switch (rnd(&rng) % 10) {
		case 0:
			vc_cache_set_mode(cache, rnd(&rng) % 3 ? VC_MODE_WB :
					  (enum vc_mode)(rnd(&rng) % VC_NR_MODES));
			break;
		case 1:
			vc_cache_set_policy(cache, (enum vc_policy)(rnd(&rng) %
								  VC_NR_POLICIES));
			break;
		case 2:
			vc_cache_set_param(cache, VC_P_DIRTY_HIGH_PCT,
					   30 + rnd(&rng) % 70);
			break;
		case 3:
			vc_cache_set_param(cache, VC_P_SEQ_ENABLE, rnd(&rng) & 1);
			break;
		case 4: {
			int e = vc_cache_flush(cache, rnd(&rng) & 1 ?
					       VC_DEV_ID_ALL :
					       dev_id[rnd(&rng) % NDEV], NULL,
					       NULL);

			if (e) {
				fprintf(stderr, "stress: flush on demand: %d\n", e);
				fail("control: flush on demand failed");
			}
			break;
		}
		case 5:
			if (!vc_cache_flush_start(cache, VC_DEV_ID_ALL, NULL,
						  NULL) && rnd(&rng) % 2)
				vc_cache_flush_cancel(cache);
			vc_cache_flush_get_progress(cache, &p);
			break;
		case 6:
			vc_cache_kick_cleaner(cache);
			break;
		case 7:
			vc_cache_set_param(cache, VC_P_ADMISSION,
					   rnd(&rng) % VC_NR_ADMISSIONS);
			break;
		default:
			vc_cache_get_stats(cache, &st);
			break;
		}
		n++;
		sched_yield();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "ops", 1, NULL, 'n' },
		{ "threads", 1, NULL, 't' }, { "verbose", 0, NULL, 'v' },
		{ "interleave", 0, NULL, 'i' }, { "policy", 1, NULL, 'P' },
		{ NULL, 0, NULL, 0 }
	};
	struct simdev_power *pw;
	struct simdev *cdev;
	struct simdev_config sc = { 0 };
	struct vc_cache_config cfg;
	struct worker w[MAX_WORKERS];
	pthread_t scan[2], ctl[2];
	struct vc_stats st, st_conc;
	u64 seed = (u64)time(NULL);
	bool interleave = false;
	int c, i, ret, d, policy = VC_POLICY_LRU;

	while ((c = getopt_long(argc, argv, "s:n:t:viP:", lo, NULL)) != -1) {
		switch (c) {
		case 'P':
			for (policy = 0; policy < VC_NR_POLICIES; policy++)
				if (!strcmp(optarg, vc_policy_name((enum vc_policy)policy)))
					break;
			if (policy == VC_NR_POLICIES) {
				fprintf(stderr, "stress: unknown policy '%s'\n", optarg);
				return 2;
			}
			break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': ops_per_worker = strtoull(optarg, NULL, 0); break;
		case 't':
			nworkers = atoi(optarg);
			if (nworkers < 1 || nworkers > MAX_WORKERS)
				nworkers = 4;
			break;
		case 'v': vc_posix_set_log_level(3); break;
		case 'i': interleave = true; break;
		default:
			fprintf(stderr, "usage: stress [--seed N] [--ops N] [--threads N] [--interleave] [--policy P] [-v]\n");
			return 2;
		}
	}
	printf("stress: seed %llu, %d workers x %llu ops%s, 2 scanners, 2 controllers, policy %s\n",
	       (unsigned long long)seed, nworkers,
	       (unsigned long long)ops_per_worker,
	       interleave ? " sharing every block" : "",
	       vc_policy_name((enum vc_policy)policy));
	fflush(stdout);
	vc_posix_set_log_level(0);
	pw = simdev_power_new(SIMDEV_COMPLETE_THREAD, seed);
	sc.power = pw;
	sc.volatile_cache = true;
	sc.name = "cache";
	sc.nr_sectors = CACHE_SECTORS;
	sc.seed = seed;
	cdev = simdev_new(&sc);
	for (d = 0; d < NDEV; d++) {
		sc.name = d ? "hdd1" : "hdd0";
		sc.nr_sectors = DEV_SECTORS;
		sc.seed = seed + 1 + d;
		bdev[d] = simdev_new(&sc);
	}
	vc_cache_config_default(&cfg);
	cfg.mode = VC_MODE_WB;
	cfg.policy = (u32)policy;
	ret = vc_cache_create(simdev_dev(cdev), &cfg, &cache);
	if (ret) {
		fprintf(stderr, "stress: create failed: %d\n", ret);
		return 1;
	}
	for (d = 0; d < NDEV; d++) {
		char uuid[32];

		snprintf(uuid, sizeof(uuid), "stress-%d", d);
		ret = vc_cache_attach(cache, simdev_dev(bdev[d]), uuid,
				      &dev_id[d]);
		if (ret) {
			fprintf(stderr, "stress: attach failed: %d\n", ret);
			return 1;
		}
	}
	for (i = 0; i < nworkers; i++) {
		u64 per = DEV_SECTORS / ((nworkers + NDEV - 1) / NDEV);

		w[i] = (struct worker){ .idx = i, .rng = seed * 31 + i,
					.d = i % NDEV };
		w[i].base = (u64)(i / NDEV) * per;
		w[i].nsect = per;
		if (interleave) {
			w[i].base = 0;
			w[i].nsect = DEV_SECTORS;
			w[i].m = (u32)((nworkers + NDEV - 1) / NDEV);
			w[i].j = (u32)(i / NDEV);
		}
		w[i].model = calloc(w[i].nsect, sizeof(u32));
		w[i].hist = calloc(w[i].nsect, sizeof(u32));
	}
	for (i = 0; i < 2; i++) {
		pthread_create(&scan[i], NULL, scanner_fn,
			       (void *)(uintptr_t)(seed + 100 + i));
		pthread_create(&ctl[i], NULL, control_fn,
			       (void *)(uintptr_t)(seed + 200 + i));
	}
	for (i = 0; i < nworkers; i++)
		pthread_create(&w[i].th, NULL, worker_fn, &w[i]);
	for (i = 0; i < nworkers; i++) {
		pthread_join(w[i].th, NULL);
		total_reads += w[i].reads;
		total_writes += w[i].writes;
		total_checked += w[i].checked;
	}
	__atomic_store_n(&stop_control, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		pthread_join(scan[i], NULL);
		pthread_join(ctl[i], NULL);
	}
	/*
	 * The metadata the concurrent phase left must load: clean shutdown
	 * with the dirty blocks kept, reload, every region read back.
	 */
	vc_cache_get_stats(cache, &st_conc);
	ret = vc_cache_shutdown(cache, 0);
	if (ret)
		fail("shutdown after the concurrent phase: %d", ret);
	{
		char err[160] = "";
		u8 *buf = malloc(64 * 1024);

		ret = vc_cache_load(simdev_dev(cdev), 0, &cache, err,
				    sizeof(err));
		if (ret) {
			fprintf(stderr, "stress: reload failed: %d (%s)\n", ret,
				err);
			return 1;
		}
		for (d = 0; d < NDEV; d++) {
			char uuid[32];

			snprintf(uuid, sizeof(uuid), "stress-%d", d);
			if (vc_cache_attach(cache, simdev_dev(bdev[d]), uuid,
					    &dev_id[d]))
				fail("re-attach %d failed", d);
		}
		printf("stress: reloaded: %llu dirty blocks kept (%llu at shutdown)\n",
		       (unsigned long long)dirty_blocks_now(),
		       (unsigned long long)st_conc.dirty_blocks);
		for (i = 0; i < nworkers && !failures; i++) {
			u64 s, k;

			for (s = 0; s < w[i].nsect && !failures; s += 128) {
				u64 n = w[i].nsect - s < 128 ? w[i].nsect - s :
							       128;

				if (sync_io(w[i].d, VC_OP_READ, 0, w[i].base + s,
					    (u32)(n * H_SECT), buf, 0, 1)) {
					fail("reload: read error");
					break;
				}
				for (k = 0; k < n; k++) {
					long long v;

					if (!owns(&w[i], s + k))
						continue;
					v = h_sector_version(
						buf + k * H_SECT, (u32)w[i].d,
						w[i].base + s + k);

					if (!sector_ok(w[i].model[s + k], v)) {
						fail("after reload: dev %d sector %llu: want %u got %lld",
						     w[i].d,
						     (unsigned long long)(w[i].base + s + k),
						     w[i].model[s + k], v);
						break;
					}
				}
			}
		}
		free(buf);
	}
	/* final: write everything back, the backing devices match */
	vc_cache_set_mode(cache, VC_MODE_WB);
	if (vc_cache_flush(cache, VC_DEV_ID_ALL, NULL, NULL))
		fail("final flush failed");
	vc_cache_get_stats(cache, &st);
	if (st.dirty_blocks)
		fail("%llu dirty blocks after the final flush",
		     (unsigned long long)st.dirty_blocks);
	for (i = 0; i < nworkers && !failures; i++) {
		u8 p[H_SECT];
		u64 s;

		for (s = 0; s < w[i].nsect; s++) {
			long long v;

			if (!owns(&w[i], s))
				continue;
			simdev_peek(bdev[w[i].d], w[i].base + s, p, H_SECT);
			v = h_sector_version(p, (u32)w[i].d, w[i].base + s);
			if (!sector_ok(w[i].model[s], v)) {
				char hb[8];

				fail("backing dev %d sector %llu after flush: want %u got %lld (history %s)",
				     w[i].d, (unsigned long long)(w[i].base + s),
				     w[i].model[s], v, hist_str(w[i].hist[s], hb));
				break;
			}
		}
	}
	ret = vc_cache_shutdown(cache, 0);
	if (ret)
		fail("shutdown: %d", ret);
	printf("stress: %llu reads (%llu sectors checked), %llu writes, %llu scanner reads; hits %llu misses %llu, cleanings %llu\n",
	       (unsigned long long)total_reads,
	       (unsigned long long)total_checked,
	       (unsigned long long)total_writes,
	       (unsigned long long)scanner_reads,
	       (unsigned long long)st_conc.read_hits,
	       (unsigned long long)st_conc.read_misses,
	       (unsigned long long)(st_conc.cleanings[VC_CLEAN_WATERMARK] +
				    st_conc.cleanings[VC_CLEAN_AGE] +
				    st_conc.cleanings[VC_CLEAN_IDLE] +
				    st_conc.cleanings[VC_CLEAN_FLUSH] +
				    st_conc.cleanings[VC_CLEAN_MODE]));
	for (i = 0; i < nworkers; i++) {
		free(w[i].model);
		free(w[i].hist);
	}
	for (d = 0; d < NDEV; d++)
		simdev_free(bdev[d]);
	simdev_free(cdev);
	simdev_power_free(pw);
	printf("stress: %s\n", failures ? "FAILED" : "OK");
	return failures ? 1 : 0;
}
