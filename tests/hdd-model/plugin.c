// SPDX-License-Identifier: GPL-2.0
/*
 * nbdkit-hddmodel-plugin: a 7200 rpm disk that seeks, served over NBD,
 * its data in a host file.  The timing comes from model.c; one actuator
 * thread serves the queued requests one at a time in real time (SPTF
 * order among waiting commands, like NCQ), the data itself is read and
 * written with pread/pwrite on the file.
 *
 *   nbdkit -U SOCK ./nbdkit-hddmodel-plugin.so file=hdd.img [KEY=VALUE...]
 *
 * Keys (nbdkit --dump-plugin / README.md): see config_help below.
 */
#define _GNU_SOURCE
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "model.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static char *file, *stats_path;
static int fd = -1;
static uint64_t file_size;
static struct hdd_params prm;
static struct hdd disk;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t cv_done = PTHREAD_COND_INITIALIZER;
static pthread_t actuator;
static bool actuator_running, quit;
static struct timespec t0;
static uint64_t last_dump;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000ULL +
	       t.tv_nsec - t0.tv_nsec;
}

/* 1 ns timer slack: the default 50 us would add to every service time */
static void precise_timers(void)
{
	static __thread bool done;

	if (!done) {
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		done = true;
	}
}

static void sleep_until(uint64_t t)
{
	struct timespec ts;
	uint64_t abs_ns = (uint64_t)t0.tv_sec * 1000000000ULL + t0.tv_nsec + t;

	precise_timers();
	ts.tv_sec = abs_ns / 1000000000ULL;
	ts.tv_nsec = abs_ns % 1000000000ULL;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void hddmodel_load(void)
{
	hdd_defaults(&prm);
	clock_gettime(CLOCK_MONOTONIC, &t0);
}

/* milliseconds (decimal) to ns; -1 on error */
static int parse_ms(const char *key, const char *v, uint64_t *out,
		    double scale)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || d < 0 || d > 1e6) {
		nbdkit_error("%s: '%s' is not a number in range", key, v);
		return -1;
	}
	*out = (uint64_t)(d * scale);
	return 0;
}

static int hddmodel_config(const char *key, const char *value)
{
	int64_t sz;
	int b;

	if (!strcmp(key, "file")) {
		free(file);
		file = nbdkit_realpath(value);
		return file ? 0 : -1;
	}
	if (!strcmp(key, "stats")) {
		free(stats_path);
		stats_path = nbdkit_absolute_path(value);
		return stats_path ? 0 : -1;
	}
	if (!strcmp(key, "rpm"))
		return nbdkit_parse_uint32_t(key, value, &prm.rpm);
	if (!strcmp(key, "zones"))
		return nbdkit_parse_uint32_t(key, value, &prm.zones);
	if (!strcmp(key, "ncq"))
		return nbdkit_parse_uint32_t(key, value, &prm.ncq);
	if (!strcmp(key, "wc-cmds"))
		return nbdkit_parse_uint32_t(key, value, &prm.wc_cmds);
	if (!strcmp(key, "seed"))
		return nbdkit_parse_uint64_t(key, value, &prm.seed);
	if (!strcmp(key, "t2t"))
		return parse_ms(key, value, &prm.t2t_ns, 1e6);
	if (!strcmp(key, "avg-seek"))
		return parse_ms(key, value, &prm.avg_ns, 1e6);
	if (!strcmp(key, "full-seek"))
		return parse_ms(key, value, &prm.full_ns, 1e6);
	if (!strcmp(key, "overhead"))
		return parse_ms(key, value, &prm.overhead_ns, 1e6);
	if (!strcmp(key, "starve"))
		return parse_ms(key, value, &prm.starve_ns, 1e6);
	if (!strcmp(key, "outer-rate"))	/* MB/s */
		return parse_ms(key, value, &prm.outer_bps, 1e6);
	if (!strcmp(key, "inner-rate"))
		return parse_ms(key, value, &prm.inner_bps, 1e6);
	if (!strcmp(key, "wc")) {
		b = nbdkit_parse_bool(value);
		if (b < 0)
			return -1;
		prm.wc = b;
		return 0;
	}
	if (!strcmp(key, "wc-size") || !strcmp(key, "readahead") ||
	    !strcmp(key, "capacity")) {
		sz = nbdkit_parse_size(value);
		if (sz < 0)
			return -1;
		if (key[0] == 'w')
			prm.wc_bytes = sz;
		else if (key[0] == 'r')
			prm.ra_bytes = sz;
		else
			prm.capacity = sz;
		return 0;
	}
	nbdkit_error("unknown parameter '%s' (nbdkit PLUGIN --help lists them)",
		     key);
	return -1;
}

static int hddmodel_config_complete(void)
{
	struct stat st;
	char err[256];

	if (!file) {
		nbdkit_error("file=PATH (the disk's data) is required");
		return -1;
	}
	fd = open(file, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		nbdkit_error("%s: %m", file);
		return -1;
	}
	file_size = st.st_size & ~511ULL;
	if (!prm.capacity)
		prm.capacity = file_size;
	if (prm.capacity < file_size) {
		nbdkit_error("capacity=%" PRIu64 " is smaller than %s (%" PRIu64
			     " bytes)", prm.capacity, file, file_size);
		return -1;
	}
	if (hdd_init(&disk, &prm, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	return 0;
}

static void dump_stats(bool final)
{
	char buf[2048], tmp[4096];
	struct timespec ts;
	FILE *f;
	int n;

	n = hdd_stats_json(&disk, buf, sizeof(buf));
	if (n <= 0 || n >= (int)sizeof(buf))
		return;
	if (final)
		fprintf(stderr, "hddmodel: %s\n", buf);
	if (!stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", stats_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%s\n", buf);
	if (fclose(f) == 0)
		rename(tmp, stats_path);
	/* and a line a second in PATH.log (wall clock), to follow a run */
	snprintf(tmp, sizeof(tmp), "%s.log", stats_path);
	f = fopen(tmp, "a");
	if (!f)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(f, "{\"t\": %lld.%03ld, %s\n", (long long)ts.tv_sec,
		ts.tv_nsec / 1000000, buf + 1);
	fclose(f);
}

static void maybe_dump(uint64_t now)
{
	if (now - last_dump >= 1000000000ULL) {
		last_dump = now;
		dump_stats(false);
	}
}

static void *actuator_main(void *arg)
{
	(void)arg;
	precise_timers();
	pthread_mutex_lock(&lock);
	while (!quit) {
		struct hdd_req *r;
		uint64_t now = now_ns(), done;

		maybe_dump(now);
		r = hdd_pick(&disk, now);
		if (!r) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&cv_work, &lock, &ts);
			continue;
		}
		done = hdd_serve(&disk, now, r);
		pthread_mutex_unlock(&lock);
		sleep_until(done);
		pthread_mutex_lock(&lock);
		hdd_done(&disk, r);
		if (r->op == HDD_DESTAGE) {
			free(r);
			/* cache space and flushes wait for destages */
			pthread_cond_broadcast(&cv_done);
		} else {
			pthread_cond_signal(r->priv);
		}
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int hddmodel_after_fork(void)
{
	int e = pthread_create(&actuator, NULL, actuator_main, NULL);

	if (e) {
		nbdkit_error("pthread_create: %s", strerror(e));
		return -1;
	}
	actuator_running = true;
	return 0;
}

static void hddmodel_unload(void)
{
	if (actuator_running) {
		pthread_mutex_lock(&lock);
		quit = true;
		pthread_cond_broadcast(&cv_work);
		pthread_mutex_unlock(&lock);
		pthread_join(actuator, NULL);
	}
	if (fd >= 0) {
		dump_stats(true);
		close(fd);
	}
	free(file);
	free(stats_path);
}

static void *hddmodel_open(int readonly)
{
	static int handle;

	(void)readonly;
	return &handle;
}

static int64_t hddmodel_get_size(void *h)
{
	(void)h;
	return file_size;
}

static int hddmodel_can_fua(void *h)
{
	(void)h;
	return NBDKIT_FUA_NATIVE;
}

static int hddmodel_can_flush(void *h)
{
	(void)h;
	return 1;
}

static int hddmodel_can_trim(void *h)
{
	(void)h;
	return 1;
}

/* Serve one media operation through the actuator; wait for it. */
static void media(enum hdd_op op, uint64_t off, uint32_t count)
{
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct hdd_req r;

	memset(&r, 0, sizeof(r));
	r.priv = &cv;
	r.op = op;
	r.lba = off / 512;
	r.nsect = (off % 512 + count + 511) / 512;
	pthread_mutex_lock(&lock);
	r.arrive = now_ns();
	hdd_enqueue(&disk, &r);
	pthread_cond_signal(&cv_work);
	while (!r.done)
		pthread_cond_wait(&cv, &lock);
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&cv);
}

static int hddmodel_pread(void *h, void *buf, uint32_t count, uint64_t off,
			  uint32_t flags)
{
	char *p = buf;
	uint32_t left = count;
	uint64_t o = off;

	(void)h;
	(void)flags;
	while (left) {
		ssize_t n = pread(fd, p, left, o);

		if (n < 0) {
			nbdkit_error("pread: %m");
			return -1;
		}
		if (n == 0) {
			memset(p, 0, left);
			break;
		}
		p += n;
		o += n;
		left -= n;
	}
	media(HDD_READ, off, count);
	return 0;
}

static int hddmodel_pwrite(void *h, const void *buf, uint32_t count,
			   uint64_t off, uint32_t flags)
{
	const char *p = buf;
	uint32_t left = count;
	uint64_t o = off;

	(void)h;
	while (left) {
		ssize_t n = pwrite(fd, p, left, o);

		if (n < 0) {
			nbdkit_error("pwrite: %m");
			return -1;
		}
		p += n;
		o += n;
		left -= n;
	}
	if (!prm.wc || (flags & NBDKIT_FLAG_FUA)) {
		media(HDD_WRITE, off, count);
		return 0;
	}
	pthread_mutex_lock(&lock);
	while (!hdd_cache_write(&disk, now_ns(), off / 512,
				(off % 512 + count + 511) / 512))
		pthread_cond_wait(&cv_done, &lock);
	pthread_cond_signal(&cv_work);
	pthread_mutex_unlock(&lock);
	sleep_until(now_ns() + prm.overhead_ns);
	return 0;
}

static int hddmodel_flush(void *h, uint32_t flags)
{
	(void)h;
	(void)flags;
	pthread_mutex_lock(&lock);
	disk.st.flushes++;
	if (prm.wc) {
		uint64_t target = disk.write_seq;

		disk.flush_waiting++;
		while (hdd_oldest_dirty(&disk) <= target)
			pthread_cond_wait(&cv_done, &lock);
		disk.flush_waiting--;
	}
	pthread_mutex_unlock(&lock);
	sleep_until(now_ns() + prm.overhead_ns);
	return 0;
}

static int hddmodel_trim(void *h, uint32_t count, uint64_t off,
			 uint32_t flags)
{
	(void)h;
	(void)flags;
	pthread_mutex_lock(&lock);
	disk.st.trims++;
	pthread_mutex_unlock(&lock);
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
		      count)) {
		/* a file system without holes: write zeroes instead */
		static const char zero[65536];

		while (count) {
			uint32_t n = count < sizeof(zero) ? count : sizeof(zero);

			if (pwrite(fd, zero, n, off) != (ssize_t)n) {
				nbdkit_error("trim: %m");
				return -1;
			}
			off += n;
			count -= n;
		}
	}
	return 0;
}

static struct nbdkit_plugin plugin = {
	.name = "hddmodel",
	.version = "1.0",
	.longname = "vcache simulated 7200 rpm HDD (seek, rotation, NCQ)",
	.load = hddmodel_load,
	.unload = hddmodel_unload,
	.config = hddmodel_config,
	.config_complete = hddmodel_config_complete,
	.config_help =
	"file=PATH          (required) the disk's data\n"
	"capacity=SIZE      bytes the geometry spans (default: the file)\n"
	"rpm=N              spindle speed (7200)\n"
	"t2t=MS             track-to-track seek (0.8)\n"
	"avg-seek=MS        mean seek over random pairs (7.6)\n"
	"full-seek=MS       full-stroke seek (16)\n"
	"outer-rate=MB/S    media rate, outer zone (200)\n"
	"inner-rate=MB/S    media rate, inner zone (100)\n"
	"zones=N            zones (16)\n"
	"overhead=MS        command overhead (0.05)\n"
	"ncq=N              commands reordered SPTF (32)\n"
	"wc=on|off          volatile write cache (on)\n"
	"wc-size=SIZE       write cache bytes (16M)\n"
	"wc-cmds=N          write cache entries (128)\n"
	"readahead=SIZE     read-ahead after a read (1M, 0 = off)\n"
	"starve=MS          aging: oldest command first after (2000)\n"
	"seed=N             initial head position and platter phase (1)\n"
	"stats=PATH         statistics as JSON, every second and at exit",
	.magic_config_key = "file",
	.after_fork = hddmodel_after_fork,
	.open = hddmodel_open,
	.get_size = hddmodel_get_size,
	.can_fua = hddmodel_can_fua,
	.can_flush = hddmodel_can_flush,
	.can_trim = hddmodel_can_trim,
	.pread = hddmodel_pread,
	.pwrite = hddmodel_pwrite,
	.flush = hddmodel_flush,
	.trim = hddmodel_trim,
	.errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN(plugin)
