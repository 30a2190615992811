// SPDX-License-Identifier: GPL-2.0
/*
 * firmware-sim: media file, volatile write buffer and flash timing model.
 *
 * The media is a host file: a 4 KiB header (struct media_hdr) followed by
 * capacity * lba_size bytes of data.  Logical block n lives at
 * MEDIA_DATA_OFF + n * lba_size.  Because the data area is page aligned and a
 * block is 512 or 4096 bytes, no block ever spans two host pages, so a
 * pwrite() interrupted by SIGKILL (our power cut) never tears a block.
 *
 * Write buffer: a hash of logical block -> buffered copy.  A write completes
 * once its blocks are in the buffer.  Destage (FLUSH, background when the
 * buffer passes its high-water mark, clean shutdown) writes every buffered
 * block to the file in LBA order and then fdatasync()s it.  Only one destage
 * (or FUA write, write-zeroes or deallocate, which go to the media directly)
 * runs at a time (destage_lock), so an older copy can never land on the media
 * after a newer one.  Entries being destaged are "pinned": a write that
 * supersedes a pinned entry puts a new entry in the hash and leaves the old
 * one to the destager ("orphan").  Readers always see the newest copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fw.h"

struct fw_counters fwc;

#define WB_PINNED	1u
#define WB_ORPHAN	2u

struct wb_ent {
	uint64_t lba;
	struct wb_ent *next;
	uint32_t flags;
	uint8_t data[];
};

/* ------------------------------------------------------------------ crc32 */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32_buf(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint32_t c = 0xffffffffu;

	if (!crc_table[1])
		crc_init();
	while (n--)
		c = crc_table[(c ^ *b++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static uint32_t hdr_crc(const struct media_hdr *h)
{
	return crc32_buf(h, offsetof(struct media_hdr, crc));
}

/* ------------------------------------------------------------- helpers */
static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0) {		/* beyond EOF: cannot happen, size checked */
			memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

static void pad_copy(char *dst, size_t n, const char *src)
{
	size_t l = src ? strlen(src) : 0;

	if (l > n)
		l = n;
	memset(dst, ' ', n);
	if (l)
		memcpy(dst, src, l);
}

static off_t blk_off(struct media *m, uint64_t lba)
{
	return (off_t)MEDIA_DATA_OFF + (off_t)(lba << m->lba_shift);
}

/* ------------------------------------------------------------- format */
int media_format(const char *path, uint64_t capacity_bytes, uint32_t lba_size,
		 const char *serial, int force, char *err, size_t errlen)
{
	struct media_hdr *h;
	char sbuf[21];
	int fd, rc;

	if (lba_size != 512 && lba_size != 4096) {
		snprintf(err, errlen, "--lba-size must be 512 or 4096, not %u",
			 lba_size);
		return -1;
	}
	if (!capacity_bytes || capacity_bytes % lba_size) {
		snprintf(err, errlen,
			 "--capacity must be a non-zero multiple of the LBA size (%u)",
			 lba_size);
		return -1;
	}
	if (capacity_bytes > (1ULL << 50)) {
		snprintf(err, errlen, "--capacity too large (max 1 PiB)");
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | (force ? 0 : O_EXCL), 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			snprintf(err, errlen,
				 "%s exists; use --force to overwrite it", path);
		else
			snprintf(err, errlen, "cannot create %s: %s", path,
				 strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		snprintf(err, errlen, "%s is in use by a running firmware-sim",
			 path);
		close(fd);
		return -1;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return -1;
	}
	memcpy(h->magic, MEDIA_MAGIC, 8);
	h->version = MEDIA_VERSION;
	h->hdr_size = MEDIA_HDR_SIZE;
	h->capacity = capacity_bytes / lba_size;
	h->lba_size = lba_size;
	h->data_off = MEDIA_DATA_OFF;
	h->created = (uint64_t)time(NULL);
	if (!serial) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(sbuf, sizeof(sbuf), "VC%08lX%04X",
			 (unsigned long)ts.tv_sec & 0xffffffffUL,
			 (unsigned)(ts.tv_nsec / 1000 ^ getpid()) & 0xffff);
		serial = sbuf;
	}
	pad_copy(h->serial, sizeof(h->serial), serial);
	pad_copy(h->model, sizeof(h->model), FW_MODEL);
	h->clean = 1;
	h->crc = hdr_crc(h);
	rc = ftruncate(fd, 0);
	if (!rc)
		rc = ftruncate(fd, MEDIA_DATA_OFF + capacity_bytes);
	if (rc) {
		snprintf(err, errlen, "cannot size %s: %s", path, strerror(errno));
		goto fail;
	}
	rc = pwrite_all(fd, h, sizeof(*h), 0);
	if (!rc && fdatasync(fd))
		rc = -errno;
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		goto fail;
	}
	free(h);
	close(fd);
	return 0;
fail:
	free(h);
	close(fd);
	return -1;
}

/* ------------------------------------------------------------- header */
static void counters_to_hdr(struct media_hdr *h)
{
	h->power_cycles = fwc.power_cycles;
	h->unsafe_shutdowns = fwc.unsafe_shutdowns;
	h->media_errors = fwc.media_errors;
	h->bytes_read = fwc.bytes_read;
	h->bytes_written = fwc.bytes_written;
	h->read_cmds = fwc.read_cmds;
	h->write_cmds = fwc.write_cmds;
	h->flush_cmds = fwc.flush_cmds;
	h->flash_bytes_programmed = fwc.flash_bytes_programmed;
	h->aborts = fwc.aborts;
}

int media_write_hdr(struct media *m, int sync)
{
	int rc;

	pthread_mutex_lock(&m->hdr_lock);
	counters_to_hdr(&m->hdr);
	m->hdr.crc = hdr_crc(&m->hdr);
	rc = pwrite_all(m->fd, &m->hdr, sizeof(m->hdr), 0);
	if (!rc && sync && fdatasync(m->fd))
		rc = -errno;
	pthread_mutex_unlock(&m->hdr_lock);
	if (rc)
		fw_log("media: cannot write header of %s: %s", m->path,
		       strerror(-rc));
	return rc;
}

/*
 * Buffered data was added: the media may no longer say "clean".  Under
 * destage_lock, so it cannot interleave with media_sync() marking it clean.
 * Caller must not hold destage_lock.
 */
void media_mark_dirty(struct media *m)
{
	if (atomic_load(&m->dirty_marked))
		return;
	pthread_mutex_lock(&m->destage_lock);
	if (!atomic_load(&m->dirty_marked)) {
		pthread_mutex_lock(&m->hdr_lock);
		m->hdr.clean = 0;
		pthread_mutex_unlock(&m->hdr_lock);
		media_write_hdr(m, 1);
		atomic_store(&m->dirty_marked, 1);
	}
	pthread_mutex_unlock(&m->destage_lock);
}

int media_open(struct media *m, const char *path, size_t wbuf_bytes,
	       char *err, size_t errlen)
{
	struct stat st;
	uint64_t need;
	int fd;

	memset(m, 0, sizeof(*m));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(err, errlen,
				 "media file %s does not exist (create it with: firmware-sim format --media %s --capacity SIZE)",
				 path, path);
		else
			snprintf(err, errlen, "cannot open media file %s: %s",
				 path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "media file %s is not a regular file", path);
		goto fail;
	}
	if ((size_t)st.st_size < sizeof(m->hdr)) {
		snprintf(err, errlen,
			 "media file %s is too short (%lld bytes) to be a vcache media file",
			 path, (long long)st.st_size);
		goto fail;
	}
	if (pread_all(fd, &m->hdr, sizeof(m->hdr), 0)) {
		snprintf(err, errlen, "cannot read media file %s: %s", path,
			 strerror(errno));
		goto fail;
	}
	if (memcmp(m->hdr.magic, MEDIA_MAGIC, 8)) {
		snprintf(err, errlen,
			 "%s is not a vcache media file (bad magic)", path);
		goto fail;
	}
	if (m->hdr.version != MEDIA_VERSION ||
	    m->hdr.hdr_size != MEDIA_HDR_SIZE) {
		snprintf(err, errlen,
			 "media file %s has unsupported version %u (this firmware reads version %u)",
			 path, m->hdr.version, MEDIA_VERSION);
		goto fail;
	}
	if (m->hdr.crc != hdr_crc(&m->hdr)) {
		snprintf(err, errlen,
			 "media file %s is corrupt (header checksum mismatch)",
			 path);
		goto fail;
	}
	if ((m->hdr.lba_size != 512 && m->hdr.lba_size != 4096) ||
	    m->hdr.data_off != MEDIA_DATA_OFF || !m->hdr.capacity ||
	    m->hdr.capacity > (1ULL << 50) / m->hdr.lba_size) {
		snprintf(err, errlen,
			 "media file %s is corrupt (bad geometry in header)",
			 path);
		goto fail;
	}
	need = MEDIA_DATA_OFF + m->hdr.capacity * m->hdr.lba_size;
	if ((uint64_t)st.st_size < need) {
		snprintf(err, errlen,
			 "media file %s is short: %lld bytes, its header needs %" PRIu64,
			 path, (long long)st.st_size, need);
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		snprintf(err, errlen,
			 "media file %s is in use by another firmware-sim", path);
		goto fail;
	}
	m->fd = fd;
	m->path = strdup(path);
	m->capacity = m->hdr.capacity;
	m->lba_size = m->hdr.lba_size;
	m->lba_shift = m->lba_size == 512 ? 9 : 12;
	pthread_mutex_init(&m->hdr_lock, NULL);
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->destage_lock, NULL);
	pthread_mutex_init(&m->tm_lock, NULL);
	pthread_cond_init(&m->space, NULL);
	pthread_cond_init(&m->kick, NULL);
	m->bytes_max = wbuf_bytes;
	m->nbuckets = 1024;
	while (m->nbuckets < wbuf_bytes / m->lba_size &&
	       m->nbuckets < (1u << 22))
		m->nbuckets <<= 1;
	m->hash = calloc(m->nbuckets, sizeof(*m->hash));
	if (!m->hash) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	m->rng = 0x9e3779b9u ^ (uint32_t)getpid();

	fwc.power_cycles = m->hdr.power_cycles + 1;
	fwc.unsafe_shutdowns = m->hdr.unsafe_shutdowns + !m->hdr.clean;
	fwc.media_errors = m->hdr.media_errors;
	fwc.bytes_read = m->hdr.bytes_read;
	fwc.bytes_written = m->hdr.bytes_written;
	fwc.read_cmds = m->hdr.read_cmds;
	fwc.write_cmds = m->hdr.write_cmds;
	fwc.flush_cmds = m->hdr.flush_cmds;
	fwc.flash_bytes_programmed = m->hdr.flash_bytes_programmed;
	fwc.aborts = m->hdr.aborts;
	fw_log("media: %s: %" PRIu64 " blocks of %u bytes, serial %.20s, %s; power cycle %" PRIu64 ", unsafe shutdowns %" PRIu64,
	       path, m->capacity, m->lba_size, m->hdr.serial,
	       m->hdr.clean ? "last shutdown clean" :
			      "last shutdown UNSAFE (power lost)",
	       (uint64_t)fwc.power_cycles, (uint64_t)fwc.unsafe_shutdowns);
	m->hdr.clean = 0;
	atomic_store(&m->dirty_marked, 1);
	if (media_write_hdr(m, 1)) {
		snprintf(err, errlen, "cannot write media file %s", path);
		return -1;
	}
	return 0;
fail:
	close(fd);
	return -1;
}

/* -------------------------------------------------------------- timing */
void timing_defaults(struct timing *t, int nodelay)
{
	t->nodelay = nodelay;
	t->channels = 8;
	t->dies = 4;
	t->stripe = 64 * 1024;
	t->page = 16 * 1024;
	t->t_read_min = 50000;
	t->t_read_max = 80000;
	t->t_prog_min = 200000;
	t->t_prog_max = 500000;
	t->t_xfer_kib = 1250;		/* 800 MB/s per channel */
	t->t_wbuf = 5000;
	t->t_wbuf_kib = 250;		/* 4 GB/s into controller DRAM */
}

static unsigned rnd_range(struct media *m, unsigned lo, unsigned hi)
{
	uint32_t x = m->rng;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	m->rng = x;
	return hi > lo ? lo + x % (hi - lo + 1) : lo;
}

static int timing_init(struct media *m)
{
	unsigned n = m->tm.channels * m->tm.dies;

	m->die_busy = calloc(n ? n : 1, sizeof(*m->die_busy));
	return m->die_busy ? 0 : -1;
}

/*
 * Reserve the dies a byte range of the media touches for one operation each
 * (read or program) and return when the last one finishes.
 */
static uint64_t timing_ops(struct media *m, uint64_t off, uint64_t len,
			   int prog)
{
	struct timing *t = &m->tm;
	unsigned ndies = t->channels * t->dies;
	uint64_t now = now_ns(), end = now;

	if (t->nodelay || !len)
		return now;
	pthread_mutex_lock(&m->tm_lock);
	while (len) {
		uint64_t in = off % t->stripe, chunk = t->stripe - in;
		unsigned die = (off / t->stripe) % ndies;
		uint64_t start, e, cost;

		if (chunk > len)
			chunk = len;
		cost = (chunk + 1023) / 1024 * t->t_xfer_kib;
		if (prog)
			cost += (chunk + t->page - 1) / t->page *
				rnd_range(m, t->t_prog_min, t->t_prog_max);
		else
			cost += rnd_range(m, t->t_read_min, t->t_read_max);
		start = m->die_busy[die] > now ? m->die_busy[die] : now;
		e = start + cost;
		m->die_busy[die] = e;
		if (e > end)
			end = e;
		off += chunk;
		len -= chunk;
	}
	pthread_mutex_unlock(&m->tm_lock);
	return end;
}

uint64_t timing_read(struct media *m, uint64_t slba, uint32_t nlb)
{
	return timing_ops(m, slba << m->lba_shift, (uint64_t)nlb << m->lba_shift,
			  0);
}

uint64_t timing_wbuf(struct media *m, uint32_t bytes)
{
	if (m->tm.nodelay)
		return now_ns();
	return now_ns() + m->tm.t_wbuf +
	       (uint64_t)(bytes + 1023) / 1024 * m->tm.t_wbuf_kib;
}

/* ------------------------------------------------------------ buffer */
static size_t hslot(struct media *m, uint64_t lba)
{
	return (size_t)((lba * 0x9e3779b97f4a7c15ULL) >> 20) & (m->nbuckets - 1);
}

static struct wb_ent *wb_lookup(struct media *m, uint64_t lba)
{
	struct wb_ent *e;

	for (e = m->hash[hslot(m, lba)]; e; e = e->next)
		if (e->lba == lba)
			return e;
	return NULL;
}

static void wb_unlink(struct media *m, struct wb_ent *e)
{
	struct wb_ent **pp = &m->hash[hslot(m, e->lba)];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	e->next = NULL;
	m->nents--;
}

static void wb_free(struct media *m, struct wb_ent *e)
{
	m->bytes_used -= m->lba_size;
	free(e);
}

/* Drop buffered copies of [slba, slba+nlb): the caller owns destage_lock. */
static void wb_drop_range(struct media *m, uint64_t slba, uint64_t nlb)
{
	if (!m->nents)
		return;
	if (nlb > m->nbuckets) {
		for (size_t i = 0; i < m->nbuckets; i++) {
			struct wb_ent **pp = &m->hash[i];

			while (*pp) {
				struct wb_ent *e = *pp;

				if (e->lba >= slba && e->lba < slba + nlb) {
					*pp = e->next;
					m->nents--;
					wb_free(m, e);
				} else {
					pp = &e->next;
				}
			}
		}
	} else {
		for (uint64_t l = slba; l < slba + nlb && m->nents; l++) {
			struct wb_ent *e = wb_lookup(m, l);

			if (e) {
				wb_unlink(m, e);
				wb_free(m, e);
			}
		}
	}
	pthread_cond_broadcast(&m->space);
}

size_t media_wbuf_bytes(struct media *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->bytes_used;
	pthread_mutex_unlock(&m->lock);
	return n;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct wb_ent *x = *(struct wb_ent *const *)a;
	const struct wb_ent *y = *(struct wb_ent *const *)b;

	return x->lba < y->lba ? -1 : x->lba > y->lba;
}

static void io_failed(struct media *m, int rc, const char *what)
{
	if (!atomic_exchange(&m->io_failed, -rc))
		fw_log("media: %s failed on %s: %s; the card goes fatal",
		       what, m->path, strerror(-rc));
	/* writers waiting for buffer space must not wait for ever */
	pthread_mutex_lock(&m->lock);
	pthread_cond_broadcast(&m->space);
	pthread_mutex_unlock(&m->lock);
}

/*
 * Write every buffered block to the media.  Caller holds destage_lock.
 * Returns 0 or -errno; *done_ns is when the flash would finish programming.
 */
static int destage_locked(struct media *m, int sync, uint64_t *done_ns)
{
	struct wb_ent **v = NULL;
	size_t n = 0, i, j;
	uint64_t end = now_ns(), programmed = 0;
	int rc = 0;

	pthread_mutex_lock(&m->lock);
	if (m->nents) {
		v = malloc(m->nents * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&m->lock);
			return -ENOMEM;
		}
		for (i = 0; i < m->nbuckets; i++)
			for (struct wb_ent *e = m->hash[i]; e; e = e->next) {
				e->flags |= WB_PINNED;
				v[n++] = e;
			}
	}
	pthread_mutex_unlock(&m->lock);

	if (n) {
		struct iovec iov[IOV_MAX];

		qsort(v, n, sizeof(*v), ent_cmp);
		for (i = 0; i < n && !rc; i = j) {
			int cnt = 0;
			ssize_t w, want;
			uint64_t t;

			for (j = i; j < n && cnt < IOV_MAX &&
			     v[j]->lba == v[i]->lba + (j - i); j++, cnt++) {
				iov[cnt].iov_base = v[j]->data;
				iov[cnt].iov_len = m->lba_size;
			}
			want = (ssize_t)cnt * m->lba_size;
			do {
				w = pwritev(m->fd, iov, cnt, blk_off(m, v[i]->lba));
			} while (w < 0 && errno == EINTR);
			if (w != want) {
				/* short write: fall back to a plain loop */
				rc = 0;
				for (int k = 0; k < cnt && !rc; k++)
					rc = pwrite_all(m->fd, iov[k].iov_base,
							m->lba_size,
							blk_off(m, v[i]->lba + k));
				if (rc)
					break;
			}
			t = timing_ops(m, (uint64_t)v[i]->lba << m->lba_shift,
				       want, 1);
			if (t > end)
				end = t;
			programmed += want;
		}
		if (rc)
			io_failed(m, rc, "destage write");
	}
	if (!rc && sync && fdatasync(m->fd)) {
		rc = -errno;
		io_failed(m, rc, "fdatasync");
	}
	if (n) {
		pthread_mutex_lock(&m->lock);
		for (i = 0; i < n; i++) {
			struct wb_ent *e = v[i];

			if (e->flags & WB_ORPHAN) {
				wb_free(m, e);
			} else if (!rc) {
				wb_unlink(m, e);
				wb_free(m, e);
			} else {
				e->flags &= ~WB_PINNED;
			}
		}
		pthread_cond_broadcast(&m->space);
		pthread_mutex_unlock(&m->lock);
		free(v);
		fwc.flash_bytes_programmed += programmed;
		fwc.destages++;
	}
	if (done_ns)
		*done_ns = end;
	return rc;
}

static void *destager(void *arg)
{
	struct media *m = arg;

	for (;;) {
		uint64_t done, now;

		pthread_mutex_lock(&m->lock);
		while (!m->stop && m->bytes_used < m->bytes_max / 2)
			pthread_cond_wait(&m->kick, &m->lock);
		if (m->stop) {
			pthread_mutex_unlock(&m->lock);
			return NULL;
		}
		pthread_mutex_unlock(&m->lock);
		pthread_mutex_lock(&m->destage_lock);
		if (destage_locked(m, 0, &done)) {
			pthread_mutex_unlock(&m->destage_lock);
			/* fatal; stop trying until someone clears the buffer */
			pthread_mutex_lock(&m->lock);
			while (!m->stop && m->io_failed)
				pthread_cond_wait(&m->kick, &m->lock);
			pthread_mutex_unlock(&m->lock);
			continue;
		}
		pthread_mutex_unlock(&m->destage_lock);
		now = now_ns();
		if (done > now) {
			/* the dies are programming: model the bandwidth */
			struct timespec ts = {
				.tv_sec = (done - now) / 1000000000ULL,
				.tv_nsec = (done - now) % 1000000000ULL,
			};
			nanosleep(&ts, NULL);
		}
	}
}

void media_start(struct media *m)
{
	if (timing_init(m)) {
		fw_log("media: out of memory");
		exit(1);
	}
	if (pthread_create(&m->destager, NULL, destager, m)) {
		fw_log("media: cannot start destage thread");
		exit(1);
	}
}

/*
 * Read blocks: buffered copies from the write buffer, the rest from the
 * media.  *done_ns: when the flash would deliver the data.
 */
int media_read(struct media *m, uint64_t slba, uint32_t nlb, uint8_t *buf,
	       uint64_t *done_ns)
{
	uint8_t stack_have[2048], *have = stack_have;
	uint32_t i, j, missing = 0;
	uint64_t end = timing_wbuf(m, nlb << m->lba_shift);
	int rc = 0;

	if (nlb > sizeof(stack_have)) {
		have = malloc(nlb);
		if (!have)
			return -ENOMEM;
	}
	pthread_mutex_lock(&m->lock);
	if (!m->nents) {
		memset(have, 0, nlb);
		missing = nlb;
	} else {
		for (i = 0; i < nlb; i++) {
			struct wb_ent *e = wb_lookup(m, slba + i);

			have[i] = !!e;
			if (e)
				memcpy(buf + ((size_t)i << m->lba_shift), e->data,
				       m->lba_size);
			else
				missing++;
		}
	}
	pthread_mutex_unlock(&m->lock);
	for (i = 0; i < nlb && missing && !rc; i = j) {
		if (have[i]) {
			j = i + 1;
			continue;
		}
		for (j = i; j < nlb && !have[j]; j++)
			;
		rc = pread_all(m->fd, buf + ((size_t)i << m->lba_shift),
			       (size_t)(j - i) << m->lba_shift, blk_off(m, slba + i));
		if (!rc) {
			uint64_t t = timing_read(m, slba + i, j - i);

			if (t > end)
				end = t;
		}
	}
	*done_ns = end;
	if (have != stack_have)
		free(have);
	if (rc)
		io_failed(m, rc, "read");
	return rc;
}

int media_write(struct media *m, uint64_t slba, uint32_t nlb,
		const uint8_t *buf, int fua, uint64_t *done_ns)
{
	size_t bytes = (size_t)nlb << m->lba_shift;
	int rc;

	if (fua || bytes > m->bytes_max) {
		/* straight to the media, after dropping older buffered copies */
		pthread_mutex_lock(&m->destage_lock);
		pthread_mutex_lock(&m->lock);
		wb_drop_range(m, slba, nlb);
		pthread_mutex_unlock(&m->lock);
		rc = pwrite_all(m->fd, buf, bytes, blk_off(m, slba));
		if (!rc && fua && fdatasync(m->fd))
			rc = -errno;
		pthread_mutex_unlock(&m->destage_lock);
		if (rc) {
			io_failed(m, rc, "write");
			return rc;
		}
		*done_ns = timing_ops(m, slba << m->lba_shift, bytes, 1);
		fwc.flash_bytes_programmed += bytes;
		return 0;
	}

	pthread_mutex_lock(&m->lock);
	while (m->bytes_used + bytes > m->bytes_max && !m->stop &&
	       !atomic_load(&m->io_failed)) {
		pthread_cond_signal(&m->kick);
		pthread_cond_wait(&m->space, &m->lock);
	}
	if (m->bytes_used + bytes > m->bytes_max) {
		/* the destager cannot make room: the media failed */
		pthread_mutex_unlock(&m->lock);
		return -EIO;
	}
	for (uint32_t i = 0; i < nlb; i++) {
		uint64_t lba = slba + i;
		struct wb_ent *e = wb_lookup(m, lba);
		const uint8_t *src = buf + ((size_t)i << m->lba_shift);

		if (e && !(e->flags & WB_PINNED)) {
			memcpy(e->data, src, m->lba_size);
			continue;
		}
		if (e) {		/* being destaged: supersede it */
			wb_unlink(m, e);
			e->flags |= WB_ORPHAN;
		}
		e = malloc(sizeof(*e) + m->lba_size);
		if (!e) {
			pthread_mutex_unlock(&m->lock);
			return -ENOMEM;
		}
		e->lba = lba;
		e->flags = 0;
		memcpy(e->data, src, m->lba_size);
		e->next = m->hash[hslot(m, lba)];
		m->hash[hslot(m, lba)] = e;
		m->nents++;
		m->bytes_used += m->lba_size;
	}
	if (m->bytes_used >= m->bytes_max / 2)
		pthread_cond_signal(&m->kick);
	pthread_mutex_unlock(&m->lock);
	/*
	 * After the data is in: a shutdown destage that ran before we got
	 * the lock marked the media clean without our blocks; this marks it
	 * dirty again.
	 */
	media_mark_dirty(m);
	*done_ns = timing_wbuf(m, bytes);
	return 0;
}

/*
 * Write-zeroes and deallocate go to the media at once (durable on
 * completion): a huge discard must not need one buffer entry per block.
 * Deallocate punches a hole in the file; write-zeroes zeroes the range
 * (and keeps it allocated where the host file system allows).
 */
int media_zero(struct media *m, uint64_t slba, uint32_t nlb, int dealloc)
{
	off_t off = blk_off(m, slba), len = (off_t)nlb << m->lba_shift;
	int rc = 0;

	pthread_mutex_lock(&m->destage_lock);
	pthread_mutex_lock(&m->lock);
	wb_drop_range(m, slba, nlb);
	pthread_mutex_unlock(&m->lock);
	if ((dealloc ||
	     fallocate(m->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
		       off, len) < 0) &&
	    fallocate(m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      off, len) < 0) {
		/* no hole punching here: write zeroes by hand */
		static const uint8_t zero[65536];

		while (len && !rc) {
			size_t c = len > (off_t)sizeof(zero) ? sizeof(zero) :
							      (size_t)len;

			rc = pwrite_all(m->fd, zero, c, off);
			off += c;
			len -= c;
		}
	}
	pthread_mutex_unlock(&m->destage_lock);
	if (rc)
		io_failed(m, rc, "write-zeroes");
	return rc;
}

int media_recover(struct media *m)
{
	int rc;

	pthread_mutex_lock(&m->destage_lock);
	atomic_store(&m->io_failed, 0);
	rc = destage_locked(m, 1, NULL);
	pthread_mutex_unlock(&m->destage_lock);
	if (!rc) {
		fw_log("media: %s works again, write buffer destaged", m->path);
		pthread_mutex_lock(&m->lock);
		pthread_cond_broadcast(&m->kick);
		pthread_mutex_unlock(&m->lock);
	}
	return rc;
}

int media_flush(struct media *m, uint64_t *done_ns)
{
	int rc;

	pthread_mutex_lock(&m->destage_lock);
	rc = destage_locked(m, 1, done_ns);
	pthread_mutex_unlock(&m->destage_lock);
	return rc;
}

int media_close(struct media *m, int clean)
{
	pthread_mutex_lock(&m->lock);
	m->stop = 1;
	pthread_cond_broadcast(&m->kick);
	pthread_cond_broadcast(&m->space);
	pthread_mutex_unlock(&m->lock);
	if (m->destager)
		pthread_join(m->destager, NULL);
	m->destager = 0;
	return media_sync(m, clean);
}

/*
 * The media is marked clean only if the buffer was seen empty after a
 * destage, under m->lock: a write that adds data later calls
 * media_mark_dirty(), which waits for destage_lock and marks it dirty again.
 */
int media_sync(struct media *m, int clean)
{
	int rc, empty = 0, tries = 0;

	pthread_mutex_lock(&m->destage_lock);
	do {
		rc = destage_locked(m, 1, NULL);
		pthread_mutex_lock(&m->lock);
		empty = !m->nents;
		if (!rc && clean && empty)
			atomic_store(&m->dirty_marked, 0);
		pthread_mutex_unlock(&m->lock);
	} while (!rc && clean && !empty && ++tries < 5);
	if (rc || !empty)
		clean = 0;
	pthread_mutex_lock(&m->hdr_lock);
	m->hdr.clean = !!clean;
	pthread_mutex_unlock(&m->hdr_lock);
	if (media_write_hdr(m, 1))
		rc = -EIO;
	if (!clean)
		atomic_store(&m->dirty_marked, 1);
	pthread_mutex_unlock(&m->destage_lock);
	return rc;
}

void media_free(struct media *m)
{
	free(m->hash);
	free(m->die_busy);
	free(m->path);
	close(m->fd);
	m->hash = NULL;
	m->die_busy = NULL;
	m->path = NULL;
	m->fd = -1;
}
