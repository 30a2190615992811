// SPDX-License-Identifier: GPL-2.0
/*
 * vc-torture: the power-cut campaign's writer, log replayer and checker
 * (make torture-powercut, tests/vm/torture-powercut).
 *
 *   vc-torture write DEV NBLK SEED SECONDS ACKFILE [LWNAME]
 *       Writes generations 1, 2, ... of a plan that is a pure function of
 *       SEED: generation G writes one block, or an extent of 2-16 blocks,
 *       or (one in six) again the extent of one of the 8 before it,
 *       of 4 KiB, O_DIRECT, each block saying (SEED, block, G) and filled
 *       with bytes derived from them.  Every 1-32 writes it syncs (fsync,
 *       fdatasync, or an O_DSYNC write) and, once that returned, records
 *       G as acknowledged: a line "G" appended to ACKFILE (fsync'd) and,
 *       with LWNAME, a dm-log-writes mark "aG" on that device.
 *   vc-torture write --errors FILE DEV NBLK SEED SECONDS ACKFILE
 *       The same under injected faults: a write that fails does not stop
 *       the writer, its generation is appended to FILE (it was never
 *       acknowledged: the block may hold it or what was there before); a
 *       sync that fails acknowledges nothing, and the next one that
 *       succeeds acknowledges every write completed before it.  With
 *       VC_FAULTS set (the debug kernel's fault injection, tests/vm/guest/
 *       init.sh) it marks itself for failslab's task filter
 *       (/proc/self/make-it-fail) once its files are open: its own I/O
 *       path is under test, not the shell around it.
 *   vc-torture verify DEV NBLK SEED ACKED [ERRFILE]
 *       Reads every block: each must be all zeroes (never written) or hold
 *       exactly the content of a generation that wrote it, and that
 *       generation must be no older than the newest one acknowledged
 *       (<= ACKED, and not in ERRFILE: failed writes) that wrote the
 *       block.  A block a failed write (ERRFILE) covered after that one
 *       is unspecified, as POSIX leaves it: an older generation, zeroes
 *       or EIO are counted apart, not bad (garbage or torn content still
 *       is).  Prints a summary and a "VERIFY key=value" line; exit 1 on
 *       any bad block or failed read.
 *   vc-torture plan SEED NBLK G
 *       The blocks generation G writes: "START LEN".
 *   vc-torture lastack ACKFILE
 *       The newest acknowledged generation in ACKFILE (0 if none).
 *   vc-torture points LOG
 *       The crash points of a dm-log-writes log: one line per flush or FUA
 *       entry, "P INDEX GROUPSTART ACKED", and per mark "M INDEX NAME".
 *       GROUPSTART is the first entry after the previous crash point;
 *       ACKED the newest "aG" mark before the entry.
 *   vc-torture replay LOG TARGET FROM TO [SUBSETSEED]
 *       Applies entries FROM..TO (inclusive) of the log to TARGET: writes
 *       their data, zeroes discarded ranges.  With SUBSETSEED, only a
 *       random subset of them (each with probability 1/2; seeds 1 and 2
 *       pick only the entries below, respectively at or above, sector
 *       SPLIT given as SUBSETSEED=1:SPLIT or 2:SPLIT).
 *   vc-torture mark LWNAME TEXT
 *       A dm-log-writes mark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/dm-ioctl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vc-make-it-fail.h"

#define BS 4096
#define MAGIC 0x42544356u	/* "VCTB" */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Generation g's own extent: one block, or 2-16 blocks (12%). */
static void own_plan(uint64_t seed, uint64_t g, uint64_t nblk, uint64_t *start,
		     uint64_t *len)
{
	uint64_t r = mix(seed * 0x100000001b3ull ^ g);
	uint64_t r2 = mix(r);

	*len = (r % 100) < 12 ? 2 + (r2 >> 32) % 15 : 1;
	if (*len > nblk)
		*len = nblk;
	*start = r2 % (nblk - *len + 1);
}

/*
 * The plan: generation g writes blocks [*start, *start + *len).  One in
 * six rewrites the extent of one of the 8 generations before it: a block
 * written again while its previous version may still be in flight in the
 * engine (being written back, its record not yet committed), the races
 * a uniform plan over thousands of blocks almost never makes.
 */
static void plan(uint64_t seed, uint64_t g, uint64_t nblk, uint64_t *start,
		 uint64_t *len)
{
	uint64_t r = mix(mix(seed ^ 0x7265777269746521ull) ^ g);

	if (g > 8 && r % 6 == 0)
		g -= 1 + (r >> 32) % 8;
	own_plan(seed, g, nblk, start, len);
}

struct hdr {
	uint32_t magic;
	uint32_t pad;
	uint64_t seed;
	uint64_t blk;
	uint64_t gen;
};

static void fill(void *buf, uint64_t seed, uint64_t blk, uint64_t gen)
{
	uint64_t *w = buf, x = mix(seed ^ mix(blk ^ mix(gen)));
	struct hdr *h = buf;
	size_t i;

	for (i = 0; i < BS / 8; i++) {
		x = mix(x);
		w[i] = x;
	}
	h->magic = MAGIC;
	h->pad = 0;
	h->seed = seed;
	h->blk = blk;
	h->gen = gen;
}

static int dm_message(const char *dev, const char *text)
{
	struct {
		struct dm_ioctl io;
		struct dm_target_msg msg;
		char buf[256];
	} m;
	int fd, rc;

	memset(&m, 0, sizeof(m));
	m.io.version[0] = DM_VERSION_MAJOR;
	m.io.version[1] = 0;
	m.io.version[2] = 0;
	m.io.data_size = sizeof(m);
	m.io.data_start = sizeof(struct dm_ioctl);
	snprintf(m.io.name, sizeof(m.io.name), "%s", dev);
	m.msg.sector = 0;
	snprintf(m.msg.message, sizeof(m.buf), "%s", text);
	fd = open("/dev/mapper/control", O_RDWR);
	if (fd < 0)
		return -1;
	rc = ioctl(fd, DM_TARGET_MSG, &m);
	close(fd);
	return rc;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Append "N\n" to fd and make it durable; tries 100 times when told to (an
 * allocation of the write may be failed on purpose: it writes nothing).
 */
static int append_num(int fd, uint64_t n, int tries)
{
	char line[32];
	int len = snprintf(line, sizeof(line), "%" PRIu64 "\n", n);

	while (write(fd, line, len) != len || fsync(fd))
		if (--tries <= 0)
			return -1;
	return 0;
}

static int cmd_write(int argc, char **argv, const char *errfile)
{
	const char *dev = argv[0], *ackfile = argv[4];
	const char *lw = argc > 5 ? argv[5] : NULL;
	uint64_t nblk = strtoull(argv[1], NULL, 0);
	uint64_t seed = strtoull(argv[2], NULL, 0);
	double end = now() + atof(argv[3]);
	uint64_t g = 0, acked = 0, nsync = 0, nw = 0, rnd = mix(seed + 17);
	uint64_t wfail = 0, sfail = 0;
	int fd, dfd, afd, efd = -1, until_sync;
	char *buf;

	fd = open(dev, O_RDWR | O_DIRECT);
	dfd = open(dev, O_RDWR | O_DIRECT | O_DSYNC);
	afd = open(ackfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (errfile)
		efd = open(errfile, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || dfd < 0 || afd < 0 || (errfile && efd < 0)) {
		perror("vc-torture write: open");
		return 2;
	}
	if (posix_memalign((void **)&buf, BS, 16 * BS))
		return 2;
	if (efd >= 0)
		vc_make_it_fail_init("vc-torture write");
	until_sync = 1 + mix(rnd++) % 32;
	while (now() < end) {
		uint64_t s, l, i;
		int dsync, rc = 0;
		ssize_t n;

		g++;
		plan(seed, g, nblk, &s, &l);
		for (i = 0; i < l; i++)
			fill(buf + i * BS, seed, s + i, g);
		dsync = --until_sync == 0 && mix(rnd++) % 4 == 0;
		errno = EIO;	/* a short write */
		vc_make_it_fail(1);
		n = pwrite(dsync ? dfd : fd, buf, l * BS, s * BS);
		vc_make_it_fail(0);
		if (n != (ssize_t)(l * BS)) {
			if (efd < 0) {
				fprintf(stderr, "vc-torture write: gen %" PRIu64 " at block %"
					PRIu64 ": %s\n", g, s, strerror(errno));
				return 1;
			}
			if (wfail++ < 3)
				printf("#  writer: gen %" PRIu64 " (%" PRIu64 "+%" PRIu64
				       " blocks) failed: %s\n", g, s, l, strerror(errno));
			if (append_num(efd, g, 100)) {
				perror("vc-torture write: error file");
				return 2;
			}
			/* an O_DSYNC write that failed acknowledges nothing */
			if (until_sync <= 0)
				until_sync = 1;
			continue;
		}
		nw++;
		if (until_sync > 0)
			continue;
		if (!dsync) {
			vc_make_it_fail(1);
			rc = (mix(rnd++) & 1) ? fsync(fd) : fdatasync(fd);
			vc_make_it_fail(0);
		}
		if (!dsync && rc) {
			if (efd < 0) {
				perror("vc-torture write: fsync");
				return 1;
			}
			if (sfail++ < 3)
				printf("#  writer: a sync after gen %" PRIu64 " failed: %s\n",
				       g, strerror(errno));
			until_sync = 1 + mix(rnd++) % 32;
			continue;
		}
		/* every write issued so far has completed: all durable */
		acked = g;
		nsync++;
		{
			char line[64];

			if (append_num(afd, acked, efd >= 0 ? 100 : 1)) {
				perror("vc-torture write: ack file");
				return 2;
			}
			if (lw) {
				snprintf(line, sizeof(line), "mark a%" PRIu64, acked);
				if (dm_message(lw, line)) {
					perror("vc-torture write: mark");
					return 2;
				}
			}
		}
		until_sync = 1 + mix(rnd++) % 32;
	}
	printf("# writer: %" PRIu64 " writes, %" PRIu64 " syncs, generation %" PRIu64
	       " acknowledged", nw, nsync, acked);
	if (efd >= 0)
		printf("; %" PRIu64 " writes and %" PRIu64 " syncs failed", wfail, sfail);
	printf("\n");
	return 0;
}

/*
 * Block @blk of @p (read from the device) against the plan: NULL, or why
 * it is bad.  @last is the newest acknowledged generation that wrote it.
 */
static const char *judge(const char *p, char *want, uint64_t seed, uint64_t blk,
			 uint64_t nblk, uint64_t last, uint64_t *exact, uint64_t *newer,
			 uint64_t *zero, bool *older)
{
	const struct hdr *h = (const struct hdr *)p;
	uint64_t s, l;

	*older = false;
	if (h->magic == 0 && !memcmp(p, p + 1, BS - 1)) {
		if (!last) {
			(*zero)++;
			return NULL;
		}
		*older = true;
		return "zeroes, but an acknowledged write was there";
	}
	if (h->magic != MAGIC || h->seed != seed || h->blk != blk)
		return "not a block of this run (garbage, misplaced or torn)";
	plan(seed, h->gen, nblk, &s, &l);
	fill(want, seed, blk, h->gen);
	if (h->gen == 0 || blk < s || blk >= s + l)
		return "a generation that never wrote this block";
	if (memcmp(p, want, BS))
		return "torn or corrupt content";
	if (h->gen < last) {
		*older = true;
		return "older than an acknowledged write";
	}
	if (h->gen == last)
		(*exact)++;
	else
		(*newer)++;
	return NULL;
}

static int cmd_verify(int argc, char **argv)
{
	const char *dev = argv[0];
	uint64_t nblk = strtoull(argv[1], NULL, 0);
	uint64_t seed = strtoull(argv[2], NULL, 0);
	uint64_t acked = strtoull(argv[3], NULL, 0);
	uint64_t *last, g, b, zero = 0, newer = 0, exact = 0, bad = 0, nfailed = 0;
	uint64_t *fgen = NULL, nf = 0, unspec = 0, unspec_eio = 0;
	size_t chunk = 256 * BS;
	char *buf, *want, *failed, *after;
	int fd;

	last = calloc(nblk, sizeof(*last));
	failed = calloc(acked + 1, 1);
	after = calloc(nblk, 1);
	fd = open(dev, O_RDONLY | O_DIRECT);
	if (!last || !failed || !after || fd < 0 ||
	    posix_memalign((void **)&buf, BS, chunk) ||
	    posix_memalign((void **)&want, BS, BS)) {
		perror("vc-torture verify");
		return 2;
	}
	if (argc > 4) {
		/* failed writes: never acknowledged, whatever followed them */
		FILE *f = fopen(argv[4], "r");
		size_t cap = 0;

		if (!f) {
			perror(argv[4]);
			return 2;
		}
		while (fscanf(f, "%" SCNu64, &g) == 1) {
			if (nf == cap) {
				cap = cap ? 2 * cap : 1024;
				fgen = realloc(fgen, cap * sizeof(*fgen));
				if (!fgen) {
					perror("vc-torture verify");
					return 2;
				}
			}
			fgen[nf++] = g;
			if (g <= acked && !failed[g]) {
				failed[g] = 1;
				nfailed++;
			}
		}
		fclose(f);
	}
	for (g = 1; g <= acked; g++) {
		uint64_t s, l, i;

		if (failed[g])
			continue;
		plan(seed, g, nblk, &s, &l);
		for (i = 0; i < l; i++)
			last[s + i] = g;
	}
	/*
	 * A write that failed after the block's last acknowledged one leaves
	 * the block unspecified (POSIX: a failed write's range holds old,
	 * new or neither): it may read an older generation, zeroes, or EIO
	 * (the engine's lost marker when the write's cache copy and its
	 * write home both failed).  Counted apart, never garbage or torn.
	 */
	for (g = 0; g < nf; g++) {
		uint64_t s, l, i;

		plan(seed, fgen[g], nblk, &s, &l);
		for (i = 0; i < l; i++)
			if (fgen[g] > last[s + i])
				after[s + i] = 1;
	}
	for (b = 0; b < nblk; b += chunk / BS) {
		uint64_t n = nblk - b < chunk / BS ? nblk - b : chunk / BS, i;
		ssize_t got = pread(fd, buf, n * BS, b * BS);
		bool one = false;

		if (got < 0 && errno == EIO) {
			one = true;	/* block by block: which ones fail */
		} else if (got != (ssize_t)(n * BS)) {
			printf("not ok - read of blocks %" PRIu64 "+%" PRIu64 ": %s\n", b, n,
			       got < 0 ? strerror(errno) : "short");
			return 1;
		}
		for (i = 0; i < n; i++) {
			char *p = buf + i * BS;
			uint64_t blk = b + i;
			const char *why;
			bool older;

			if (one && pread(fd, p, BS, blk * BS) != BS) {
				if (errno == EIO && after[blk]) {
					unspec_eio++;
					continue;
				}
				why = "unreadable";
				older = false;
			} else {
				why = judge(p, want, seed, blk, nblk, last[blk], &exact,
					    &newer, &zero, &older);
			}
			if (why && older && after[blk]) {
				unspec++;
				continue;
			}
			if (why) {
				const struct hdr *h = (const struct hdr *)p;

				if (bad < 10)
					printf("#  block %" PRIu64 ": %s (holds gen %" PRIu64
					       ", acknowledged gen %" PRIu64 "%s)\n", blk, why,
					       h->magic == MAGIC ? h->gen : 0, last[blk],
					       after[blk] ? ", a failed write after it" : "");
				bad++;
			}
		}
	}
	printf("# verify: %" PRIu64 " blocks: %" PRIu64 " acknowledged, %" PRIu64
	       " newer (unacknowledged), %" PRIu64 " never written, %" PRIu64
	       " unspecified after a failed write (%" PRIu64 " older, %" PRIu64 " EIO), %" PRIu64
	       " bad (acked gen %" PRIu64 ", %" PRIu64 " failed writes before it)\n",
	       nblk, exact, newer, zero, unspec + unspec_eio, unspec, unspec_eio, bad,
	       acked, nfailed);
	printf("VERIFY blocks=%" PRIu64 " exact=%" PRIu64 " newer=%" PRIu64 " zero=%" PRIu64
	       " unspecified_older=%" PRIu64 " unspecified_eio=%" PRIu64 " bad=%" PRIu64 "\n",
	       nblk, exact, newer, zero, unspec, unspec_eio, bad);
	return bad ? 1 : 0;
}

static int cmd_lastack(char **argv)
{
	FILE *f = fopen(argv[0], "r");
	uint64_t g, last = 0;

	if (f) {
		while (fscanf(f, "%" SCNu64, &g) == 1)
			if (g > last)
				last = g;
		fclose(f);
	}
	printf("%" PRIu64 "\n", last);
	return 0;
}

/* dm-log-writes format (drivers/md/dm-log-writes.c) */
#define LOG_FLUSH 1
#define LOG_FUA 2
#define LOG_DISCARD 4
#define LOG_MARK 8
#define LOG_MAGIC 0x6a736677736872ull

struct lw_super {
	uint64_t magic, version, nr_entries;
	uint32_t sectorsize;
};

struct lw_entry {
	uint64_t sector, nr_sectors, flags, data_len;
};

struct lw {
	int fd;
	uint64_t nr, idx, pos;	/* next entry: index, byte offset */
	uint32_t ss;
	struct lw_entry e;	/* the current one */
	uint64_t data;		/* its data's offset */
	char mark[256];
};

static int lw_open(struct lw *l, const char *path)
{
	struct lw_super s;

	l->fd = open(path, O_RDONLY);
	if (l->fd < 0 || pread(l->fd, &s, sizeof(s), 0) != sizeof(s) ||
	    s.magic != LOG_MAGIC || !s.sectorsize) {
		fprintf(stderr, "vc-torture: %s: not a dm-log-writes log\n", path);
		return -1;
	}
	l->nr = s.nr_entries;
	l->ss = s.sectorsize;
	l->idx = 0;
	l->pos = s.sectorsize;
	return 0;
}

/* Read the next entry's header; 0 at the end. */
static int lw_next(struct lw *l)
{
	char sec[4096];

	if (l->idx >= l->nr)
		return 0;
	if (pread(l->fd, sec, l->ss, l->pos) != (ssize_t)l->ss)
		return -1;
	memcpy(&l->e, sec, sizeof(l->e));
	l->mark[0] = 0;
	if (l->e.flags & LOG_MARK) {
		size_t n = l->e.data_len < 255 ? l->e.data_len : 255;

		memcpy(l->mark, sec + sizeof(l->e), n);
		l->mark[n] = 0;
	}
	l->data = l->pos + l->ss;
	l->pos = l->data;
	if (!(l->e.flags & LOG_DISCARD) && !(l->e.flags & LOG_MARK))
		l->pos += l->e.nr_sectors * l->ss;
	l->idx++;
	return 1;
}

static int cmd_points(char **argv)
{
	struct lw l;
	uint64_t acked = 0, gstart = 0, writes = 0;
	int r;

	if (lw_open(&l, argv[0]))
		return 2;
	while ((r = lw_next(&l)) > 0) {
		uint64_t i = l.idx - 1;

		if (l.e.flags & LOG_MARK) {
			printf("M %" PRIu64 " %s\n", i, l.mark);
			if (l.mark[0] == 'a')
				acked = strtoull(l.mark + 1, NULL, 10);
			continue;
		}
		if (l.e.nr_sectors)
			writes++;
		if (l.e.flags & (LOG_FLUSH | LOG_FUA)) {
			printf("P %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, gstart, acked);
			gstart = i + 1;
		}
	}
	fprintf(stderr, "# log: %" PRIu64 " entries, %" PRIu64 " writes\n", l.nr, writes);
	return r < 0 ? 2 : 0;
}

static int cmd_replay(int argc, char **argv)
{
	struct lw l;
	uint64_t from = strtoull(argv[2], NULL, 0), to = strtoull(argv[3], NULL, 0);
	uint64_t sub = 0, split = 0, rnd = 0, applied = 0, skipped = 0;
	uint64_t next_idx = 0, next_pos = 0, pos_before = 0;
	const char *posfile;
	char *buf = NULL;
	size_t bufsz = 0;
	int t, r;

	if (argc > 4) {
		sub = strtoull(argv[4], NULL, 0);
		if (strchr(argv[4], ':'))
			split = strtoull(strchr(argv[4], ':') + 1, NULL, 0);
		rnd = mix(sub);
	}
	if (lw_open(&l, argv[0]))
		return 2;
	/*
	 * $VCT_POSFILE: "INDEX OFFSET" of an entry reached before, to start
	 * there instead of walking the log from its first entry; a prefix
	 * replay (no subset) leaves there the entry after TO.
	 */
	posfile = getenv("VCT_POSFILE");
	if (posfile) {
		FILE *pf = fopen(posfile, "r");
		uint64_t pi, pp;

		if (pf && fscanf(pf, "%" SCNu64 " %" SCNu64, &pi, &pp) == 2 && pi <= from) {
			l.idx = pi;
			l.pos = pp;
		}
		if (pf)
			fclose(pf);
	}
	t = open(argv[1], O_WRONLY);
	if (t < 0) {
		perror(argv[1]);
		return 2;
	}
	while (pos_before = l.pos, (r = lw_next(&l)) > 0) {
		uint64_t i = l.idx - 1;
		size_t n = l.e.nr_sectors * l.ss;

		if (i < from)
			continue;
		if (i > to) {
			next_idx = i;
			next_pos = pos_before;
			break;
		}
		if (!n || (l.e.flags & LOG_MARK))
			continue;
		if (sub) {
			int take;

			if (split && sub == 1)
				take = l.e.sector * l.ss < split * 512;
			else if (split && sub == 2)
				take = l.e.sector * l.ss >= split * 512;
			else
				take = (rnd = mix(rnd)) & 1;
			if (!take) {
				skipped++;
				continue;
			}
		}
		if (n > bufsz) {
			free(buf);
			buf = malloc(n);
			bufsz = n;
		}
		if (l.e.flags & LOG_DISCARD)
			memset(buf, 0, n);
		else if (pread(l.fd, buf, n, l.data) != (ssize_t)n)
			return 2;
		if (pwrite(t, buf, n, l.e.sector * l.ss) != (ssize_t)n) {
			perror("vc-torture replay: write");
			return 2;
		}
		applied++;
	}
	if (fsync(t))
		return 2;
	if (posfile && !sub && next_pos) {
		FILE *pf = fopen(posfile, "w");

		if (pf) {
			fprintf(pf, "%" PRIu64 " %" PRIu64 "\n", next_idx, next_pos);
			fclose(pf);
		}
	}
	printf("# replay %" PRIu64 "..%" PRIu64 ": %" PRIu64 " applied, %" PRIu64 " left out\n",
	       from, to, applied, skipped);
	return r < 0 ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 9 && !strcmp(argv[1], "write") && !strcmp(argv[2], "--errors"))
		return cmd_write(argc - 4, argv + 4, argv[3]);
	if (argc >= 7 && !strcmp(argv[1], "write"))
		return cmd_write(argc - 2, argv + 2, NULL);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "verify"))
		return cmd_verify(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "plan")) {
		uint64_t st, l;

		plan(strtoull(argv[2], NULL, 0), strtoull(argv[4], NULL, 0),
		     strtoull(argv[3], NULL, 0), &st, &l);
		printf("%" PRIu64 " %" PRIu64 "\n", st, l);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "lastack"))
		return cmd_lastack(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "points"))
		return cmd_points(argv + 2);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "replay"))
		return cmd_replay(argc - 2, argv + 2);
	if (argc == 4 && !strcmp(argv[1], "mark")) {
		char text[240];

		snprintf(text, sizeof(text), "mark %s", argv[3]);
		return dm_message(argv[2], text) ? (perror("mark"), 1) : 0;
	}
	fprintf(stderr, "usage: see the comment at the top of vc-torture.c\n");
	return 2;
}
