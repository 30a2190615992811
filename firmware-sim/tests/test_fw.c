// SPDX-License-Identifier: GPL-2.0
/*
 * firmware-sim tests, no VM: each test formats a media file, starts the
 * firmware binary and drives it through fakehost (QEMU + driver stand-in).
 *
 * Usage: test_fw PATH/TO/firmware-sim [TEST-NAME...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakehost.h"

#define MEM_SIZE	(64u << 20)

static const char *fw_bin;
static rlim_t child_fsize;	/* RLIMIT_FSIZE for the next firmware, 0: none */

struct env {
	char dir[128];
	char sock[192], media[192], mem[192], ctl[192], log[192], out[192];
	pid_t pid;
	struct fakehost h;
	struct vc_identify id;
	uint32_t lba;
	int connected;
};

static struct env *cur;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "    FAIL %s:%d: %s: ", __FILE__, __LINE__, \
			#cond);						\
		fprintf(stderr, __VA_ARGS__);				\
		fprintf(stderr, "\n");					\
		return -1;						\
	}								\
} while (0)

#define CHECK_ST(expr, want) do {					\
	int __st = (expr);						\
	if (__st != (want)) {						\
		fprintf(stderr, "    FAIL %s:%d: %s = %d, want %d (%s)\n", \
			__FILE__, __LINE__, #expr, __st, (want),	\
			cur ? cur->h.err : "");				\
		return -1;						\
	}								\
} while (0)

/* ---------------------------------------------------------- helpers */
static int spawn(const char *outfile, int append, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(outfile, O_WRONLY | O_CREAT |
			      (append ? O_APPEND : O_TRUNC), 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (child_fsize) {
			struct rlimit rl = { child_fsize, child_fsize };

			setrlimit(RLIMIT_FSIZE, &rl);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid, int timeout_ms)
{
	int st;

	for (int i = 0; i < timeout_ms; i += 5) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) :
			       128 + WTERMSIG(st);
		usleep(5000);
	}
	return -1;
}

/* Run firmware-sim with args; stdout+stderr to e->out.  Exit status. */
static int run_fw(struct env *e, ...)
{
	char *argv[32];
	int n = 0;
	va_list ap;
	pid_t pid;

	argv[n++] = (char *)fw_bin;
	va_start(ap, e);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	pid = spawn(e->out, 0, argv);
	return wait_exit(pid, 30000);
}

static int out_has(struct env *e, const char *s)
{
	char buf[8192];
	int fd = open(e->out, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, s) != NULL;
}

static void env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	strcpy(e->dir, "/tmp/fwtest.XXXXXX");
	if (!mkdtemp(e->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(e->sock, sizeof(e->sock), "%s/card.sock", e->dir);
	snprintf(e->media, sizeof(e->media), "%s/media", e->dir);
	snprintf(e->mem, sizeof(e->mem), "%s/guest-ram", e->dir);
	snprintf(e->ctl, sizeof(e->ctl), "%s/ctl.sock", e->dir);
	snprintf(e->log, sizeof(e->log), "%s/fw.log", e->dir);
	snprintf(e->out, sizeof(e->out), "%s/out.txt", e->dir);
	e->pid = -1;
	e->lba = 512;
	cur = e;
}

static int env_format(struct env *e, const char *cap, const char *lba)
{
	e->lba = (uint32_t)atoi(lba);
	return run_fw(e, "format", "--media", e->media, "--capacity", cap,
		      "--lba-size", lba, "--serial", "TESTSER01", NULL);
}

static int sock_ready(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), ok;

	if (strlen(path) >= sizeof(sa.sun_path))
		return 0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (fd >= 0)
		close(fd);
	return ok;
}

/* Start the firmware with extra args (NULL terminated). */
static int env_start_v(struct env *e, char *const *extra)
{
	char *argv[48];
	int n = 0;

	argv[n++] = (char *)fw_bin;
	argv[n++] = "--socket";
	argv[n++] = e->sock;
	argv[n++] = "--media";
	argv[n++] = e->media;
	argv[n++] = "--guest-mem";
	argv[n++] = e->mem;
	argv[n++] = "--ctl";
	argv[n++] = e->ctl;
	argv[n++] = "--queues";
	argv[n++] = "2";
	for (int i = 0; extra && extra[i] && n < 46; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	e->pid = spawn(e->log, 1, argv);
	for (int i = 0; i < 1000; i++) {
		/* the ctl socket is created after the ivshmem one */
		if (!access(e->ctl, F_OK) && sock_ready(e->ctl))
			return 0;
		if (waitpid(e->pid, NULL, WNOHANG) == e->pid) {
			e->pid = -1;
			return -1;
		}
		usleep(5000);
	}
	return -1;
}

#define env_start(e, ...) env_start_v(e, (char *const[]){ __VA_ARGS__, NULL })

/* Connect fakehost, enable, identify, create @nq I/O queues of @qs. */
static int env_connect(struct env *e, int nq, unsigned qs)
{
	if (fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3))
		return -1;
	e->connected = 1;
	if (fh_enable(&e->h, 32, 5000))
		return -1;
	if (fh_identify(&e->h, &e->id))
		return -1;
	for (int q = 1; q <= nq; q++)
		if (fh_create_ioq(&e->h, q, qs))
			return -1;
	return 0;
}

/* Already connected: enable again and re-create one I/O queue. */
static int env_connect_enabled(struct env *e)
{
	if (fh_enable(&e->h, 16, 5000))
		return -1;
	return fh_create_ioq(&e->h, 1, 32) ? -1 : 0;
}

static void env_disconnect(struct env *e)
{
	if (e->connected)
		fh_close(&e->h);
	e->connected = 0;
}

/* Kill the firmware with @sig; returns its exit status. */
static int env_kill(struct env *e, int sig)
{
	int st;

	if (e->pid < 0)
		return -1;
	kill(e->pid, sig);
	st = wait_exit(e->pid, 20000);
	if (st < 0) {
		kill(e->pid, SIGKILL);
		st = wait_exit(e->pid, 5000);
	}
	e->pid = -1;
	return st;
}

/* Disconnect (QEMU goes away) and wait for the firmware to exit. */
static int env_stop(struct env *e)
{
	int st;

	env_disconnect(e);
	if (e->pid < 0)
		return -1;
	st = wait_exit(e->pid, 20000);
	if (st < 0)
		return env_kill(e, SIGKILL);
	e->pid = -1;
	return st;
}

static void env_fini(struct env *e, int failed)
{
	char cmd[300];

	env_disconnect(e);
	if (e->pid > 0)
		env_kill(e, SIGKILL);
	if (failed) {
		snprintf(cmd, sizeof(cmd), "tail -n 25 %s | sed 's/^/    | /' >&2",
			 e->log);
		if (system(cmd) < 0)
			perror("system");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", e->dir);
	if (system(cmd) < 0)
		perror("system");
	cur = NULL;
}

static int ctl(struct env *e, const char *a1, const char *a2, const char *a3,
	       const char *a4)
{
	return run_fw(e, "ctl", "--ctl", e->ctl, a1, a2, a3, a4, NULL);
}

static int read_out(struct env *e, char *buf, size_t len)
{
	int fd = open(e->out, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? 0 : -1;
}

/* stats value by name via `ctl stats --json`, or -1 */
static long long stat_get(struct env *e, const char *key)
{
	char buf[4096], k[64], *p;

	if (ctl(e, "stats", "--json", NULL, NULL) || read_out(e, buf, sizeof(buf)))
		return -1;
	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(buf, k);
	return p ? atoll(p + strlen(k)) : -1;
}

/* Block contents: every 8-byte word depends on the LBA and a version. */
static void fill(uint8_t *buf, uint64_t lba, uint32_t nlb, uint32_t bs,
		 uint32_t ver)
{
	for (uint32_t b = 0; b < nlb; b++) {
		uint64_t *w = (uint64_t *)(buf + (size_t)b * bs);

		for (uint32_t i = 0; i < bs / 8; i++)
			w[i] = ((lba + b) << 24) ^ ((uint64_t)ver << 8) ^ i ^
			       0x5a5a000000000000ULL;
	}
}

/* Which version a block holds: ver, 0 for all-zero, -1 torn/foreign. */
static int block_ver(const uint8_t *blk, uint64_t lba, uint32_t bs)
{
	const uint64_t *w = (const uint64_t *)blk;
	uint64_t v0 = (w[0] ^ (lba << 24) ^ 0x5a5a000000000000ULL) >> 8;
	int zero = 1;

	for (uint32_t i = 0; i < bs / 8; i++)
		if (w[i])
			zero = 0;
	if (zero)
		return 0;
	for (uint32_t i = 0; i < bs / 8; i++)
		if (w[i] != ((lba << 24) ^ (v0 << 8) ^ i ^ 0x5a5a000000000000ULL))
			return -1;
	return (int)v0;
}

/* Write @nlb blocks at @slba with version @ver (single segment). */
static int wr(struct env *e, unsigned q, uint64_t slba, uint32_t nlb,
	      uint32_t ver, int flags)
{
	uint32_t max = (1u << 20) / e->lba;
	uint64_t dma;
	int st = 0;

	/* one command per max_xfer, like the block layer would split */
	for (; nlb && !st; slba += max, nlb -= nlb > max ? max : nlb) {
		uint32_t n = nlb > max ? max : nlb;

		dma = fh_alloc(&e->h, (size_t)n * e->lba, 4096);
		fill(fh_ptr(&e->h, dma), slba, n, e->lba, ver);
		st = fh_rw(&e->h, q, VC_CMD_WRITE, slba, n, e->lba, dma, flags);
	}
	return st;
}

/* Read and check every block holds version @ver; -2 on data mismatch. */
static int rd_check1(struct env *e, unsigned q, uint64_t slba, uint32_t nlb,
		     int ver)
{
	uint64_t dma = fh_alloc(&e->h, (size_t)nlb * e->lba, 4096);
	uint8_t *p = fh_ptr(&e->h, dma);
	int st;

	memset(p, 0xee, (size_t)nlb * e->lba);
	st = fh_rw(&e->h, q, VC_CMD_READ, slba, nlb, e->lba, dma, 0);
	if (st)
		return st;
	for (uint32_t b = 0; b < nlb; b++) {
		int v = block_ver(p + (size_t)b * e->lba, slba + b, e->lba);

		if (v != ver) {
			fprintf(stderr, "    block %llu holds version %d, want %d\n",
				(unsigned long long)(slba + b), v, ver);
			return -2;
		}
	}
	return 0;
}

static int rd_check(struct env *e, unsigned q, uint64_t slba, uint32_t nlb,
		    int ver)
{
	uint32_t max = (1u << 20) / e->lba;
	int st = 0;

	for (; nlb && !st; slba += max, nlb -= nlb > max ? max : nlb)
		st = rd_check1(e, q, slba, nlb > max ? max : nlb, ver);
	return st;
}

/* ------------------------------------------------------------ tests */
static int t_identify(struct env *e)
{
	struct vc_identify *id = &e->id;
	struct vc_health_log hl;
	uint32_t hb;

	CHECK(!env_format(e, "16M", "512"), "format failed");
	CHECK(!env_start(e, "--timing", "nodelay"), "start failed");
	CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3), "%s", e->h.err);
	e->connected = 1;
	CHECK(e->h.id == 1, "first client id %d", e->h.id);
	CHECK(e->h.regs->magic == VC_CARD_MAGIC, "magic %llx",
	      (unsigned long long)e->h.regs->magic);
	CHECK(e->h.regs->version == VC_IF_VERSION, "version %x",
	      e->h.regs->version);
	CHECK(e->h.regs->regs_size == sizeof(struct vc_regs), "regs_size");
	CHECK(e->h.regs->db_offset == 4096 && e->h.regs->db_stride == 8,
	      "doorbells at %u stride %u", e->h.regs->db_offset,
	      e->h.regs->db_stride);
	CHECK(e->h.regs->cap_max_ioq == 2, "cap_max_ioq %u",
	      e->h.regs->cap_max_ioq);
	CHECK(e->h.regs->cap_mqes >= 64, "cap_mqes");
	CHECK(!(e->h.regs->csts & VC_CSTS_RDY), "ready before enable");
	hb = e->h.regs->heartbeat;
	usleep(100000);
	CHECK(e->h.regs->heartbeat > hb, "heartbeat does not move");
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK_ST(fh_identify(&e->h, id), 0);
	CHECK(id->capacity == 16 * 2048, "capacity %llu",
	      (unsigned long long)id->capacity);
	CHECK(id->lba_size == 512, "lba_size %u", id->lba_size);
	CHECK(id->num_ioq == 2, "num_ioq %u", id->num_ioq);
	CHECK(!memcmp(id->serial, "TESTSER01           ", 20), "serial '%.20s'",
	      id->serial);
	CHECK(id->fw_rev[0] != 0 && id->model[0] != 0, "fw_rev/model empty");
	CHECK((id->flags & (VC_ID_F_VWC | VC_ID_F_FUA | VC_ID_F_DEALLOCATE |
			    VC_ID_F_WRITE_ZEROES)) == 0xf, "flags %x", id->flags);
	CHECK(id->max_xfer >= 65536 && id->max_sge >= 16 && id->max_qdepth >= 64,
	      "limits");
	CHECK(id->phys_block_size >= id->lba_size, "phys block size");
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.power_cycles == 1 && hl.unsafe_shutdowns == 0,
	      "power cycles %llu unsafe %llu",
	      (unsigned long long)hl.power_cycles,
	      (unsigned long long)hl.unsafe_shutdowns);
	/* identify through a 2-descriptor SGL */
	{
		uint64_t a = fh_alloc(&e->h, 1000, 8), b = fh_alloc(&e->h, 3096, 8);
		uint64_t dd = fh_alloc(&e->h, 32, 64);
		struct vc_sgl_desc *d = fh_ptr(&e->h, dd);
		struct vc_sqe s = { .opcode = VC_ADM_IDENTIFY, .nseg = 2,
				    .dptr = dd, .dlen = 4096 };

		d[0].addr = a;
		d[0].len = 1000;
		d[1].addr = b;
		d[1].len = 3096;
		CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), 0);
		CHECK(!memcmp(fh_ptr(&e->h, a), id, 1000) &&
		      !memcmp(fh_ptr(&e->h, b), (uint8_t *)id + 1000, 3096),
		      "SGL identify data differs");
	}
	CHECK(env_stop(e) == 0, "firmware did not exit 0 on disconnect");
	return 0;
}

static int t_rw(struct env *e)
{
	struct vc_health_log hl;
	uint64_t a[4], dma;
	uint32_t l[4] = { 512, 4096 - 512, 8192, 1024 };	/* 14 KiB */
	uint8_t *ref;
	struct vc_cqe c;

	CHECK(!env_format(e, "64M", "512"), "format");
	CHECK(!env_start(e, "--timing", "flash"), "start");
	CHECK(!env_connect(e, 2, 64), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 8, 1, 0), 0);
	CHECK_ST(rd_check(e, 1, 0, 8, 1), 0);
	CHECK_ST(rd_check(e, 2, 0, 8, 1), 0);		/* other queue */
	CHECK_ST(rd_check(e, 1, 8, 8, 0), 0);		/* never written */
	/* max transfer in one command */
	CHECK_ST(wr(e, 2, 4096, 2048, 2, 0), 0);
	CHECK_ST(rd_check(e, 1, 4096, 2048, 2), 0);
	CHECK_ST(rd_check(e, 1, 4095, 1, 0), 0);
	/* multi-segment SGL write, read back single-segment, and back */
	ref = malloc(26 * 512);
	fill(ref, 100, 26, 512, 3);
	for (int i = 0, off = 0; i < 4; off += l[i], i++) {
		a[i] = fh_alloc(&e->h, l[i], i == 1 ? 512 : 8);
		memcpy(fh_ptr(&e->h, a[i]), ref + off, l[i]);
	}
	CHECK_ST(fh_rw_sgl(&e->h, 1, VC_CMD_WRITE, 100, 26, 512, a, l, 4, 0), 0);
	CHECK_ST(rd_check(e, 2, 100, 26, 3), 0);
	for (int i = 0; i < 4; i++)
		memset(fh_ptr(&e->h, a[i]), 0, l[i]);
	CHECK_ST(fh_rw_sgl(&e->h, 2, VC_CMD_READ, 100, 26, 512, a, l, 4, 0), 0);
	for (int i = 0, off = 0; i < 4; off += l[i], i++)
		CHECK(!memcmp(fh_ptr(&e->h, a[i]), ref + off, l[i]),
		      "SGL read segment %d differs", i);
	free(ref);
	/* many commands in flight on both queues, completed by phase */
	dma = fh_alloc(&e->h, 48 * 4096, 4096);
	for (int r = 0; r < 3; r++) {
		int got = 0;

		for (int i = 0; i < 48; i++) {
			struct vc_sqe s = { .opcode = VC_CMD_WRITE, .nseg = 1,
					    .dptr = dma + i * 4096, .dlen = 4096 };

			fill(fh_ptr(&e->h, s.dptr), 20000 + i * 8, 8, 512, 10 + r);
			s.rw.slba = 20000 + i * 8;
			s.rw.nlb = 8;
			fh_post(&e->h, 1 + i % 2, &s, 0);
		}
		fh_ring_sq(&e->h, 1);
		fh_ring_sq(&e->h, 2);
		for (int i = 0; i < 48; i++) {
			CHECK(!fh_reap(&e->h, 1 + i % 2, &c, 10000),
			      "completion %d of round %d missing", i, r);
			CHECK(VC_CQE_STATUS(c.status) == 0, "status %x",
			      c.status);
			got++;
		}
		CHECK(got == 48, "got %d", got);
		CHECK_ST(rd_check(e, 1, 20000, 48 * 8, 10 + r), 0);
	}
	/* flush and FUA succeed; sq_head is reported */
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_FLUSH, 0, 0), 0);
	CHECK_ST(wr(e, 1, 50, 4, 5, VC_SQE_F_FUA), 0);
	CHECK(e->h.q[1].sq_head == e->h.q[1].sq_tail, "sq_head %u tail %u",
	      e->h.q[1].sq_head, e->h.q[1].sq_tail);
	CHECK(stat_get(e, "write_cmds") == 148, "stats write_cmds");
	/*
	 * Read-modify-writes: the SGL write at LBA 100 (misaligned) and the
	 * 2 KiB FUA write; the 4 KiB-aligned ones are not.
	 */
	CHECK(stat_get(e, "rmw_writes") == 2, "stats rmw_writes %lld",
	      (long long)stat_get(e, "rmw_writes"));
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.rmw_writes == 2, "health rmw_writes %llu",
	      (unsigned long long)hl.rmw_writes);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_lba_4k(struct env *e)
{
	CHECK(!env_format(e, "32M", "4096"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK(e->id.lba_size == 4096 && e->id.capacity == 8192, "geometry");
	CHECK_ST(wr(e, 1, 8191, 1, 7, 0), 0);
	CHECK_ST(rd_check(e, 1, 8191, 1, 7), 0);
	CHECK_ST(wr(e, 1, 8191, 2, 7, 0), VC_SC_LBA_RANGE);
	/* a 4 KiB logical block is a whole physical block */
	CHECK(stat_get(e, "rmw_writes") == 0, "stats rmw_writes");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_errors(struct env *e)
{
	uint64_t dma, dd;
	struct vc_sgl_desc *d;
	struct vc_sqe s;
	uint64_t cap;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 2, 16), "%s", e->h.err);
	cap = e->id.capacity;
	dma = fh_alloc(&e->h, 65536, 4096);
	/* LBA range */
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, cap, 1, 512, dma, 0), VC_SC_LBA_RANGE);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_WRITE, cap - 1, 2, 512, dma, 0), VC_SC_LBA_RANGE);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, ~0ULL - 1, 4, 512, dma, 0), VC_SC_LBA_RANGE);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_DEALLOCATE, cap - 4, 5), VC_SC_LBA_RANGE);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_WRITE_ZEROES, cap, 1), VC_SC_LBA_RANGE);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, cap - 1, 1, 512, dma, 0), 0);
	/* nlb 0, dlen mismatch, too large */
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, 0, 0, 512, dma, 0), VC_SC_INVALID_FIELD);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_CMD_READ;
	s.nseg = 1;
	s.dptr = dma;
	s.dlen = 1024;
	s.rw.nlb = 1;
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_INVALID_FIELD);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, 0, 4096, 512, dma, 0), VC_SC_INVALID_FIELD);
	/* bad DMA addresses */
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, 0, 1, 512, MEM_SIZE, 0), VC_SC_DATA_XFER);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_WRITE, 0, 2, 512, MEM_SIZE - 512, 0), VC_SC_DATA_XFER);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, 0, 1, 512, ~0ULL - 100, 0), VC_SC_DATA_XFER);
	/* bad SGLs */
	dd = fh_alloc(&e->h, 300 * 16, 64);
	d = fh_ptr(&e->h, dd);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_CMD_READ;
	s.nseg = 2;
	s.dptr = dd;
	s.dlen = 1024;
	s.rw.nlb = 2;
	d[0] = (struct vc_sgl_desc){ .addr = dma, .len = 512 };
	d[1] = (struct vc_sgl_desc){ .addr = dma + 4096, .len = 0 };
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);	/* empty */
	d[1].len = 256;
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);	/* short */
	d[1].len = 1024;
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);	/* long */
	d[1] = (struct vc_sgl_desc){ .addr = MEM_SIZE - 100, .len = 512 };
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);	/* outside */
	d[1] = (struct vc_sgl_desc){ .addr = dma + 4096, .len = 512 };
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), 0);
	s.nseg = 300;
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);	/* > max_sge */
	s.nseg = 2;
	s.dptr = MEM_SIZE - 16;
	CHECK_ST(fh_cmd(&e->h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);	/* list outside */
	/* opcodes */
	CHECK_ST(fh_simple(&e->h, 1, VC_ADM_IDENTIFY, 0, 0), VC_SC_INVALID_OPCODE);
	CHECK_ST(fh_simple(&e->h, 1, 0x7f, 0, 1), VC_SC_INVALID_OPCODE);
	CHECK_ST(fh_simple(&e->h, 0, VC_CMD_READ, 0, 1), VC_SC_INVALID_OPCODE);
	/* admin validation */
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_CREATE_CQ;
	s.dptr = fh_alloc(&e->h, 4096, 4096);
	s.queue.qid = 1;	/* exists */
	s.queue.qsize = 16;
	s.queue.vector = 1;
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_QID);
	s.queue.qid = 3;	/* beyond num_ioq */
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_QID);
	CHECK_ST(fh_delete_ioq(&e->h, 2), 0);
	s.queue.qid = 2;
	s.queue.qsize = 60000;
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_QUEUE_SIZE);
	s.queue.qsize = 1;
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_QUEUE_SIZE);
	s.queue.qsize = 16;
	s.queue.vector = 7;	/* only 3 vectors */
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_FIELD);
	s.queue.vector = 2;
	s.dptr = MEM_SIZE - 64;	/* ring outside guest RAM */
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_DATA_XFER);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_CREATE_SQ;
	s.dptr = fh_alloc(&e->h, 4096, 4096);
	s.queue.qid = 2;
	s.queue.qsize = 16;
	s.queue.cqid = 2;	/* CQ 2 was deleted */
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_FIELD);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_DELETE_CQ;
	s.queue.qid = 1;	/* SQ 1 still attached */
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_FIELD);
	s.opcode = VC_ADM_DELETE_SQ;
	s.queue.qid = 2;	/* gone */
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_QID);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_GET_LOG;
	s.nseg = 1;
	s.dptr = dma;
	s.dlen = 512;
	s.log.lid = 9;
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_INVALID_FIELD);
	CHECK_ST(fh_simple(&e->h, 0, 0x55, 0, 0), VC_SC_INVALID_OPCODE);
	/* re-create queue 2 and use it */
	CHECK_ST(fh_create_ioq(&e->h, 2, 16), 0);
	CHECK_ST(wr(e, 2, 10, 1, 4, 0), 0);
	CHECK_ST(rd_check(e, 1, 10, 1, 4), 0);
	/* the card is still healthy */
	CHECK(!(e->h.regs->csts & VC_CSTS_CFS), "CFS set");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_zeroes(struct env *e)
{
	CHECK(!env_format(e, "16M", "512"), "format");
	CHECK(!env_start(e, "--timing", "flash"), "start");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 256, 9, 0), 0);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_FLUSH, 0, 0), 0);
	CHECK_ST(wr(e, 1, 256, 256, 9, 0), 0);	/* buffered only */
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_DEALLOCATE, 8, 100), 0);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_WRITE_ZEROES, 300, 50), 0);
	CHECK_ST(rd_check(e, 1, 0, 8, 9), 0);
	CHECK_ST(rd_check(e, 1, 8, 100, 0), 0);
	CHECK_ST(rd_check(e, 1, 108, 192, 9), 0);
	CHECK_ST(rd_check(e, 1, 300, 50, 0), 0);
	CHECK_ST(rd_check(e, 1, 350, 162, 9), 0);
	/* whole-device discard; over the limit is refused */
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_DEALLOCATE, 0, e->id.capacity), 0);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_DEALLOCATE, 0,
			   e->id.max_discard_nlb + 1), VC_SC_INVALID_FIELD);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_WRITE_ZEROES, 0,
			   e->id.max_wzeroes_nlb + 1), VC_SC_INVALID_FIELD);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_WRITE_ZEROES, 0, 0),
		 VC_SC_INVALID_FIELD);
	CHECK_ST(rd_check(e, 1, 0, 512, 0), 0);
	CHECK_ST(wr(e, 1, 40, 4, 11, 0), 0);
	CHECK_ST(rd_check(e, 1, 40, 4, 11), 0);
	CHECK(env_kill(e, SIGKILL) == 128 + SIGKILL, "kill");
	CHECK(!env_start(e, "--timing", "nodelay"), "restart");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(rd_check(e, 1, 0, 40, 0), 0);	/* discard was durable */
	CHECK_ST(rd_check(e, 1, 44, 400, 0), 0);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

/*
 * Durability across a power cut (SIGKILL): flushed and FUA data survive,
 * unflushed blocks are old or new (never torn), untouched blocks unchanged.
 */
static int pcut(struct env *e, const char *lba, int via_ctl)
{
	uint32_t bs;
	uint64_t dma;
	uint8_t *p;
	int old = 0, new = 0;
	struct vc_health_log hl;

	CHECK(!env_format(e, "64M", lba), "format");
	bs = e->lba;
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 2, 64), "%s", e->h.err);
	/* generation 1 everywhere we look, durable */
	CHECK_ST(wr(e, 1, 0, 1024, 1, 0), 0);
	CHECK_ST(wr(e, 1, 5000, 512, 1, 0), 0);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_FLUSH, 0, 0), 0);
	/* A: written then flushed */
	CHECK_ST(wr(e, 1, 0, 100, 2, 0), 0);
	CHECK_ST(wr(e, 2, 100, 100, 2, 0), 0);
	CHECK_ST(fh_simple(&e->h, 2, VC_CMD_FLUSH, 0, 0), 0);
	/* B: FUA */
	CHECK_ST(wr(e, 1, 300, 64, 3, VC_SQE_F_FUA), 0);
	/* C: completed but never flushed */
	CHECK_ST(wr(e, 1, 400, 256, 4, 0), 0);
	CHECK_ST(wr(e, 2, 300, 8, 4, 0), 0);	/* overwrite part of B, unflushed */
	if (via_ctl)
		CHECK(ctl(e, "powercut", NULL, NULL, NULL) == 0, "ctl powercut");
	else
		kill(e->pid, SIGKILL);
	CHECK(wait_exit(e->pid, 10000) >= 0, "firmware did not die");
	e->pid = -1;
	env_disconnect(e);

	CHECK(!env_start(e, "--timing", "nodelay"), "restart");
	CHECK(!env_connect(e, 2, 64), "%s", e->h.err);
	CHECK(e->h.id == 1, "id after restart %d", e->h.id);
	CHECK_ST(rd_check(e, 1, 0, 200, 2), 0);
	CHECK_ST(rd_check(e, 1, 200, 100, 1), 0);
	CHECK_ST(rd_check(e, 1, 308, 56, 3), 0);
	CHECK_ST(rd_check(e, 1, 656, 368, 1), 0);
	CHECK_ST(rd_check(e, 1, 5000, 512, 1), 0);
	dma = fh_alloc(&e->h, 264 * bs, 4096);
	p = fh_ptr(&e->h, dma);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, 400, 256, bs, dma, 0), 0);
	CHECK_ST(fh_rw(&e->h, 1, VC_CMD_READ, 300, 8, bs, dma + 256 * bs, 0), 0);
	for (int b = 0; b < 264; b++) {
		uint64_t lbaa = b < 256 ? 400 + b : 300 + b - 256;
		int want_old = b < 256 ? 1 : 3;
		int v = block_ver(p + (size_t)b * bs, lbaa, bs);

		CHECK(v == want_old || v == 4, "block %llu torn or wrong: %d",
		      (unsigned long long)lbaa, v);
		if (v == 4)
			new++;
		else
			old++;
	}
	fprintf(stderr, "    unflushed blocks after power cut: %d old, %d new\n",
		old, new);
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.power_cycles == 2 && hl.unsafe_shutdowns == 1,
	      "power_cycles %llu unsafe %llu",
	      (unsigned long long)hl.power_cycles,
	      (unsigned long long)hl.unsafe_shutdowns);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_powercut(struct env *e)
{
	return pcut(e, "512", 0);
}

static int t_powercut_4k_ctl(struct env *e)
{
	return pcut(e, "4096", 1);
}

static int t_faults(struct env *e)
{
	struct vc_health_log hl;
	int i;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 64, 1, 0), 0);
	CHECK(!ctl(e, "read-error", "10", "5", NULL), "ctl read-error");
	CHECK(!ctl(e, "write-error", "100", "1", NULL), "ctl write-error");
	CHECK_ST(rd_check(e, 1, 0, 10, 1), 0);
	CHECK_ST(rd_check(e, 1, 8, 4, 1), VC_SC_READ_ERROR);
	CHECK_ST(rd_check(e, 1, 14, 1, 1), VC_SC_READ_ERROR);
	CHECK_ST(rd_check(e, 1, 15, 4, 1), 0);
	CHECK_ST(wr(e, 1, 10, 1, 2, 0), 0);	/* writes still work there */
	CHECK_ST(wr(e, 1, 96, 8, 2, 0), VC_SC_WRITE_FAULT);
	CHECK_ST(wr(e, 1, 96, 4, 2, 0), 0);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_WRITE_ZEROES, 100, 1), VC_SC_WRITE_FAULT);
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.media_errors == 4, "media_errors %llu",
	      (unsigned long long)hl.media_errors);
	CHECK(stat_get(e, "media_errors") == 4, "stats media_errors");
	CHECK(!ctl(e, "faults", NULL, NULL, NULL) && out_has(e, "read-error"),
	      "faults listing");
	CHECK(!ctl(e, "clear", NULL, NULL, NULL), "ctl clear");
	CHECK_ST(rd_check(e, 1, 11, 4, 1), 0);
	CHECK_ST(rd_check(e, 1, 10, 1, 2), 0);
	CHECK_ST(wr(e, 1, 100, 1, 3, 0), 0);
	/* bad ctl usage */
	CHECK(ctl(e, "read-error", "x", "1", NULL) == 1, "bad ctl accepted");
	CHECK(ctl(e, "frobnicate", NULL, NULL, NULL) == 1, "unknown ctl accepted");
	CHECK(ctl(e, "hang", "0", NULL, NULL) == 1, "hang 0 accepted");
	/* the fault table is bounded (32): the next one is refused, loudly */
	for (i = 0; i < 32; i++)
		CHECK(!ctl(e, "read-error", "5000", "1", NULL), "fault %d", i);
	CHECK(ctl(e, "write-error", "6000", "1", NULL) == 1 &&
	      out_has(e, "too many faults"), "fault table overflow accepted");
	CHECK(ctl(e, "hang", "1", NULL, NULL) == 1, "hang over a full table");
	CHECK(!ctl(e, "clear", NULL, NULL, NULL), "ctl clear full table");
	CHECK(!ctl(e, "hang", "1", "7000", "1"), "fault after clear");
	CHECK(!ctl(e, "clear", NULL, NULL, NULL), "ctl clear");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_hang_abort(struct env *e)
{
	uint64_t dma;
	struct vc_sqe s;
	struct vc_cqe c;
	int cid1, cid2, st;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 2, 32), "%s", e->h.err);
	CHECK(!ctl(e, "hang", "1", NULL, NULL), "ctl hang");
	dma = fh_alloc(&e->h, 4096, 4096);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_CMD_READ;
	s.nseg = 1;
	s.dptr = dma;
	s.dlen = 512;
	s.rw.slba = 3;
	s.rw.nlb = 1;
	cid1 = fh_post(&e->h, 1, &s, 1);
	CHECK(fh_reap(&e->h, 1, &c, 300) == -1, "hung command completed");
	/* other commands still complete, on the same queue too */
	CHECK_ST(wr(e, 1, 0, 1, 1, 0), 0);
	CHECK_ST(rd_check(e, 2, 0, 1, 1), 0);
	CHECK(stat_get(e, "hung_cmds") == 1, "hung_cmds");
	/* abort it */
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_ABORT;
	s.abort.sqid = 1;
	s.abort.cid = cid1;
	st = fh_cmd(&e->h, 0, &s, &c, 5000);
	CHECK(st == 0 && c.result == 0, "abort st %d result %u", st, c.result);
	CHECK(!fh_reap(&e->h, 1, &c, 5000), "aborted command not completed");
	CHECK(c.cid == cid1 && VC_CQE_STATUS(c.status) == VC_SC_ABORT_REQ,
	      "cid %u status %x", c.cid, c.status);
	/* aborting something that is not there */
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_ABORT;
	s.abort.sqid = 1;
	s.abort.cid = 999;
	st = fh_cmd(&e->h, 0, &s, &c, 5000);
	CHECK(st == 0 && c.result == 1, "abort of nothing: st %d result %u", st,
	      c.result);
	/* range-limited hang: only commands touching LBA 1000.. hang */
	CHECK(!ctl(e, "hang", "1", "1000", "8"), "ctl hang range");
	CHECK_ST(wr(e, 1, 0, 8, 2, 0), 0);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_CMD_WRITE;
	s.nseg = 1;
	s.dptr = dma;
	s.dlen = 512;
	s.rw.slba = 1004;
	s.rw.nlb = 1;
	cid2 = fh_post(&e->h, 2, &s, 1);
	CHECK(fh_reap(&e->h, 2, &c, 300) == -1, "hung write completed");
	/* deleting the SQ completes it with ABORT_SQ_DEL */
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_DELETE_SQ;
	s.queue.qid = 2;
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), 0);
	CHECK(!fh_reap(&e->h, 2, &c, 2000), "no completion after SQ delete");
	CHECK(c.cid == cid2 && VC_CQE_STATUS(c.status) == VC_SC_ABORT_SQ_DEL,
	      "cid %u status %x", c.cid, c.status);
	CHECK(stat_get(e, "aborts") == 1, "aborts counter");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * stall, hang-admin, ready-delay: the faults the driver's error paths are
 * tested with.  A stalled card finishes the command it holds (its data
 * moves) before it notices a disable; its heartbeat stops meanwhile.
 */
static int t_stall(struct env *e)
{
	uint64_t dma, t0;
	struct vc_sqe s;
	struct vc_cqe c;
	uint32_t hb;
	int cid, st;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 2, 32), "%s", e->h.err);
	CHECK(ctl(e, "stall", "0", NULL, NULL) == 1, "stall 0 accepted");
	CHECK(ctl(e, "stall", "10", "disk", NULL) == 1, "stall kind accepted");
	CHECK(!ctl(e, "stall", "1500", "admin", NULL), "ctl stall admin");
	CHECK(!ctl(e, "faults", NULL, NULL, NULL) &&
	      out_has(e, "stall 1500 ms admin"), "faults listing");
	/* an I/O command is not stalled by an admin stall */
	CHECK_ST(wr(e, 1, 0, 1, 1, 0), 0);
	dma = fh_alloc(&e->h, 4096, 4096);
	memset(fh_ptr(&e->h, dma), 0xee, 4096);
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_GET_LOG;
	s.nseg = 1;
	s.dptr = dma;
	s.dlen = sizeof(struct vc_health_log);
	s.log.lid = VC_LOG_HEALTH;
	t0 = ms_now();
	cid = fh_post(&e->h, 0, &s, 1);
	usleep(300000);
	hb = e->h.regs->heartbeat;
	usleep(300000);
	CHECK(e->h.regs->heartbeat == hb, "heartbeat moves during a stall");
	/* disable while stalled: the command still completes first */
	e->h.regs->cc = 0;
	fh_ring(&e->h, 0);
	CHECK(!fh_reap(&e->h, 0, &c, 5000), "stalled command never completed");
	CHECK(c.cid == cid && VC_CQE_STATUS(c.status) == 0, "cid %u status %x",
	      c.cid, c.status);
	CHECK(ms_now() - t0 >= 1400, "stall lasted %llu ms",
	      (unsigned long long)(ms_now() - t0));
	CHECK(*(uint8_t *)fh_ptr(&e->h, dma) != 0xee ||
	      ((uint8_t *)fh_ptr(&e->h, dma))[8] != 0xee, "log not written");
	CHECK(!fh_wait_csts(&e->h, VC_CSTS_RDY, 0, 3000), "RDY after stall");
	hb = e->h.regs->heartbeat;
	usleep(300000);
	CHECK(e->h.regs->heartbeat != hb, "heartbeat frozen after the stall");
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK_ST(fh_create_ioq(&e->h, 1, 32), 0);

	/* an I/O stall: the read's data lands after the stall */
	CHECK(!ctl(e, "stall", "800", "io", NULL), "ctl stall io");
	t0 = ms_now();
	CHECK_ST(rd_check(e, 1, 0, 1, 1), 0);
	CHECK(ms_now() - t0 >= 700, "I/O stall lasted %llu ms",
	      (unsigned long long)(ms_now() - t0));

	/* hang-admin abort: only aborts are swallowed */
	CHECK(ctl(e, "hang-admin", "1", "read", NULL) == 1, "bad kind accepted");
	CHECK(!ctl(e, "hang-admin", "1", "abort", NULL), "ctl hang-admin abort");
	CHECK(!ctl(e, "faults", NULL, NULL, NULL) &&
	      out_has(e, "hang-admin count 1 abort"), "faults listing");
	{
		struct vc_identify id;

		CHECK_ST(fh_identify(&e->h, &id), 0);
	}
	/* the next abort is swallowed, then all is normal */
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_ABORT;
	s.abort.sqid = 1;
	s.abort.cid = 5;
	CHECK(fh_cmd(&e->h, 0, &s, &c, 500) == -1, "swallowed abort completed");
	CHECK(stat_get(e, "hung_cmds") == 1, "hung_cmds");
	st = fh_cmd(&e->h, 0, &s, &c, 5000);
	CHECK(st == 0 && c.result == 1, "second abort: st %d result %u", st,
	      c.result);

	/* ident overrides reach the identify page; clear restores */
	{
		struct vc_identify id;

		CHECK(ctl(e, "ident", "lba_size", "1", NULL) == 1,
		      "ident lba_size accepted");
		CHECK(!ctl(e, "ident", "max_xfer", "2048", NULL), "ident");
		CHECK(!ctl(e, "ident", "discard_gran", "3000", NULL), "ident");
		CHECK(!ctl(e, "ident", "capacity", "18446744073709551615",
			   NULL), "ident capacity");
		CHECK_ST(fh_identify(&e->h, &id), 0);
		CHECK(id.max_xfer == 2048 && id.discard_gran == 3000 &&
		      id.capacity == UINT64_MAX, "overrides not reported");
		CHECK(!ctl(e, "clear", NULL, NULL, NULL), "clear");
		CHECK_ST(fh_identify(&e->h, &id), 0);
		CHECK(id.max_xfer != 2048 && id.discard_gran == 4096 &&
		      id.capacity != UINT64_MAX, "overrides survived clear");
	}
	/* ready-delay: RDY only after the delay; a withdrawn enable never */
	CHECK(!ctl(e, "ready-delay", "700", NULL, NULL), "ctl ready-delay");
	CHECK(!fh_disable(&e->h, 2000), "disable");
	CHECK(stat_get(e, "hung_cmds") == 0, "hung admin survived reset");
	t0 = ms_now();
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK(ms_now() - t0 >= 600, "ready after %llu ms",
	      (unsigned long long)(ms_now() - t0));
	CHECK(!fh_disable(&e->h, 2000), "disable");
	CHECK(fh_enable(&e->h, 16, 300) == -1, "ready before the delay");
	e->h.regs->cc = 0;
	fh_ring(&e->h, 0);
	usleep(800000);
	CHECK(stat_get(e, "ready") == 0 && stat_get(e, "enabled") == 0,
	      "withdrawn enable became ready");
	CHECK(!ctl(e, "clear", NULL, NULL, NULL), "clear");
	CHECK(!fh_enable(&e->h, 16, 300), "%s", e->h.err);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_reset(struct env *e)
{
	uint64_t dma;
	struct vc_sqe s;
	struct vc_cqe c;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "flash"), "start");
	CHECK(!env_connect(e, 2, 32), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 16, 1, 0), 0);
	CHECK(!ctl(e, "hang", "3", NULL, NULL), "ctl hang");
	dma = fh_alloc(&e->h, 64 * 4096, 4096);
	for (int i = 0; i < 20; i++) {
		memset(&s, 0, sizeof(s));
		s.opcode = i % 2 ? VC_CMD_READ : VC_CMD_WRITE;
		s.nseg = 1;
		s.dptr = dma + i * 4096;
		s.dlen = 4096;
		s.rw.slba = 100 + i * 8;
		s.rw.nlb = 8;
		if (s.opcode == VC_CMD_WRITE)
			fill(fh_ptr(&e->h, s.dptr), s.rw.slba, 8, 512, 2);
		fh_post(&e->h, 1 + i % 2, &s, 1);
	}
	CHECK(!fh_disable(&e->h, 5000), "%s", e->h.err);
	CHECK(stat_get(e, "hung_cmds") == 0, "hung commands survived reset");
	/* the data of the old queues is left alone from now on */
	memset(fh_ptr(&e->h, e->h.q[1].cq_dma), 0, 32 * 16);
	memset(fh_ptr(&e->h, e->h.q[2].cq_dma), 0, 32 * 16);
	usleep(200000);
	for (int q = 1; q <= 2; q++)
		for (int i = 0; i < 32; i++)
			CHECK(!((struct vc_cqe *)fh_ptr(&e->h, e->h.q[q].cq_dma))[i].status,
			      "CQE posted after reset");
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK_ST(fh_create_ioq(&e->h, 1, 32), 0);
	CHECK_ST(fh_create_ioq(&e->h, 2, 32), 0);
	CHECK_ST(rd_check(e, 2, 0, 16, 1), 0);
	CHECK_ST(wr(e, 1, 0, 16, 3, 0), 0);
	CHECK_ST(rd_check(e, 2, 0, 16, 3), 0);
	CHECK(fh_reap(&e->h, 1, &c, 100) == -1, "stray completion cid %u", c.cid);
	CHECK(stat_get(e, "resets") >= 1, "resets counter");
	/* a garbage doorbell makes the card fatal; a reset recovers */
	e->h.db[1].sq_tail = 1000;
	fh_ring(&e->h, 1);
	CHECK(!fh_wait_csts(&e->h, VC_CSTS_CFS, VC_CSTS_CFS, 2000), "no CFS");
	CHECK(!fh_disable(&e->h, 5000), "%s", e->h.err);
	CHECK(!fh_wait_csts(&e->h, VC_CSTS_CFS, 0, 2000), "CFS not cleared");
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK_ST(fh_create_ioq(&e->h, 1, 32), 0);
	CHECK_ST(rd_check(e, 1, 0, 16, 3), 0);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_cq_full(struct env *e)
{
	struct vc_sqe s = { .opcode = VC_CMD_FLUSH };
	struct vc_cqe c, *ring;
	struct fakehost *h = &e->h;
	struct vc_sqe cq = { .opcode = VC_ADM_CREATE_CQ };
	int n = 0;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 0, 0), "%s", h->err);
	/* a host that sizes its CQ (4) below its SQ (16) */
	memset(&h->q[1], 0, sizeof(h->q[1]));
	h->q[1].size = 16;
	h->q[1].vector = 1;
	h->q[1].phase = 1;
	h->q[1].next_cid = 1;
	h->q[1].sq_dma = fh_alloc(h, 16 * 64, 4096);
	h->q[1].cq_dma = fh_alloc(h, 4096, 4096);
	h->q[1].sq = fh_ptr(h, h->q[1].sq_dma);
	h->q[1].cq = fh_ptr(h, h->q[1].cq_dma);
	cq.dptr = h->q[1].cq_dma;
	cq.queue.qid = 1;
	cq.queue.qsize = 4;
	cq.queue.vector = 1;
	CHECK_ST(fh_cmd(h, 0, &cq, NULL, 5000), 0);
	memset(&cq, 0, sizeof(cq));
	cq.opcode = VC_ADM_CREATE_SQ;
	cq.dptr = h->q[1].sq_dma;
	cq.queue.qid = 1;
	cq.queue.qsize = 16;
	cq.queue.cqid = 1;
	CHECK_ST(fh_cmd(h, 0, &cq, NULL, 5000), 0);
	for (int i = 0; i < 10; i++)
		fh_post(h, 1, &s, 0);
	fh_ring_sq(h, 1);
	usleep(300000);
	ring = h->q[1].cq;
	for (int i = 0; i < 3; i++)
		CHECK(ring[i].status & VC_CQE_PHASE, "slot %d not written", i);
	CHECK(!(ring[3].status & VC_CQE_PHASE), "CQ overrun: slot 3 written");
	/* consume with the real CQ size */
	h->q[1].size = 4;
	while (n < 10) {
		CHECK(!fh_reap(h, 1, &c, 3000), "only %d of 10 completions", n);
		CHECK(VC_CQE_STATUS(c.status) == 0, "status");
		n++;
	}
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_shutdown(struct env *e)
{
	struct vc_health_log hl;
	char buf[2048];

	CHECK(!env_format(e, "16M", "512"), "format");
	CHECK(!env_start(e, "--timing", "flash"), "start");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 128, 5, 0), 0);		/* buffered */
	CHECK(stat_get(e, "wbuf_bytes") == 128 * 512, "write buffer in use");
	CHECK(!fh_shutdown(&e->h, 5000), "no SHST complete");
	CHECK(stat_get(e, "wbuf_bytes") == 0, "buffer not destaged");
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "clean 1"), "media not marked clean after SHN");
	/* a write after the shutdown makes it dirty again; a second one cleans */
	CHECK_ST(wr(e, 1, 200, 1, 5, 0), 0);
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "clean 0"), "media clean after a write");
	CHECK(!fh_disable(&e->h, 5000), "%s", e->h.err);
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK(!(e->h.regs->csts & VC_CSTS_SHST_MASK), "SHST not cleared by enable");
	CHECK(!fh_shutdown(&e->h, 5000), "no SHST complete");
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "clean 1"), "media not clean after 2nd SHN");
	/* power lost after a clean shutdown: not an unsafe shutdown */
	CHECK(env_kill(e, SIGKILL) == 128 + SIGKILL, "kill");
	env_disconnect(e);
	CHECK(!env_start(e, "--timing", "nodelay"), "restart");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(rd_check(e, 1, 0, 128, 5), 0);
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.power_cycles == 2 && hl.unsafe_shutdowns == 0,
	      "power_cycles %llu unsafe %llu",
	      (unsigned long long)hl.power_cycles,
	      (unsigned long long)hl.unsafe_shutdowns);
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "clean 0"), "media clean while running");
	/* unclean: SIGKILL while running */
	CHECK(env_kill(e, SIGKILL) == 128 + SIGKILL, "kill");
	env_disconnect(e);
	CHECK(!env_start(e, "--timing", "nodelay"), "restart 2");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.power_cycles == 3 && hl.unsafe_shutdowns == 1,
	      "power_cycles %llu unsafe %llu",
	      (unsigned long long)hl.power_cycles,
	      (unsigned long long)hl.unsafe_shutdowns);
	/* SIGTERM: clean exit, data destaged */
	CHECK_ST(wr(e, 1, 1000, 8, 6, 0), 0);
	CHECK(env_kill(e, SIGTERM) == 0, "SIGTERM exit status");
	env_disconnect(e);
	CHECK(run_fw(e, "info", "--media", e->media, "--json", NULL) == 0 &&
	      !read_out(e, buf, sizeof(buf)) && strstr(buf, "\"clean\": 1") &&
	      strstr(buf, "\"unsafe_shutdowns\": 1"), "info after SIGTERM: %s", buf);
	CHECK(!env_start(e, "--timing", "nodelay"), "restart 3");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(rd_check(e, 1, 1000, 8, 6), 0);
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.unsafe_shutdowns == 1, "unsafe %llu",
	      (unsigned long long)hl.unsafe_shutdowns);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_wbuf_pressure(struct env *e)
{
	CHECK(!env_format(e, "64M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay", "--wbuf", "1M"), "start");
	CHECK(!env_connect(e, 2, 64), "%s", e->h.err);
	for (int i = 0; i < 32; i++)	/* 16 MiB through a 1 MiB buffer */
		CHECK_ST(wr(e, 1 + i % 2, (uint64_t)i * 1024, 1024, 20 + i % 7, 0), 0);
	CHECK(stat_get(e, "wbuf_bytes") <= 1 << 20, "buffer over its size");
	for (int i = 0; i < 32; i++)
		CHECK_ST(rd_check(e, 1, (uint64_t)i * 1024, 1024, 20 + i % 7), 0);
	CHECK(stat_get(e, "destages") >= 8, "no background destage");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_bad_media(struct env *e)
{
	char bad[256];
	int fd;

	snprintf(bad, sizeof(bad), "%s/nope", e->dir);
	CHECK(run_fw(e, "--socket", e->sock, "--media", bad, "--guest-mem",
		     e->mem, NULL) == 2 && out_has(e, "does not exist"),
	      "missing media accepted");
	fd = open(bad, O_CREAT | O_WRONLY, 0644);
	CHECK(fd >= 0 && write(fd, "hello", 5) == 5, "write");
	close(fd);
	CHECK(run_fw(e, "--socket", e->sock, "--media", bad, "--guest-mem",
		     e->mem, NULL) == 2 && out_has(e, "too short"),
	      "short media accepted");
	CHECK(truncate(bad, 65536) == 0, "truncate");
	CHECK(run_fw(e, "--socket", e->sock, "--media", bad, "--guest-mem",
		     e->mem, NULL) == 2 && out_has(e, "bad magic"),
	      "foreign media accepted");
	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(run_fw(e, "format", "--media", e->media, "--capacity", "8M", NULL)
	      == 2 && out_has(e, "exists"), "format overwrote a file");
	CHECK(truncate(e->media, 4096 + 4 * 1024 * 1024) == 0, "truncate");
	CHECK(run_fw(e, "--socket", e->sock, "--media", e->media, "--guest-mem",
		     e->mem, NULL) == 2 && out_has(e, "is short"),
	      "truncated media accepted");
	CHECK(truncate(e->media, 4096 + 8 * 1024 * 1024) == 0, "truncate");
	fd = open(e->media, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, "X", 1, 100) == 1, "corrupt");
	close(fd);
	CHECK(run_fw(e, "--socket", e->sock, "--media", e->media, "--guest-mem",
		     e->mem, NULL) == 2 && out_has(e, "corrupt"),
	      "corrupt media accepted");
	/* bad options */
	CHECK(run_fw(e, "--socket", e->sock, "--media", e->media, "--guest-mem",
		     e->mem, "--queues", "0", NULL) == 2 && out_has(e, "--queues"),
	      "--queues 0 accepted");
	CHECK(run_fw(e, "--socket", e->sock, "--media", e->media, "--guest-mem",
		     e->mem, "--timing", "slow", NULL) == 2, "--timing slow");
	CHECK(run_fw(e, "--socket", e->sock, "--media", e->media, NULL) == 2 &&
	      out_has(e, "--guest-mem"), "missing --guest-mem accepted");
	CHECK(run_fw(e, "--bogus", NULL) == 2, "unknown option accepted");
	CHECK(run_fw(e, "format", "--media", bad, "--capacity", "1000",
		     "--force", NULL) == 2, "capacity not multiple of LBA");
	CHECK(run_fw(e, "format", "--media", bad, "--capacity", "1M",
		     "--lba-size", "1024", "--force", NULL) == 2, "lba 1024");
	CHECK(run_fw(e, "--help", NULL) == 0 && out_has(e, "SYNOPSIS"), "--help");
	return 0;
}

static int t_bad_magic(struct env *e)
{
	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--bad-magic"), "start");
	CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3), "%s", e->h.err);
	e->connected = 1;
	CHECK(e->h.regs->magic != VC_CARD_MAGIC, "magic is right");
	CHECK(env_stop(e) == 0, "exit");
	CHECK(!env_start(e, "--bad-version"), "start");
	CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3), "%s", e->h.err);
	e->connected = 1;
	CHECK(e->h.regs->magic == VC_CARD_MAGIC &&
	      VC_IF_MAJOR(e->h.regs->version) != VC_IF_VERSION_MAJOR,
	      "version %x", e->h.regs->version);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_refuse(struct env *e)
{
	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!ctl(e, "refuse", NULL, NULL, NULL), "ctl refuse");
	CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3), "%s", e->h.err);
	e->connected = 1;
	CHECK(fh_enable(&e->h, 16, 500) == -1, "became ready");
	CHECK(!(e->h.regs->csts & VC_CSTS_CFS), "CFS without cfs");
	CHECK(!fh_disable(&e->h, 2000), "disable");
	CHECK(!ctl(e, "refuse", "cfs", NULL, NULL), "ctl refuse cfs");
	CHECK(fh_enable(&e->h, 16, 500) == -1, "became ready");
	CHECK(e->h.regs->csts & VC_CSTS_CFS, "no CFS");
	CHECK(!ctl(e, "clear", NULL, NULL, NULL), "clear");
	CHECK(!fh_disable(&e->h, 2000), "disable");
	CHECK(!fh_wait_csts(&e->h, VC_CSTS_CFS, 0, 2000), "CFS stuck");
	CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
	CHECK(env_stop(e) == 0, "exit");
	/* --refuse at start */
	CHECK(!env_start(e, "--refuse"), "start");
	CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3), "%s", e->h.err);
	e->connected = 1;
	CHECK(fh_enable(&e->h, 16, 300) == -1, "became ready with --refuse");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_reconnect(struct env *e)
{
	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay", "--stay"), "start");
	CHECK(!env_connect(e, 2, 16), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 7, 3, 8, 0), 0);
	env_disconnect(e);
	usleep(100000);
	CHECK(waitpid(e->pid, NULL, WNOHANG) == 0, "exited despite --stay");
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "clean 1"), "not clean after disconnect");
	unlink(e->mem);		/* the next QEMU brings a new RAM file */
	CHECK(!env_connect(e, 2, 16), "%s", e->h.err);
	CHECK(e->h.id == 2, "second client id %d", e->h.id);
	CHECK_ST(rd_check(e, 2, 7, 3, 8), 0);
	/* a new client while one is connected replaces it (re-plug) */
	{
		struct fakehost old = e->h;
		struct vc_cqe c;

		unlink(e->mem);	/* the new QEMU's RAM file */
		CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 3), "%s",
		      e->h.err);
		CHECK(e->h.id == 3, "third client id %d", e->h.id);
		CHECK(!fh_enable(&e->h, 16, 5000), "%s", e->h.err);
		CHECK_ST(fh_create_ioq(&e->h, 1, 16), 0);
		CHECK_ST(rd_check(e, 1, 7, 3, 8), 0);
		/* the replaced guest gets no interrupt any more */
		CHECK(fh_reap(&old, 1, &c, 100) == -1, "old guest interrupted");
		fh_close(&old);
		usleep(100000);
		CHECK(waitpid(e->pid, NULL, WNOHANG) == 0,
		      "closing the replaced connection stopped the card");
		CHECK_ST(rd_check(e, 1, 7, 3, 8), 0);
	}
	CHECK(env_kill(e, SIGINT) == 0, "SIGINT exit");
	return 0;
}

static int t_late_guest_mem(struct env *e)
{
	/* the guest RAM file appears only when the guest (QEMU) starts */
	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(access(e->mem, F_OK) != 0, "guest mem exists");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 1, 16), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 1, 1, 0), 0);
	CHECK_ST(rd_check(e, 1, 0, 1, 1), 0);
	CHECK(env_stop(e) == 0, "exit");
	/*
	 * A stale RAM file from an earlier run is there when the guest
	 * connects, and replaced (new file) before the guest enables the card.
	 */
	{
		char mem2[256];
		int fd = open(e->mem, O_RDWR | O_CREAT | O_TRUNC, 0600);

		CHECK(fd >= 0 && ftruncate(fd, MEM_SIZE) == 0, "stale file");
		close(fd);
		snprintf(mem2, sizeof(mem2), "%s.new", e->mem);
		CHECK(!env_start(e, "--timing", "nodelay"), "start");
		CHECK(!fh_connect(&e->h, e->sock, mem2, MEM_SIZE, 3), "%s",
		      e->h.err);
		e->connected = 1;
		usleep(50000);
		CHECK(rename(mem2, e->mem) == 0, "rename");
		CHECK(!env_connect_enabled(e), "%s", e->h.err);
		CHECK_ST(rd_check(e, 1, 0, 1, 1), 0);
		CHECK(env_stop(e) == 0, "exit");
	}
	return 0;
}

static int t_many_queues(struct env *e)
{
	char *extra[] = { "--queues", "16", "--timing", "flash", NULL };

	CHECK(!env_format(e, "64M", "512"), "format");
	CHECK(!env_start_v(e, extra), "start");
	CHECK(!fh_connect(&e->h, e->sock, e->mem, MEM_SIZE, 17), "%s", e->h.err);
	e->connected = 1;
	CHECK(!fh_enable(&e->h, 32, 5000), "%s", e->h.err);
	CHECK_ST(fh_identify(&e->h, &e->id), 0);
	CHECK(e->id.num_ioq == 16, "num_ioq %u", e->id.num_ioq);
	for (int q = 1; q <= 16; q++)
		CHECK_ST(fh_create_ioq(&e->h, q, 64), 0);
	for (int q = 1; q <= 16; q++)
		for (int i = 0; i < 8; i++) {
			uint64_t dma = fh_alloc(&e->h, 8192, 4096);
			struct vc_sqe s = { .opcode = VC_CMD_WRITE, .nseg = 1,
					    .dptr = dma, .dlen = 8192 };

			s.rw.slba = (uint64_t)(q * 8 + i) * 16;
			s.rw.nlb = 16;
			fill(fh_ptr(&e->h, dma), s.rw.slba, 16, 512, q);
			fh_post(&e->h, q, &s, 0);
		}
	for (int q = 1; q <= 16; q++)
		fh_ring_sq(&e->h, q);
	for (int q = 1; q <= 16; q++)
		for (int i = 0; i < 8; i++) {
			struct vc_cqe c;

			CHECK(!fh_reap(&e->h, q, &c, 10000), "queue %d lost a completion", q);
			CHECK(c.status >> 1 == 0 && c.sqid == q, "status %x sqid %u",
			      c.status, c.sqid);
		}
	for (int q = 1; q <= 16; q++)
		CHECK_ST(rd_check(e, 17 - q, (uint64_t)q * 128, 128, q), 0);
	for (int q = 16; q >= 1; q--)
		CHECK_ST(fh_delete_ioq(&e->h, q), 0);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_fatal(struct env *e)
{
	struct fakehost *h = &e->h;

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay", "--verbose"), "start");
	CHECK(!fh_connect(h, e->sock, e->mem, MEM_SIZE, 3), "%s", h->err);
	e->connected = 1;
	/* admin queue sizes 0: CFS */
	h->regs->aqa = 0;
	h->regs->cc = VC_CC_EN;
	fh_ring(h, 0);
	CHECK(!fh_wait_csts(h, VC_CSTS_CFS | VC_CSTS_RDY, VC_CSTS_CFS, 2000),
	      "no CFS for aqa 0: csts %x", h->regs->csts);
	CHECK(!fh_disable(h, 2000), "disable");
	CHECK(!fh_wait_csts(h, VC_CSTS_CFS, 0, 2000), "CFS not cleared");
	/* admin queues outside guest RAM: CFS, without a doorbell (polled) */
	h->regs->aqa = 16 | 16 << 16;
	h->regs->asq = MEM_SIZE;
	h->regs->acq = 4096;
	h->regs->cc = VC_CC_EN;
	CHECK(!fh_wait_csts(h, VC_CSTS_CFS | VC_CSTS_RDY, VC_CSTS_CFS, 2000),
	      "no CFS for asq outside memory");
	CHECK(!fh_disable(h, 2000), "disable");
	CHECK(!env_connect_enabled(e), "%s", h->err);
	/* a CQ head beyond the CQ: CFS when the card next posts */
	h->db[1].cq_head = 5000;
	{
		struct vc_sqe s = { .opcode = VC_CMD_FLUSH };
		struct vc_cqe c;

		fh_post(h, 1, &s, 1);
		CHECK(fh_reap(h, 1, &c, 300) == -1, "completion posted");
	}
	CHECK(!fh_wait_csts(h, VC_CSTS_CFS, VC_CSTS_CFS, 2000), "no CFS");
	CHECK(!fh_disable(h, 2000), "disable");
	CHECK(!env_connect_enabled(e), "%s", h->err);
	CHECK_ST(wr(e, 1, 0, 4, 1, 0), 0);
	CHECK_ST(rd_check(e, 1, 0, 4, 1), 0);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

static int t_options_ctl(struct env *e)
{
	char *extra[] = { "--serial", "OVERRIDE-7", "--model", "Model X",
			  "--qdepth", "64", "--threads", "1", "--channels",
			  "2", "--dies", "1", NULL };
	char ctlbin[256], buf[4096];
	const char *slash = strrchr(fw_bin, '/');
	struct vc_sqe s = { .opcode = VC_ADM_CREATE_CQ };

	CHECK(!env_format(e, "8M", "4096"), "format");
	CHECK(!env_start_v(e, extra), "start");
	CHECK(!env_connect(e, 1, 64), "%s", e->h.err);
	CHECK(!memcmp(e->id.serial, "OVERRIDE-7          ", 20), "serial %.20s",
	      e->id.serial);
	CHECK(!memcmp(e->id.model, "Model X ", 8), "model %.40s", e->id.model);
	CHECK(e->id.max_qdepth == 64 && e->h.regs->cap_mqes == 64, "qdepth");
	s.dptr = fh_alloc(&e->h, 8192, 4096);
	s.queue.qid = 2;
	s.queue.qsize = 65;
	s.queue.vector = 2;
	CHECK_ST(fh_cmd(&e->h, 0, &s, NULL, 5000), VC_SC_QUEUE_SIZE);
	CHECK_ST(wr(e, 1, 0, 16, 1, 0), 0);
	/* vcfw-ctl: the same binary under another name */
	snprintf(ctlbin, sizeof(ctlbin), "%.*s/vcfw-ctl",
		 slash ? (int)(slash - fw_bin) : 1, slash ? fw_bin : ".");
	{
		char *argv[] = { ctlbin, "--ctl", e->ctl, "stats", NULL };
		int pid = spawn(e->out, 0, argv);

		CHECK(wait_exit(pid, 10000) == 0, "vcfw-ctl stats failed");
		CHECK(!read_out(e, buf, sizeof(buf)) &&
		      strstr(buf, "wbuf_bytes               65536\n") &&
		      !strstr(buf, "\nok"), "stats text: %s", buf);
	}
	CHECK(!ctl(e, "flush", NULL, NULL, NULL), "ctl flush");
	CHECK(stat_get(e, "wbuf_bytes") == 0, "ctl flush did not destage");
	CHECK(stat_get(e, "flash_bytes_programmed") == 65536, "programmed");
	CHECK(!ctl(e, "help", NULL, NULL, NULL) && out_has(e, "powercut"), "help");
	CHECK(ctl(e, "hang", "2", "5", NULL) == 1, "hang with 2 args accepted");
	CHECK(!ctl(e, "hang", "2", "5", "1"), "hang range");
	CHECK(!ctl(e, "faults", NULL, NULL, NULL) &&
	      out_has(e, "hang count 2 lba 5+1"), "faults listing");
	CHECK(run_fw(e, "ctl", "--ctl", e->dir, "stats", NULL) == 1 &&
	      out_has(e, "cannot connect"), "ctl to a non-socket");
	CHECK(env_stop(e) == 0, "exit");
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "serial TESTSER01") && out_has(e, "power_cycles 1"),
	      "info");
	return 0;
}

/* The card's own storage fails (host file I/O error): CFS, recovery. */
static int t_media_failure(struct env *e)
{
	struct vc_health_log hl;
	int st;

	CHECK(!env_format(e, "16M", "512"), "format");
	child_fsize = 8 << 20;	/* writes beyond 8 MiB of the file fail */
	st = env_start(e, "--timing", "nodelay");
	child_fsize = 0;
	CHECK(!st, "start");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(wr(e, 1, 0, 8, 1, 0), 0);
	CHECK_ST(wr(e, 1, 20000, 8, 1, VC_SQE_F_FUA), VC_SC_INTERNAL);
	CHECK(!fh_wait_csts(&e->h, VC_CSTS_CFS, VC_CSTS_CFS, 2000), "no CFS");
	/* reset: the card retries its buffer, which fits: ready again */
	CHECK(!fh_disable(&e->h, 2000), "disable");
	CHECK(!env_connect_enabled(e), "%s", e->h.err);
	CHECK_ST(rd_check(e, 1, 0, 8, 1), 0);
	/* buffered data the card can never write: FLUSH fails, card dead */
	CHECK_ST(wr(e, 1, 20000, 8, 2, 0), 0);
	CHECK_ST(fh_simple(&e->h, 1, VC_CMD_FLUSH, 0, 0), VC_SC_INTERNAL);
	CHECK(!fh_wait_csts(&e->h, VC_CSTS_CFS, VC_CSTS_CFS, 2000), "no CFS");
	CHECK(!fh_disable(&e->h, 2000), "disable");
	CHECK(fh_enable(&e->h, 16, 500) == -1 && (e->h.regs->csts & VC_CSTS_CFS),
	      "a card that cannot write its buffer became ready");
	CHECK(env_kill(e, SIGTERM) == 1, "exit status after a failed destage");
	env_disconnect(e);
	CHECK(run_fw(e, "info", "--media", e->media, NULL) == 0 &&
	      out_has(e, "clean 0"), "media marked clean");
	CHECK(!env_start(e, "--timing", "nodelay"), "restart");
	CHECK(!env_connect(e, 1, 32), "%s", e->h.err);
	CHECK_ST(rd_check(e, 1, 0, 8, 1), 0);
	CHECK_ST(rd_check(e, 1, 20000, 8, 0), 0);
	CHECK_ST(fh_get_health(&e->h, &hl), 0);
	CHECK(hl.unsafe_shutdowns == 1, "unsafe %llu",
	      (unsigned long long)hl.unsafe_shutdowns);
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

/*
 * Model-based stress: random reads, writes, FUA writes, flushes, write-zeroes
 * and deallocates, several in flight on two queues with flash timing and a
 * small write buffer (background destage), checked against a model; then a
 * power cut and a check that every block holds its last durable version or
 * a later one.
 */
#define SM_BLOCKS	512
#define SM_QD		8

struct sm_block {
	uint32_t *ver;		/* versions in completion order, [0] = 0 */
	uint32_t n, durable;	/* index of the oldest version allowed */
	int busy;
};

struct sm_slot {
	int used, op, q, cid, fua;
	uint64_t slba;
	uint32_t nlb, ver, *snap;
	uint64_t dma;
};

static void sm_push(struct sm_block *b, uint32_t ver)
{
	b->ver = realloc(b->ver, (b->n + 1) * sizeof(*b->ver));
	b->ver[b->n++] = ver;
}

static int t_stress_model(struct env *e)
{
	static struct sm_block blk[SM_BLOCKS];
	struct sm_slot slot[SM_QD];
	struct fakehost *h = &e->h;
	unsigned seed = 4242;
	uint32_t next_ver = 1;
	int submitted = 0, inflight = 0, ok = 0, rc = 0;
	int counts[8] = { 0 };

	memset(blk, 0, sizeof(blk));
	memset(slot, 0, sizeof(slot));
	for (int i = 0; i < SM_BLOCKS; i++)
		sm_push(&blk[i], 0);
	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "flash", "--wbuf", "1M", "--threads",
			 "3"), "start");
	CHECK(!env_connect(e, 2, 16), "%s", h->err);
	for (int i = 0; i < SM_QD; i++)
		slot[i].dma = fh_alloc(h, 16 * 512, 4096);

	while (submitted < 1500 || inflight) {
		/* submit */
		while (submitted < 1500 && inflight < SM_QD) {
			struct sm_slot *sl = NULL;
			struct vc_sqe sq = { 0 };
			int r = rand_r(&seed) % 100, free_range = 1;

			for (int i = 0; i < SM_QD && !sl; i++)
				if (!slot[i].used)
					sl = &slot[i];
			sl->op = r < 50 ? VC_CMD_WRITE : r < 72 ? VC_CMD_READ :
				 r < 80 ? VC_CMD_FLUSH : r < 87 ? VC_CMD_WRITE :
				 r < 94 ? VC_CMD_WRITE_ZEROES : VC_CMD_DEALLOCATE;
			sl->fua = r >= 80 && r < 87;
			sl->nlb = 1 + rand_r(&seed) % 16;
			sl->slba = rand_r(&seed) % (SM_BLOCKS - sl->nlb + 1);
			if (sl->op != VC_CMD_FLUSH)
				for (uint32_t b = 0; b < sl->nlb; b++)
					if (blk[sl->slba + b].busy)
						free_range = 0;
			if (!free_range)
				continue;	/* try another op */
			sl->used = 1;
			sl->q = 1 + rand_r(&seed) % 2;
			sq.opcode = sl->op;
			if (sl->op == VC_CMD_FLUSH) {
				sl->snap = malloc(SM_BLOCKS * sizeof(uint32_t));
				for (int b = 0; b < SM_BLOCKS; b++)
					sl->snap[b] = blk[b].n - 1;
			} else {
				for (uint32_t b = 0; b < sl->nlb; b++)
					blk[sl->slba + b].busy = 1;
				sq.rw.slba = sl->slba;
				sq.rw.nlb = sl->nlb;
			}
			if (sl->op == VC_CMD_WRITE || sl->op == VC_CMD_READ) {
				sq.nseg = 1;
				sq.dptr = sl->dma;
				sq.dlen = sl->nlb * 512;
			}
			if (sl->op == VC_CMD_WRITE) {
				sl->ver = next_ver++;
				fill(fh_ptr(h, sl->dma), sl->slba, sl->nlb, 512,
				     sl->ver);
				sq.flags = sl->fua ? VC_SQE_F_FUA : 0;
			} else if (sl->op == VC_CMD_READ) {
				memset(fh_ptr(h, sl->dma), 0xee, sl->nlb * 512);
			}
			sl->cid = fh_post(h, sl->q, &sq, 1);
			counts[sl->op - VC_CMD_FLUSH + (sl->fua ? 5 : 0)]++;
			submitted++;
			inflight++;
		}
		/* reap */
		for (int q = 1; q <= 2 && inflight; q++) {
			struct vc_cqe c;
			struct sm_slot *sl = NULL;

			if (fh_reap(h, q, &c, q == 1 ? 5 : 0))
				continue;
			for (int i = 0; i < SM_QD; i++)
				if (slot[i].used && slot[i].q == q &&
				    slot[i].cid == c.cid)
					sl = &slot[i];
			CHECK(sl, "completion for unknown cid %u on %d", c.cid, q);
			CHECK(VC_CQE_STATUS(c.status) == 0, "op %x status %x",
			      sl->op, c.status);
			for (uint32_t b = 0; sl->op != VC_CMD_FLUSH && b < sl->nlb;
			     b++) {
				struct sm_block *bk = &blk[sl->slba + b];

				bk->busy = 0;
				if (sl->op == VC_CMD_READ) {
					int v = block_ver((uint8_t *)fh_ptr(h, sl->dma) +
							  b * 512, sl->slba + b, 512);

					CHECK(v == (int)bk->ver[bk->n - 1],
					      "read block %llu: version %d, model %u",
					      (unsigned long long)(sl->slba + b), v,
					      bk->ver[bk->n - 1]);
					continue;
				}
				sm_push(bk, sl->op == VC_CMD_WRITE ? sl->ver : 0);
				if (sl->op != VC_CMD_WRITE || sl->fua)
					bk->durable = bk->n - 1;
			}
			if (sl->op == VC_CMD_FLUSH) {
				for (int b = 0; b < SM_BLOCKS; b++)
					if (sl->snap[b] > blk[b].durable)
						blk[b].durable = sl->snap[b];
				free(sl->snap);
				sl->snap = NULL;
			}
			sl->used = 0;
			inflight--;
		}
	}
	fprintf(stderr, "    ops: flush %d write %d read %d wzeroes %d dealloc %d fua %d\n",
		counts[0], counts[1], counts[2], counts[3], counts[4], counts[6]);
	/* a last burst of unflushed writes, likely lost */
	for (int i = 0; i < 64; i++) {
		uint64_t lba = rand_r(&seed) % SM_BLOCKS;

		CHECK_ST(wr(e, 1 + i % 2, lba, 1, next_ver, 0), 0);
		sm_push(&blk[lba], next_ver++);
	}
	/* power cut, then every block must be durable-or-later */
	kill(e->pid, SIGKILL);
	CHECK(wait_exit(e->pid, 10000) >= 0, "firmware did not die");
	e->pid = -1;
	env_disconnect(e);
	CHECK(!env_start(e, "--timing", "nodelay"), "restart");
	CHECK(!env_connect(e, 1, 16), "%s", h->err);
	{
		uint64_t dma = fh_alloc(h, SM_BLOCKS * 512, 4096);
		uint8_t *p = fh_ptr(h, dma);

		CHECK_ST(fh_rw(h, 1, VC_CMD_READ, 0, SM_BLOCKS, 512, dma, 0), 0);
		for (int b = 0; b < SM_BLOCKS && !rc; b++) {
			int v = block_ver(p + b * 512, b, 512), found = 0;

			for (uint32_t i = blk[b].durable; i < blk[b].n; i++)
				if ((int)blk[b].ver[i] == v)
					found = 1;
			if (!found) {
				fprintf(stderr, "    block %d: version %d, allowed from %u (%u versions)\n",
					b, v, blk[b].ver[blk[b].durable], blk[b].n);
				rc = -1;
			}
			ok += found && v == (int)blk[b].ver[blk[b].n - 1];
		}
	}
	fprintf(stderr, "    after the power cut %d of %d blocks hold their newest version\n",
		ok, SM_BLOCKS);
	for (int b = 0; b < SM_BLOCKS; b++)
		free(blk[b].ver);
	CHECK(!rc, "durability violated");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

/* The guest RAM file shrinks under the card: errors, never a crash. */
static int t_guest_mem_shrink(struct env *e)
{
	struct fakehost *h = &e->h;
	struct vc_sqe s = { .opcode = VC_CMD_READ, .nseg = 2,
			    .dptr = 48 << 20, .dlen = 1024 };

	CHECK(!env_format(e, "8M", "512"), "format");
	CHECK(!env_start(e, "--timing", "nodelay"), "start");
	CHECK(!env_connect(e, 1, 16), "%s", h->err);
	CHECK_ST(wr(e, 1, 0, 8, 1, 0), 0);
	CHECK(ftruncate(h->mem_fd, 32 << 20) == 0, "truncate");
	/* the card still believes in 64 MiB; these pages are gone */
	{
		int st = fh_rw(h, 1, VC_CMD_READ, 0, 8, 512, 48 << 20, 0), ws;

		if (st != VC_SC_DATA_XFER && waitpid(e->pid, &ws, WNOHANG) == e->pid) {
			fprintf(stderr, "    firmware died: status 0x%x\n", ws);
			e->pid = -1;
		}
		CHECK_ST(st, VC_SC_DATA_XFER);
	}
	CHECK_ST(fh_rw(h, 1, VC_CMD_WRITE, 0, 8, 512, 40 << 20, 0), VC_SC_DATA_XFER);
	s.rw.nlb = 2;
	CHECK_ST(fh_cmd(h, 1, &s, NULL, 5000), VC_SC_DATA_XFER);
	CHECK_ST(rd_check(e, 1, 0, 8, 1), 0);
	CHECK(!(h->regs->csts & VC_CSTS_CFS), "CFS");
	CHECK(env_stop(e) == 0, "exit");
	return 0;
}

struct fw_test {
	const char *name;
	int (*fn)(struct env *e);
};

static const struct fw_test tests[] = {
	{ "identify", t_identify },
	{ "read-write-sgl", t_rw },
	{ "lba-4k", t_lba_4k },
	{ "error-statuses", t_errors },
	{ "deallocate-write-zeroes", t_zeroes },
	{ "powercut-sigkill", t_powercut },
	{ "powercut-ctl-4k", t_powercut_4k_ctl },
	{ "fault-injection", t_faults },
	{ "hang-abort", t_hang_abort },
	{ "stall-hang-admin-ready-delay", t_stall },
	{ "reset-in-flight", t_reset },
	{ "cq-full", t_cq_full },
	{ "shutdown-counters", t_shutdown },
	{ "wbuf-pressure", t_wbuf_pressure },
	{ "bad-media-options", t_bad_media },
	{ "bad-magic-version", t_bad_magic },
	{ "refuse", t_refuse },
	{ "reconnect-stay", t_reconnect },
	{ "late-guest-mem", t_late_guest_mem },
	{ "many-queues", t_many_queues },
	{ "fatal-cfs", t_fatal },
	{ "options-ctl", t_options_ctl },
	{ "media-failure", t_media_failure },
	{ "stress-model", t_stress_model },
	{ "guest-mem-shrink", t_guest_mem_shrink },
};

/* ------------------------------------------------------------ bench */
static uint64_t us_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* 4 KiB random I/O at queue depth @qd over 2 queues for @secs seconds. */
static void bench_run(struct env *e, const char *name, int op, int qd,
		      int secs)
{
	struct fakehost *h = &e->h;
	uint64_t start[3][65536], buf = fh_alloc(h, 64 * 4096, 4096);
	uint64_t t0 = us_now(), end = t0 + secs * 1000000ULL, span = 1 << 16;
	uint32_t *lat = malloc(sizeof(*lat) * 4000000), nlat = 0;
	int inflight = 0, errs = 0;
	unsigned seed = 12345;
	double sum = 0;

	while (inflight || us_now() < end) {
		while (inflight < qd && us_now() < end) {
			int q = 1 + inflight % 2;
			struct vc_sqe s = { .opcode = op, .nseg = 1,
					    .dptr = buf + (inflight % 64) * 4096,
					    .dlen = 4096 };
			int cid;

			s.rw.slba = (uint64_t)(rand_r(&seed) % span) * 8;
			s.rw.nlb = 8;
			cid = fh_post(h, q, &s, 1);
			start[q][cid] = us_now();
			inflight++;
		}
		for (int q = 1; q <= 2; q++) {
			struct vc_cqe c;

			while (fh_cqe_ready(h, q) && !fh_reap(h, q, &c, 0)) {
				if (nlat < 4000000)
					lat[nlat++] = (uint32_t)(us_now() -
								 start[q][c.cid]);
				errs += c.status >> 1 != 0;
				inflight--;
			}
		}
		if (inflight) {
			struct pollfd p[2] = {
				{ .fd = h->irq_efd[1], .events = POLLIN },
				{ .fd = h->irq_efd[2], .events = POLLIN },
			};
			uint64_t v;

			if (poll(p, 2, 100) > 0)
				for (int i = 0; i < 2; i++)
					if (p[i].revents && read(p[i].fd, &v, 8) < 0)
						break;
		}
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u32);
	for (uint32_t i = 0; i < nlat; i++)
		sum += lat[i];
	printf("%-26s QD%-3d %8.0f IOPS  avg %6.0f us  p99 %6u us%s\n", name, qd,
	       nlat / ((us_now() - t0) / 1e6), nlat ? sum / nlat : 0.0,
	       nlat ? lat[nlat * 99 / 100] : 0, errs ? "  ERRORS" : "");
	fflush(stdout);
	free(lat);
}

static int bench(void)
{
	static struct env e;
	const char *modes[] = { "nodelay", "flash" };

	for (int m = 0; m < 2; m++) {
		char *extra[] = { "--timing", (char *)modes[m], NULL };
		char name[64];

		env_init(&e);
		if (env_format(&e, "1G", "512") || env_start_v(&e, extra) ||
		    env_connect(&e, 2, 128)) {
			fprintf(stderr, "bench: setup failed: %s\n", e.h.err);
			env_fini(&e, 1);
			return 1;
		}
		snprintf(name, sizeof(name), "%s 4K randwrite", modes[m]);
		bench_run(&e, name, VC_CMD_WRITE, 1, 2);
		bench_run(&e, name, VC_CMD_WRITE, 32, 3);
		snprintf(name, sizeof(name), "%s 4K randread", modes[m]);
		bench_run(&e, name, VC_CMD_READ, 1, 2);
		bench_run(&e, name, VC_CMD_READ, 32, 3);
		env_stop(&e);
		env_fini(&e, 0);
	}
	return 0;
}

/*
 * cmocka runs each test (its report, crashes caught); a test is an
 * environment (a firmware-sim and a fake host), the test's steps whose
 * CHECKs stop it at the first failure, and the teardown.
 */
static void one(void **state)
{
	const struct fw_test *t = *state;
	struct env e;
	int rc;

	env_init(&e);
	rc = t->fn(&e);
	env_fini(&e, rc);
	if (rc)
		fail_msg("%s failed (see the FAIL line above)", t->name);
}

int main(int argc, char **argv)
{
	struct CMUnitTest cm[sizeof(tests) / sizeof(tests[0])];
	size_t n = 0;
	int failn;

	if (argc == 3 && !strcmp(argv[1], "--bench")) {
		fw_bin = argv[2];
		signal(SIGPIPE, SIG_IGN);
		return bench();
	}
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIRMWARE-SIM [TEST...]\n", argv[0]);
		return 2;
	}
	fw_bin = argv[1];
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int run = argc == 2;

		for (int a = 2; a < argc; a++)
			if (!strcmp(argv[a], tests[i].name))
				run = 1;
		if (run)
			cm[n++] = (struct CMUnitTest){ .name = tests[i].name,
						       .test_func = one,
						       .initial_state = (void *)&tests[i] };
	}
	failn = _cmocka_run_group_tests("firmware-sim", cm, n, NULL, NULL);
	printf("%d passed, %d failed\n", (int)n - failn, failn);
	return failn ? 1 : 0;
}
