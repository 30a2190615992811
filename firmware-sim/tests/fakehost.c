// SPDX-License-Identifier: GPL-2.0
/*
 * fakehost: QEMU + driver stand-in for testing firmware-sim without a VM.
 * See fakehost.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fakehost.h"

static int fail(struct fakehost *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int recv_msg(int fd, int64_t *val, int *rfd)
{
	struct iovec iov = { .iov_base = val, .iov_len = sizeof(*val) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	*rfd = -1;
	if (poll(&p, 1, 5000) <= 0)
		return -1;
	n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	if (n != sizeof(*val))
		return -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(rfd, CMSG_DATA(cm), sizeof(int));
	return 0;
}

int fh_connect(struct fakehost *h, const char *sock_path,
	       const char *mem_path, size_t mem_size, int nvec)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int64_t v;
	int fd, i;
	off_t sz;

	memset(h, 0, sizeof(*h));
	h->sock = h->mem_fd = h->shm_fd = -1;
	for (i = 0; i < FH_MAX_VEC; i++)
		h->fw_efd[i] = h->irq_efd[i] = -1;
	h->nvec = nvec;

	h->mem_fd = open(mem_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (h->mem_fd < 0 || ftruncate(h->mem_fd, mem_size) < 0)
		return fail(h, "guest RAM %s: %s", mem_path, strerror(errno));
	h->mem = mmap(NULL, mem_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      h->mem_fd, 0);
	if (h->mem == MAP_FAILED)
		return fail(h, "mmap guest RAM: %s", strerror(errno));
	h->mem_size = mem_size;
	h->brk = 1 << 20;	/* keep low memory free, like a real guest */

	strncpy(sa.sun_path, sock_path, sizeof(sa.sun_path) - 1);
	h->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->sock < 0 ||
	    connect(h->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return fail(h, "connect %s: %s", sock_path, strerror(errno));
	if (recv_msg(h->sock, &v, &fd) || v != 0)
		return fail(h, "bad protocol version message");
	if (recv_msg(h->sock, &v, &fd) || v < 1 || v > 65535)
		return fail(h, "bad client id message");
	h->id = (int)v;
	if (recv_msg(h->sock, &v, &fd) || v != -1 || fd < 0)
		return fail(h, "no shared memory fd");
	h->shm_fd = fd;
	sz = lseek(fd, 0, SEEK_END);
	if (sz <= 0 || (sz & (sz - 1)))
		return fail(h, "shm size %lld is not a power of two",
			    (long long)sz);
	h->shm_size = sz;
	h->shm = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h->shm == MAP_FAILED)
		return fail(h, "mmap shm: %s", strerror(errno));
	h->regs = (volatile struct vc_regs *)h->shm;
	for (i = 0; i < nvec; i++) {
		if (recv_msg(h->sock, &v, &fd) || v != VC_FW_PEER_ID || fd < 0)
			return fail(h, "peer 0 vector %d missing", i);
		h->fw_efd[i] = fd;
	}
	for (i = 0; i < nvec; i++) {
		if (recv_msg(h->sock, &v, &fd) || v != h->id || fd < 0)
			return fail(h, "own vector %d missing", i);
		h->irq_efd[i] = fd;
	}
	h->db = (volatile struct vc_doorbell *)(h->shm + h->regs->db_offset);
	return 0;
}

void fh_close(struct fakehost *h)
{
	for (int i = 0; i < FH_MAX_VEC; i++) {
		if (h->fw_efd[i] >= 0)
			close(h->fw_efd[i]);
		if (h->irq_efd[i] >= 0)
			close(h->irq_efd[i]);
		h->fw_efd[i] = h->irq_efd[i] = -1;
	}
	if (h->sock >= 0)
		close(h->sock);
	if (h->shm && h->shm != MAP_FAILED)
		munmap(h->shm, h->shm_size);
	if (h->mem && h->mem != MAP_FAILED)
		munmap(h->mem, h->mem_size);
	if (h->mem_fd >= 0)
		close(h->mem_fd);
	if (h->shm_fd >= 0)
		close(h->shm_fd);
	h->sock = h->mem_fd = h->shm_fd = -1;
	h->shm = h->mem = NULL;
}

uint64_t fh_alloc(struct fakehost *h, size_t len, size_t align)
{
	uint64_t a;

	if (!align)
		align = 8;
	a = (h->brk + align - 1) & ~(uint64_t)(align - 1);
	if (a + len > h->mem_size) {
		fprintf(stderr, "fakehost: guest RAM exhausted\n");
		abort();
	}
	h->brk = a + len;
	memset(h->mem + a, 0, len);
	return a;
}

void *fh_ptr(struct fakehost *h, uint64_t dma)
{
	return h->mem + dma;
}

void fh_ring(struct fakehost *h, unsigned vec)
{
	uint64_t one = 1;

	if (vec < (unsigned)h->nvec && write(h->fw_efd[vec], &one, 8) != 8)
		perror("fakehost: ring");
}

int fh_wait_csts(struct fakehost *h, uint32_t mask, uint32_t want,
		 int timeout_ms)
{
	uint64_t end = ms_now() + timeout_ms;

	while ((h->regs->csts & mask) != want) {
		if (ms_now() > end)
			return -1;
		usleep(1000);
	}
	return 0;
}

static void q_init(struct fakehost *h, unsigned qid, unsigned size)
{
	struct fh_queue *q = &h->q[qid];

	memset(q, 0, sizeof(*q));
	q->size = size;
	q->vector = qid;
	q->sq_dma = fh_alloc(h, size * sizeof(struct vc_sqe), 4096);
	q->cq_dma = fh_alloc(h, size * sizeof(struct vc_cqe), 4096);
	q->sq = fh_ptr(h, q->sq_dma);
	q->cq = fh_ptr(h, q->cq_dma);
	q->phase = 1;
	q->next_cid = 1;
}

int fh_enable(struct fakehost *h, unsigned aq, int timeout_ms)
{
	q_init(h, 0, aq);
	h->regs->aqa = aq | (aq << 16);
	h->regs->asq = h->q[0].sq_dma;
	h->regs->acq = h->q[0].cq_dma;
	h->db[0].sq_tail = 0;
	h->db[0].cq_head = 0;
	__sync_synchronize();
	h->regs->cc = VC_CC_EN;
	fh_ring(h, 0);
	if (fh_wait_csts(h, VC_CSTS_RDY | VC_CSTS_CFS, VC_CSTS_RDY, timeout_ms))
		return fail(h, "card not ready (csts 0x%x)", h->regs->csts);
	h->q[0].live = 1;
	return 0;
}

int fh_disable(struct fakehost *h, int timeout_ms)
{
	h->regs->cc &= ~VC_CC_EN;
	fh_ring(h, 0);
	if (fh_wait_csts(h, VC_CSTS_RDY, 0, timeout_ms))
		return fail(h, "RDY did not clear");
	for (int i = 0; i < FH_MAX_VEC; i++)
		h->q[i].live = 0;
	return 0;
}

int fh_shutdown(struct fakehost *h, int timeout_ms)
{
	h->regs->cc = (h->regs->cc & ~VC_CC_SHN_MASK) | VC_CC_SHN_NORMAL;
	fh_ring(h, 0);
	return fh_wait_csts(h, VC_CSTS_SHST_MASK, VC_CSTS_SHST_CMPLT,
			    timeout_ms);
}

int fh_post(struct fakehost *h, unsigned qid, struct vc_sqe *sqe, int ring)
{
	struct fh_queue *q = &h->q[qid];

	sqe->cid = q->next_cid++;
	if (!q->next_cid)
		q->next_cid = 1;
	memcpy(&q->sq[q->sq_tail], sqe, sizeof(*sqe));
	q->sq_tail = (q->sq_tail + 1) % q->size;
	if (ring)
		fh_ring_sq(h, qid);
	return sqe->cid;
}

void fh_ring_sq(struct fakehost *h, unsigned qid)
{
	__sync_synchronize();
	h->db[qid].sq_tail = h->q[qid].sq_tail;
	__sync_synchronize();
	fh_ring(h, qid);
}

int fh_cqe_ready(struct fakehost *h, unsigned qid)
{
	struct fh_queue *q = &h->q[qid];
	uint16_t st = __atomic_load_n(&q->cq[q->cq_head].status,
				      __ATOMIC_ACQUIRE);

	return (st & VC_CQE_PHASE) == q->phase;
}

int fh_reap(struct fakehost *h, unsigned qid, struct vc_cqe *out,
	    int timeout_ms)
{
	struct fh_queue *q = &h->q[qid];
	uint64_t end = ms_now() + timeout_ms;

	while (!fh_cqe_ready(h, qid)) {
		struct pollfd p = { .fd = h->irq_efd[q->vector], .events = POLLIN };
		int64_t left = (int64_t)(end - ms_now());
		uint64_t v;

		if (left <= 0)
			return -1;
		if (poll(&p, 1, left > 50 ? 50 : (int)left) > 0 &&
		    read(p.fd, &v, 8) < 0)
			return -1;
	}
	memcpy(out, &q->cq[q->cq_head], sizeof(*out));
	q->sq_head = out->sq_head;
	if (++q->cq_head == q->size) {
		q->cq_head = 0;
		q->phase ^= 1;
	}
	__sync_synchronize();
	h->db[qid].cq_head = q->cq_head;
	return 0;
}

int fh_cmd(struct fakehost *h, unsigned qid, struct vc_sqe *sqe,
	   struct vc_cqe *out, int timeout_ms)
{
	struct vc_cqe tmp;
	int cid = fh_post(h, qid, sqe, 1);

	if (!out)
		out = &tmp;
	for (;;) {
		if (fh_reap(h, qid, out, timeout_ms))
			return fail(h, "timeout waiting for cid %d on queue %u",
				    cid, qid);
		if (out->cid == cid)
			return VC_CQE_STATUS(out->status);
		/* a completion for something else (test's business) */
	}
}

int fh_identify(struct fakehost *h, struct vc_identify *id)
{
	uint64_t dma = fh_alloc(h, 4096, 4096);
	struct vc_sqe s = { .opcode = VC_ADM_IDENTIFY, .nseg = 1,
			    .dptr = dma, .dlen = 4096 };
	int st = fh_cmd(h, 0, &s, NULL, 5000);

	if (!st)
		memcpy(id, fh_ptr(h, dma), sizeof(*id));
	return st;
}

int fh_get_health(struct fakehost *h, struct vc_health_log *log)
{
	uint64_t dma = fh_alloc(h, 4096, 4096);
	struct vc_sqe s = { .opcode = VC_ADM_GET_LOG, .nseg = 1, .dptr = dma,
			    .dlen = sizeof(*log) };
	int st;

	s.log.lid = VC_LOG_HEALTH;
	st = fh_cmd(h, 0, &s, NULL, 5000);
	if (!st)
		memcpy(log, fh_ptr(h, dma), sizeof(*log));
	return st;
}

int fh_create_ioq(struct fakehost *h, unsigned qid, unsigned size)
{
	struct vc_sqe s = { .opcode = VC_ADM_CREATE_CQ };
	int st;

	q_init(h, qid, size);
	s.dptr = h->q[qid].cq_dma;
	s.queue.qid = qid;
	s.queue.qsize = size;
	s.queue.vector = qid;
	st = fh_cmd(h, 0, &s, NULL, 5000);
	if (st)
		return st;
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_CREATE_SQ;
	s.dptr = h->q[qid].sq_dma;
	s.queue.qid = qid;
	s.queue.qsize = size;
	s.queue.cqid = qid;
	st = fh_cmd(h, 0, &s, NULL, 5000);
	if (!st)
		h->q[qid].live = 1;
	return st;
}

int fh_delete_ioq(struct fakehost *h, unsigned qid)
{
	struct vc_sqe s = { .opcode = VC_ADM_DELETE_SQ };
	int st;

	s.queue.qid = qid;
	st = fh_cmd(h, 0, &s, NULL, 15000);
	if (st)
		return st;
	memset(&s, 0, sizeof(s));
	s.opcode = VC_ADM_DELETE_CQ;
	s.queue.qid = qid;
	st = fh_cmd(h, 0, &s, NULL, 5000);
	h->q[qid].live = 0;
	return st;
}

int fh_rw(struct fakehost *h, unsigned qid, int opcode, uint64_t slba,
	  uint32_t nlb, uint32_t lba_size, uint64_t dma, int flags)
{
	struct vc_sqe s = { .opcode = opcode, .flags = flags, .nseg = 1,
			    .dptr = dma, .dlen = nlb * lba_size };

	s.rw.slba = slba;
	s.rw.nlb = nlb;
	return fh_cmd(h, qid, &s, NULL, 10000);
}

int fh_rw_sgl(struct fakehost *h, unsigned qid, int opcode, uint64_t slba,
	      uint32_t nlb, uint32_t lba_size, const uint64_t *addr,
	      const uint32_t *len, unsigned nseg, int flags)
{
	uint64_t ddma = fh_alloc(h, nseg * sizeof(struct vc_sgl_desc), 64);
	struct vc_sgl_desc *d = fh_ptr(h, ddma);
	struct vc_sqe s = { .opcode = opcode, .flags = flags, .nseg = nseg,
			    .dptr = ddma, .dlen = nlb * lba_size };

	for (unsigned i = 0; i < nseg; i++) {
		d[i].addr = addr[i];
		d[i].len = len[i];
	}
	s.rw.slba = slba;
	s.rw.nlb = nlb;
	return fh_cmd(h, qid, &s, NULL, 10000);
}

int fh_simple(struct fakehost *h, unsigned qid, int opcode, uint64_t slba,
	      uint32_t nlb)
{
	struct vc_sqe s = { .opcode = opcode };

	s.rw.slba = slba;
	s.rw.nlb = nlb;
	return fh_cmd(h, qid, &s, NULL, 10000);
}
