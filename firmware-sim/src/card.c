// SPDX-License-Identifier: GPL-2.0
/*
 * firmware-sim: the card.  ivshmem server (we are peer 0), controller state
 * machine, queues, command execution and the control socket.
 *
 * Threads:
 *   main       accepts the ivshmem client (QEMU) and control connections,
 *              watches for QEMU going away and for SIGTERM/SIGINT.
 *   poller     waits on our doorbell eventfds and a VC_FW_POLL_MS tick;
 *              re-reads cc, fetches SQ entries, runs admin commands inline,
 *              queues I/O commands to the workers, bumps the heartbeat.
 *   workers    run I/O commands (DMA + media), then post the completion at
 *              once (no-delay) or hand it to the completer with a deadline.
 *   completer  posts timed completions when their deadline passes, raising
 *              each CQ's vector once per batch (interrupt coalescing).
 *   destager   (media.c) writes the write buffer back in the background.
 *
 * Lock order: card.lock -> cq.lock -> media locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fw.h"

#define MAX_VEC		(VC_MAX_IOQ + 1)
#define MAX_XFER	(1u << 20)
#define MAX_SGE		256
#define MAX_ZERO_BYTES	(1ULL << 30)	/* per DEALLOCATE/WRITE_ZEROES */
#define MAX_FAULTS	32
#define MAX_RETIRED	4096

struct cmd {
	struct cmd *next;
	struct vc_sqe sqe;
	uint16_t sqid, cqid;
	uint32_t sq_gen, cq_gen, epoch;
	uint64_t deadline;
	uint32_t result;
	uint16_t status;
};

struct sq {
	int valid;
	uint32_t gen;
	uint16_t size, cqid;
	struct vc_sqe *ring;
	uint32_t head;			/* poller only */
	_Atomic uint32_t head_pub;	/* for cqe.sq_head */
	int inflight;			/* card.lock: fetched, not yet posted */
};

struct pend {
	struct pend *next;
	struct vc_cqe cqe;
};

struct cq {
	pthread_mutex_t lock;
	int valid;
	uint32_t gen;
	uint16_t size, vector;
	struct vc_cqe *ring;
	uint32_t tail;
	uint16_t phase;
	int nsq;			/* SQs completing here (card.lock) */
	struct pend *backlog, **backlog_tail;	/* CQ was full */
	int irq_pending;
};

struct fault {
	int kind;			/* FAULT_* */
	uint64_t slba, nlb;		/* nlb 0: any LBA */
	uint64_t count;			/* FAULT_HANG: commands left */
};

enum { FAULT_READ = 1, FAULT_WRITE, FAULT_HANG, FAULT_HANG_FLUSH };
enum { STALL_ANY = 1, STALL_ADMIN, STALL_IO };

struct gmap {
	struct gmap *old;
	uint8_t *base;
	size_t size;
};

static struct card {
	struct fw_opts *o;
	struct media *m;
	unsigned nvec;

	/* BAR2 */
	int shm_fd;
	uint8_t *shm;
	struct vc_regs *regs;
	struct vc_doorbell *db;

	/* ivshmem */
	int listen_fd, client_fd, ctl_fd, sig_fd;
	int my_efd[MAX_VEC];		/* doorbells: the guest rings these */
	int irq_efd[MAX_VEC];		/* guest vectors: we ring these */
	int retired[MAX_RETIRED];	/* irq eventfds of earlier guests */
	int nretired;
	int wake_efd;			/* poke the poller */
	int next_id;
	atomic_int connected;

	/* guest RAM */
	pthread_mutex_t gm_lock;
	int gm_fd;
	struct gmap *gm;		/* newest mapping; old ones kept */

	/*
	 * state_lock serialises controller state changes: the poller (cc,
	 * doorbells, admin commands) against connect/disconnect in main.
	 */
	pthread_mutex_t state_lock;

	/* controller */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* dma_active / inflight went down */
	atomic_int enabled, fatal;
	atomic_uint epoch;
	int dma_active;
	struct sq sq[MAX_VEC];
	struct cq cq[MAX_VEC];
	struct cmd *work_head, **work_tail;
	pthread_cond_t work_cond;
	struct cmd *parked;		/* hung by fault injection */
	atomic_int nparked;
	atomic_int stop;
	int refused_logged;

	/* faults (card.lock) */
	struct fault faults[MAX_FAULTS];
	int nfaults;
	int refuse;			/* 1: never ready, 2: set CFS */
	uint64_t hang_admin;		/* admin commands left to swallow */
	int hang_admin_op;		/* ... of this opcode only (-1: any) */
	uint64_t stall_ms;		/* freeze at the next command ... */
	int stall_kind;			/* ... of this STALL_* kind */
	uint64_t ready_delay_ms;	/* every enable takes this long */
	uint64_t enable_seen_ns;	/* when cc.EN 0->1 was noticed */
	_Atomic uint64_t stall_until_ns;	/* heartbeat frozen until */
	/* `ident FIELD VALUE`: identify fields reported wrong on purpose */
	int ovr_max_xfer, ovr_discard_gran, ovr_capacity;
	uint32_t max_xfer_val, discard_gran_val;
	uint64_t capacity_val;

	/* timed completions */
	pthread_mutex_t hlock;
	pthread_cond_t hcond;
	struct cmd **heap;
	size_t hn, hcap;
	int hstop;

	pthread_t poller, completer, heartbeat, ctl_thread, *workers;
	atomic_int ctl_stop;
	atomic_int hb_stop;
	uint64_t last_saved;
} C;

/* ---------------------------------------------------------------- log */
int fw_verbose;

static void vlog(const char *fmt, va_list ap)
{
	char buf[1024];
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf), "%s[%d] %02d:%02d:%02d.%03ld: ", FW_NAME,
		     getpid(), tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000);
	vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	strcat(buf, "\n");
	if (write(2, buf, strlen(buf)) < 0)
		return;
}

void fw_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void fw_dbg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ----------------------------------------------------- shared memory */
static uint32_t rd32(const void *p)
{
	return __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);
}

static uint64_t rd64(const void *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
}

static void wr32(void *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, v, __ATOMIC_RELEASE);
}

static void csts_set(uint32_t set, uint32_t clr)
{
	uint32_t v = rd32(&C.regs->csts);

	wr32(&C.regs->csts, (v & ~clr) | set);
}

static void regs_init(void)
{
	struct vc_regs *r = C.regs;

	uint32_t hb = rd32(&r->heartbeat);	/* monotonic, never reset */

	memset(C.shm, 0, C.o->shm_size);
	wr32(&r->heartbeat, hb);
	r->magic = C.o->bad_magic ? 0x4b4e554b4e554b4eULL : VC_CARD_MAGIC;
	r->version = C.o->bad_version ?
		((VC_IF_VERSION_MAJOR + 1) << 16) : VC_IF_VERSION;
	r->regs_size = sizeof(*r);
	r->cap_mqes = C.o->qdepth;
	r->cap_max_ioq = C.o->queues;
	r->cap_timeout_ms = 5000;
	r->db_offset = VC_PAGE_SIZE;
	r->db_stride = sizeof(struct vc_doorbell);
}

/* -------------------------------------------------------- guest memory */
/*
 * Forget guest RAM (the guest is gone; the next one may bring a new file).
 * Only called after ctrl_reset(): no queue and no command is left, so no
 * thread holds a pointer into the mappings any more.  While a guest is
 * connected, mappings replaced by a larger one are kept until here.
 */
static void gm_close(void)
{
	pthread_mutex_lock(&C.gm_lock);
	while (C.gm) {
		struct gmap *g = C.gm;

		C.gm = g->old;
		munmap(g->base, g->size);
		free(g);
	}
	if (C.gm_fd >= 0)
		close(C.gm_fd);
	C.gm_fd = -1;
	pthread_mutex_unlock(&C.gm_lock);
}

/* Map (or re-map, if the file grew) guest RAM.  Caller holds gm_lock. */
static void gm_refresh_locked(void)
{
	struct gmap *g;
	struct stat st;
	void *p;

	if (C.gm_fd < 0) {
		C.gm_fd = open(C.o->guest_mem, O_RDWR | O_CLOEXEC);
		if (C.gm_fd < 0)
			return;
	}
	if (fstat(C.gm_fd, &st) < 0 || st.st_size <= 0)
		return;
	if (C.gm && C.gm->size >= (size_t)st.st_size)
		return;
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 C.gm_fd, 0);
	if (p == MAP_FAILED) {
		fw_log("guest memory: cannot map %s: %s", C.o->guest_mem,
		       strerror(errno));
		return;
	}
	g = malloc(sizeof(*g));
	if (!g) {
		munmap(p, st.st_size);
		return;
	}
	g->base = p;
	g->size = st.st_size;
	g->old = C.gm;
	__atomic_store_n(&C.gm, g, __ATOMIC_RELEASE);
	fw_log("guest memory: mapped %s, %zu MiB", C.o->guest_mem,
	       g->size >> 20);
}

/*
 * At enable (nothing in flight): if the guest RAM path now names another
 * file than the one mapped (we mapped a stale file before QEMU replaced
 * it), drop the old mapping so the next access maps the right one.
 */
static void gm_revalidate(void)
{
	struct stat a, b;
	int stale;

	pthread_mutex_lock(&C.gm_lock);
	stale = C.gm_fd >= 0 && (stat(C.o->guest_mem, &a) < 0 ||
				 fstat(C.gm_fd, &b) < 0 || a.st_ino != b.st_ino ||
				 a.st_dev != b.st_dev);
	pthread_mutex_unlock(&C.gm_lock);
	if (stale) {
		fw_log("guest memory: %s was replaced, re-mapping",
		       C.o->guest_mem);
		gm_close();
	}
}

/* Host pointer for guest physical [addr, addr+len), or NULL. */
static void *gm_ptr(uint64_t addr, uint64_t len)
{
	struct gmap *g = __atomic_load_n(&C.gm, __ATOMIC_ACQUIRE);

	if (!g || len > g->size || addr > g->size - len) {
		pthread_mutex_lock(&C.gm_lock);
		gm_refresh_locked();
		pthread_mutex_unlock(&C.gm_lock);
		g = __atomic_load_n(&C.gm, __ATOMIC_ACQUIRE);
		if (!g || len > g->size || addr > g->size - len)
			return NULL;
	}
	return g->base + addr;
}

/*
 * Guarded access to guest RAM.  Addresses are checked against the size of
 * the file when it was mapped; should the file shrink afterwards, touching
 * the lost pages raises SIGBUS.  Every access to guest memory goes through
 * these helpers, which turn that into an error instead of a crash.
 */
struct gm_guard {
	sigjmp_buf jb;
};

static __thread struct gm_guard *volatile gm_jmp;
static atomic_int gm_faults;

static void sigbus_handler(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (gm_jmp)
		siglongjmp(gm_jmp->jb, 1);
	signal(sig, SIG_DFL);	/* not ours: die as usual */
	raise(sig);
}

static void gm_fault(void)
{
	gm_jmp = NULL;
	if (!atomic_fetch_add(&gm_faults, 1))
		fw_log("guest memory: %s shrank under the card (SIGBUS); failing the access",
		       C.o->guest_mem);
}

static int gm_copy(void *dst, const void *src, size_t n)
{
	struct gm_guard g;

	if (sigsetjmp(g.jb, 0)) {
		gm_fault();
		return -1;
	}
	gm_jmp = &g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);	/* keep the copy inside */
	memcpy(dst, src, n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	gm_jmp = NULL;
	return 0;
}

static int gm_store16(uint16_t *p, uint16_t v)
{
	struct gm_guard g;

	if (sigsetjmp(g.jb, 0)) {
		gm_fault();
		return -1;
	}
	gm_jmp = &g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	gm_jmp = NULL;
	return 0;
}

/* --------------------------------------------------------------- SGL */
struct seg {
	uint8_t *p;
	uint32_t len;
};

/*
 * Resolve a command's data pointer (dptr/nseg) for @dlen bytes into host
 * segments.  Returns 0 or a VC_SC_* status; never touches memory outside
 * the guest RAM file.
 */
static int sgl_resolve(const struct vc_sqe *sqe, uint32_t dlen,
		       struct seg *segs, int *nsegs)
{
	unsigned nseg = sqe->nseg ? sqe->nseg : 1;
	struct vc_sgl_desc d[MAX_SGE];
	const void *dp;
	uint64_t total = 0;

	if (nseg == 1) {
		segs[0].p = gm_ptr(sqe->dptr, dlen);
		segs[0].len = dlen;
		*nsegs = 1;
		return segs[0].p ? 0 : VC_SC_DATA_XFER;
	}
	if (nseg > MAX_SGE)
		return VC_SC_DATA_XFER;
	if (sqe->dptr & 7)
		return VC_SC_DATA_XFER;
	dp = gm_ptr(sqe->dptr, (uint64_t)nseg * sizeof(d[0]));
	if (!dp)
		return VC_SC_DATA_XFER;
	/* snapshot: the host may scribble on it */
	if (gm_copy(d, dp, nseg * sizeof(d[0])))
		return VC_SC_DATA_XFER;
	for (unsigned i = 0; i < nseg; i++) {
		if (!d[i].len)
			return VC_SC_DATA_XFER;
		total += d[i].len;
		if (total > dlen)
			return VC_SC_DATA_XFER;
		segs[i].p = gm_ptr(d[i].addr, d[i].len);
		segs[i].len = d[i].len;
		if (!segs[i].p)
			return VC_SC_DATA_XFER;
	}
	if (total != dlen)
		return VC_SC_DATA_XFER;
	*nsegs = nseg;
	return 0;
}

/* Gather / scatter a command's data.  0, or VC_SC_DATA_XFER. */
static int segs_to_buf(uint8_t *buf, const struct seg *s, int n)
{
	for (int i = 0; i < n; i++) {
		if (gm_copy(buf, s[i].p, s[i].len))
			return VC_SC_DATA_XFER;
		buf += s[i].len;
	}
	return 0;
}

static int buf_to_segs(const struct seg *s, int n, const uint8_t *buf)
{
	for (int i = 0; i < n; i++) {
		if (gm_copy(s[i].p, buf, s[i].len))
			return VC_SC_DATA_XFER;
		buf += s[i].len;
	}
	return 0;
}

/* ---------------------------------------------------------- completion */
static void raise_irq(unsigned vec)
{
	uint64_t one = 1;

	if (vec >= C.nvec)
		return;
	fwc.irqs++;
	if (write(__atomic_load_n(&C.irq_efd[vec], __ATOMIC_ACQUIRE), &one,
		  sizeof(one)) < 0 && errno != EAGAIN)
		fw_log("irq: cannot signal vector %u: %s", vec, strerror(errno));
}

static void go_fatal(const char *why);

/* Write one CQE if there is room.  cq->lock held.  0, or -1 when full. */
static int cq_put(struct cq *cq, unsigned qid, const struct vc_cqe *e)
{
	uint32_t head = rd32(&C.db[qid].cq_head);
	struct vc_cqe *slot, tmp = *e;

	if (head >= cq->size)
		return -2;
	if ((cq->tail + 1) % cq->size == head)
		return -1;
	slot = &cq->ring[cq->tail];
	tmp.rsvd = 0;
	/* everything but the status first, then the status with the phase */
	if (gm_copy(slot, &tmp, offsetof(struct vc_cqe, status)) ||
	    gm_store16(&slot->status,
		       (uint16_t)((e->status & ~VC_CQE_PHASE) | cq->phase)))
		return -2;
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1;
	}
	cq->irq_pending = 1;
	return 0;
}

/* Retry a CQ's backlog.  cq->lock held. */
static void cq_drain_backlog(struct cq *cq, unsigned qid)
{
	while (cq->backlog) {
		struct pend *p = cq->backlog;
		int rc = cq_put(cq, qid, &p->cqe);

		if (rc == -2) {
			pthread_mutex_unlock(&cq->lock);
			go_fatal("cannot post a completion: CQ head doorbell beyond the CQ, or CQ memory gone");
			pthread_mutex_lock(&cq->lock);
			return;
		}
		if (rc)
			return;
		cq->backlog = p->next;
		if (!cq->backlog)
			cq->backlog_tail = &cq->backlog;
		free(p);
	}
}

static void cq_raise(unsigned qid)
{
	struct cq *cq = &C.cq[qid];
	int raise;
	unsigned vec;

	pthread_mutex_lock(&cq->lock);
	raise = cq->irq_pending && cq->valid;
	cq->irq_pending = 0;
	vec = cq->vector;
	pthread_mutex_unlock(&cq->lock);
	if (raise)
		raise_irq(vec);
}

/*
 * Post a command's completion (without raising the vector).  Drops it if
 * the controller was reset or the CQ deleted since the command was fetched.
 */
static void post_cqe(struct cmd *c)
{
	struct cq *cq = &C.cq[c->cqid];
	struct sq *sq = &C.sq[c->sqid];
	struct vc_cqe e = {
		.result = c->result,
		.sq_head = (uint16_t)atomic_load(&sq->head_pub),
		.sqid = c->sqid,
		.cid = c->sqe.cid,
		.status = (uint16_t)(c->status << 1),
	};
	int bad = 0;

	pthread_mutex_lock(&cq->lock);
	if (cq->valid && cq->gen == c->cq_gen &&
	    atomic_load(&C.epoch) == c->epoch) {
		cq_drain_backlog(cq, c->cqid);
		if (cq->backlog) {
			bad = -1;
		} else {
			bad = cq_put(cq, c->cqid, &e);
			if (bad == -2) {
				pthread_mutex_unlock(&cq->lock);
				go_fatal("cannot post a completion: CQ head doorbell beyond the CQ, or CQ memory gone");
				pthread_mutex_lock(&cq->lock);
			}
		}
		if (bad == -1) {
			struct pend *p = malloc(sizeof(*p));

			if (p) {
				p->cqe = e;
				p->next = NULL;
				*cq->backlog_tail = p;
				cq->backlog_tail = &p->next;
			}
			fw_trace("cq %u full: completion of cid %u deferred",
				 c->cqid, c->sqe.cid);
		}
	}
	pthread_mutex_unlock(&cq->lock);
	if (c->status)
		fwc.errors++;
	fw_trace("cqe sq %u cid %u status 0x%x result %u", c->sqid, c->sqe.cid,
		 c->status, c->result);

	pthread_mutex_lock(&C.lock);
	if (sq->gen == c->sq_gen && sq->inflight > 0) {
		sq->inflight--;
		pthread_cond_broadcast(&C.cond);
	}
	pthread_mutex_unlock(&C.lock);
}

static void complete_now(struct cmd *c)
{
	unsigned q = c->cqid;

	post_cqe(c);
	free(c);
	cq_raise(q);
}

/* ------------------------------------------------- timed completions */
static void heap_push(struct cmd *c)
{
	size_t i;

	pthread_mutex_lock(&C.hlock);
	if (C.hn == C.hcap) {
		size_t n = C.hcap ? C.hcap * 2 : 256;
		struct cmd **h = realloc(C.heap, n * sizeof(*h));

		if (!h) {
			pthread_mutex_unlock(&C.hlock);
			complete_now(c);
			return;
		}
		C.heap = h;
		C.hcap = n;
	}
	i = C.hn++;
	while (i && C.heap[(i - 1) / 2]->deadline > c->deadline) {
		C.heap[i] = C.heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	C.heap[i] = c;
	if (!i)
		pthread_cond_signal(&C.hcond);
	pthread_mutex_unlock(&C.hlock);
}

static struct cmd *heap_pop(void)
{
	struct cmd *top = C.heap[0], *last = C.heap[--C.hn];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, s;

		if (l >= C.hn)
			break;
		s = l + 1 < C.hn && C.heap[l + 1]->deadline < C.heap[l]->deadline ?
			l + 1 : l;
		if (C.heap[s]->deadline >= last->deadline)
			break;
		C.heap[i] = C.heap[s];
		i = s;
	}
	if (C.hn)
		C.heap[i] = last;
	return top;
}

static void *completer_main(void *arg)
{
	static uint8_t touched[MAX_VEC];

	(void)arg;
	/* deadlines are tens of microseconds away: no timer slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	pthread_mutex_lock(&C.hlock);
	while (!C.hstop) {
		uint64_t now = now_ns();
		struct cmd *batch = NULL;

		if (!C.hn) {
			pthread_cond_wait(&C.hcond, &C.hlock);
			continue;
		}
		if (C.heap[0]->deadline > now) {
			uint64_t d = C.heap[0]->deadline;
			struct timespec ts = {
				.tv_sec = d / 1000000000ULL,
				.tv_nsec = d % 1000000000ULL,
			};
			pthread_cond_timedwait(&C.hcond, &C.hlock, &ts);
			continue;
		}
		while (C.hn && C.heap[0]->deadline <= now) {
			struct cmd *c = heap_pop();

			c->next = batch;
			batch = c;
		}
		pthread_mutex_unlock(&C.hlock);
		while (batch) {
			struct cmd *c = batch;

			batch = c->next;
			touched[c->cqid] = 1;
			post_cqe(c);
			free(c);
		}
		for (unsigned q = 0; q < C.nvec; q++)
			if (touched[q]) {
				touched[q] = 0;
				cq_raise(q);
			}
		pthread_mutex_lock(&C.hlock);
	}
	pthread_mutex_unlock(&C.hlock);
	return NULL;
}

static void finish(struct cmd *c, uint16_t status, uint64_t deadline)
{
	c->status = status;
	c->deadline = deadline;
	/*
	 * Coalescing: everything goes through the completer, which posts all
	 * that is due and raises each vector once per batch.
	 */
	if (!C.o->coalesce && (C.o->tm.nodelay || deadline <= now_ns()))
		complete_now(c);
	else
		heap_push(c);
}

/* ---------------------------------------------------------- faults */
static int range_hit(const struct fault *f, uint64_t slba, uint64_t nlb)
{
	if (!f->nlb)
		return 1;
	return slba < f->slba + f->nlb && f->slba < slba + nlb;
}

/* card.lock held.  Does a media fault of @kind cover this range? */
static int fault_hit(int kind, uint64_t slba, uint64_t nlb)
{
	for (int i = 0; i < C.nfaults; i++)
		if (C.faults[i].kind == kind && range_hit(&C.faults[i], slba, nlb))
			return 1;
	return 0;
}

static int is_lba_cmd(uint8_t op)
{
	return op == VC_CMD_READ || op == VC_CMD_WRITE ||
	       op == VC_CMD_WRITE_ZEROES || op == VC_CMD_DEALLOCATE;
}

/* card.lock held.  Should this command hang?  Consumes one count. */
static int hang_hit(const struct vc_sqe *s)
{
	for (int i = 0; i < C.nfaults; i++) {
		struct fault *f = &C.faults[i];

		if ((f->kind != FAULT_HANG && f->kind != FAULT_HANG_FLUSH) ||
		    !f->count)
			continue;
		if (f->kind == FAULT_HANG_FLUSH && s->opcode != VC_CMD_FLUSH)
			continue;
		if (f->nlb && (!is_lba_cmd(s->opcode) ||
			       !range_hit(f, s->rw.slba, s->rw.nlb)))
			continue;
		if (--f->count == 0)
			C.faults[i] = C.faults[--C.nfaults];
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------ I/O commands */
static __thread uint8_t *xbuf;

static uint16_t check_lba(const struct vc_sqe *s, uint32_t max_nlb)
{
	uint64_t slba = s->rw.slba, nlb = s->rw.nlb;

	if (!nlb || nlb > max_nlb)
		return VC_SC_INVALID_FIELD;
	if (slba >= C.m->capacity || nlb > C.m->capacity - slba)
		return VC_SC_LBA_RANGE;
	return 0;
}

/*
 * A write covering a physical block only in part (smaller than one, or
 * not aligned to one) makes the card read the block, merge and program
 * it again: a read-modify-write.
 */
static void count_rmw(const struct media *m, const struct vc_sqe *s)
{
	uint64_t start = s->rw.slba << m->lba_shift;
	uint64_t len = (uint64_t)s->rw.nlb << m->lba_shift;

	if ((start | len) & (FW_PHYS_BLOCK - 1))
		fwc.rmw_writes++;
}

static void exec_io(struct cmd *c)
{
	struct vc_sqe *s = &c->sqe;
	struct media *m = C.m;
	uint32_t max_nlb = MAX_XFER >> m->lba_shift;
	struct seg segs[MAX_SGE];
	uint64_t done = now_ns();
	int nsegs, rc, hit;
	uint16_t st;

	switch (s->opcode) {
	case VC_CMD_FLUSH:
		fwc.flush_cmds++;
		rc = media_flush(m, &done);
		st = rc ? VC_SC_INTERNAL : 0;
		break;
	case VC_CMD_READ:
	case VC_CMD_WRITE:
		st = check_lba(s, max_nlb);
		if (!st && s->dlen != (uint64_t)s->rw.nlb << m->lba_shift)
			st = VC_SC_INVALID_FIELD;
		if (!st)
			st = sgl_resolve(s, s->dlen, segs, &nsegs);
		if (st)
			break;
		pthread_mutex_lock(&C.lock);
		hit = fault_hit(s->opcode == VC_CMD_READ ? FAULT_READ :
			       FAULT_WRITE, s->rw.slba, s->rw.nlb);
		pthread_mutex_unlock(&C.lock);
		if (s->opcode == VC_CMD_READ) {
			fwc.read_cmds++;
			if (hit) {
				fwc.media_errors++;
				st = VC_SC_READ_ERROR;
				done = timing_read(m, s->rw.slba, s->rw.nlb);
				break;
			}
			rc = media_read(m, s->rw.slba, s->rw.nlb, xbuf, &done);
			if (rc) {
				st = VC_SC_INTERNAL;
				break;
			}
			st = buf_to_segs(segs, nsegs, xbuf);
			if (st)
				break;
			fwc.bytes_read += s->dlen;
		} else {
			fwc.write_cmds++;
			if (s->flags & VC_SQE_F_FUA)
				fwc.fua_cmds++;
			count_rmw(m, s);
			if (hit) {
				fwc.media_errors++;
				st = VC_SC_WRITE_FAULT;
				break;
			}
			st = segs_to_buf(xbuf, segs, nsegs);
			if (st)
				break;
			rc = media_write(m, s->rw.slba, s->rw.nlb, xbuf,
					 s->flags & VC_SQE_F_FUA, &done);
			if (rc) {
				st = VC_SC_INTERNAL;
				break;
			}
			fwc.bytes_written += s->dlen;
		}
		break;
	case VC_CMD_WRITE_ZEROES:
	case VC_CMD_DEALLOCATE:
		st = check_lba(s, (uint32_t)(MAX_ZERO_BYTES >> m->lba_shift));
		if (st)
			break;
		if (s->opcode == VC_CMD_WRITE_ZEROES) {
			fwc.wzeroes_cmds++;
			count_rmw(m, s);
			pthread_mutex_lock(&C.lock);
			hit = fault_hit(FAULT_WRITE, s->rw.slba, s->rw.nlb);
			pthread_mutex_unlock(&C.lock);
			if (hit) {
				fwc.media_errors++;
				st = VC_SC_WRITE_FAULT;
				break;
			}
		} else {
			fwc.dealloc_cmds++;
		}
		rc = media_zero(m, s->rw.slba, s->rw.nlb,
				s->opcode == VC_CMD_DEALLOCATE);
		if (rc)
			st = VC_SC_INTERNAL;
		done = timing_wbuf(m, 0);
		break;
	default:
		st = VC_SC_INVALID_OPCODE;
		break;
	}
	if (st == VC_SC_INTERNAL && atomic_load(&m->io_failed))
		go_fatal("media file I/O failed");
	finish(c, st, done);
}

static void *worker_main(void *arg)
{
	(void)arg;
	xbuf = malloc(MAX_XFER);
	if (!xbuf) {
		fw_log("worker: out of memory");
		exit(1);
	}
	pthread_mutex_lock(&C.lock);
	for (;;) {
		struct cmd *c;

		while (!C.stop && !C.work_head)
			pthread_cond_wait(&C.work_cond, &C.lock);
		if (C.stop)
			break;
		c = C.work_head;
		C.work_head = c->next;
		if (!C.work_head)
			C.work_tail = &C.work_head;
		if (c->epoch != atomic_load(&C.epoch)) {
			free(c);
			continue;
		}
		C.dma_active++;
		pthread_mutex_unlock(&C.lock);
		exec_io(c);
		pthread_mutex_lock(&C.lock);
		C.dma_active--;
		pthread_cond_broadcast(&C.cond);
	}
	pthread_mutex_unlock(&C.lock);
	free(xbuf);
	return NULL;
}

/* --------------------------------------------------- admin commands */
static void admin_put(const struct vc_sqe *s, const void *src, uint32_t len,
		      uint16_t *st)
{
	struct seg segs[MAX_SGE];
	uint32_t dlen = s->dlen ? s->dlen : len;
	int n;
	uint8_t *tmp;

	if (dlen > 65536) {
		*st = VC_SC_INVALID_FIELD;
		return;
	}
	*st = sgl_resolve(s, dlen, segs, &n);
	if (*st)
		return;
	tmp = calloc(1, dlen);
	if (!tmp) {
		*st = VC_SC_INTERNAL;
		return;
	}
	memcpy(tmp, src, len < dlen ? len : dlen);
	*st = buf_to_segs(segs, n, tmp);
	free(tmp);
}

static void pad(char *dst, size_t n, const char *src)
{
	size_t l = strlen(src);

	memset(dst, ' ', n);
	memcpy(dst, src, l < n ? l : n);
}

static void fill_identify(struct vc_identify *id)
{
	struct media *m = C.m;

	memset(id, 0, sizeof(*id));
	if (C.o->serial)
		pad(id->serial, sizeof(id->serial), C.o->serial);
	else
		memcpy(id->serial, m->hdr.serial, sizeof(id->serial));
	if (C.o->model)
		pad(id->model, sizeof(id->model), C.o->model);
	else
		memcpy(id->model, m->hdr.model, sizeof(id->model));
	pad(id->fw_rev, sizeof(id->fw_rev), FW_REV);
	id->capacity = m->capacity;
	id->lba_size = m->lba_size;
	id->phys_block_size = FW_PHYS_BLOCK;
	id->max_xfer = MAX_XFER;
	id->num_ioq = C.o->queues;
	id->max_qdepth = C.o->qdepth;
	id->max_sge = MAX_SGE;
	id->flags = VC_ID_F_VWC | VC_ID_F_FUA | VC_ID_F_DEALLOCATE |
		    VC_ID_F_WRITE_ZEROES;
	id->max_discard_nlb = (uint32_t)(MAX_ZERO_BYTES >> m->lba_shift);
	id->max_wzeroes_nlb = id->max_discard_nlb;
	id->discard_gran = 4096;
	pthread_mutex_lock(&C.lock);
	if (C.ovr_max_xfer)
		id->max_xfer = C.max_xfer_val;
	if (C.ovr_discard_gran)
		id->discard_gran = C.discard_gran_val;
	if (C.ovr_capacity)
		id->capacity = C.capacity_val;
	pthread_mutex_unlock(&C.lock);
}

static void fill_health(struct vc_health_log *h)
{
	struct media *m = C.m;
	uint64_t cap = m->capacity << m->lba_shift;

	memset(h, 0, sizeof(*h));
	h->media_errors = fwc.media_errors;
	h->bytes_read = fwc.bytes_read;
	h->bytes_written = fwc.bytes_written;
	h->read_cmds = fwc.read_cmds;
	h->write_cmds = fwc.write_cmds;
	h->flush_cmds = fwc.flush_cmds;
	h->power_cycles = fwc.power_cycles;
	h->unsafe_shutdowns = fwc.unsafe_shutdowns;
	h->flash_bytes_programmed = fwc.flash_bytes_programmed;
	h->aborts = fwc.aborts;
	/* rated for 3000 full-capacity program/erase cycles */
	h->percent_used = (uint32_t)(fwc.flash_bytes_programmed * 100 /
				     (cap * 3000));
	h->temperature_k = 313;
	h->wbuf_bytes = (uint32_t)media_wbuf_bytes(m);
	h->rmw_writes = fwc.rmw_writes;
}

/* card.lock held */
static int cq_create(unsigned qid, unsigned size, unsigned vector,
		     uint64_t addr)
{
	struct cq *cq = &C.cq[qid];
	void *ring = gm_ptr(addr, (uint64_t)size * sizeof(struct vc_cqe));

	if (!ring || (addr & 15))
		return VC_SC_DATA_XFER;
	pthread_mutex_lock(&cq->lock);
	cq->valid = 1;
	cq->gen++;
	cq->size = size;
	cq->vector = vector;
	cq->ring = ring;
	cq->tail = 0;
	cq->phase = 1;
	cq->nsq = 0;
	cq->irq_pending = 0;
	/* the host starts consuming at entry 0: forget a stale head */
	wr32(&C.db[qid].cq_head, 0);
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/* card.lock held */
static void cq_destroy(unsigned qid)
{
	struct cq *cq = &C.cq[qid];

	pthread_mutex_lock(&cq->lock);
	cq->valid = 0;
	cq->gen++;
	while (cq->backlog) {
		struct pend *p = cq->backlog;

		cq->backlog = p->next;
		free(p);
	}
	cq->backlog_tail = &cq->backlog;
	pthread_mutex_unlock(&cq->lock);
}

/* card.lock held */
static int sq_create(unsigned qid, unsigned size, unsigned cqid, uint64_t addr)
{
	struct sq *sq = &C.sq[qid];
	void *ring = gm_ptr(addr, (uint64_t)size * sizeof(struct vc_sqe));

	if (!ring || (addr & 63))
		return VC_SC_DATA_XFER;
	sq->valid = 1;
	sq->gen++;
	sq->size = size;
	sq->cqid = cqid;
	sq->ring = ring;
	sq->head = 0;
	atomic_store(&sq->head_pub, 0);
	sq->inflight = 0;
	C.cq[cqid].nsq++;
	/* the host starts from an empty queue: forget a stale tail */
	wr32(&C.db[qid].sq_tail, 0);
	return 0;
}

/*
 * Remove every queued or parked command of @sqid (all if sqid < 0) whose
 * epoch is current; return them as a list.  card.lock held.
 */
static struct cmd *steal_cmds(int sqid, int cid)
{
	struct cmd *out = NULL, **pp;

	for (int pass = 0; pass < 2; pass++) {
		pp = pass ? &C.parked : &C.work_head;
		while (*pp) {
			struct cmd *c = *pp;

			if ((sqid < 0 || c->sqid == sqid) &&
			    (cid < 0 || c->sqe.cid == cid)) {
				*pp = c->next;
				if (pass)
					C.nparked--;
				c->next = out;
				out = c;
				if (cid >= 0)
					goto done;
			} else {
				pp = &c->next;
			}
		}
	}
done:
	C.work_tail = &C.work_head;
	while (*C.work_tail)
		C.work_tail = &(*C.work_tail)->next;
	return out;
}

static void admin_delete_sq(unsigned qid, uint16_t *st)
{
	struct sq *sq = &C.sq[qid];
	struct cmd *list;
	uint64_t until = now_ns() + 10ULL * 1000000000ULL;
	unsigned cqid;

	pthread_mutex_lock(&C.lock);
	if (!qid || qid > C.o->queues || !sq->valid) {
		pthread_mutex_unlock(&C.lock);
		*st = VC_SC_INVALID_QID;
		return;
	}
	sq->valid = 0;		/* stop fetching */
	list = steal_cmds(qid, -1);
	pthread_mutex_unlock(&C.lock);
	cqid = sq->cqid;
	while (list) {
		struct cmd *c = list;

		list = c->next;
		c->status = VC_SC_ABORT_SQ_DEL;
		c->result = 0;
		post_cqe(c);
		free(c);
	}
	cq_raise(cqid);
	/* wait for commands still executing or waiting for their deadline */
	pthread_mutex_lock(&C.lock);
	while (sq->inflight > 0 && now_ns() < until) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 10000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&C.cond, &C.lock, &ts);
	}
	if (sq->inflight)
		fw_log("delete SQ %u: %d commands did not finish", qid,
		       sq->inflight);
	sq->gen++;
	sq->inflight = 0;
	C.cq[cqid].nsq--;
	pthread_mutex_unlock(&C.lock);
}

static void exec_admin(struct cmd *c)
{
	struct vc_sqe *s = &c->sqe;
	unsigned qid = s->queue.qid, qsize = s->queue.qsize;
	uint16_t st = 0;

	fwc.admin_cmds++;
	switch (s->opcode) {
	case VC_ADM_IDENTIFY: {
		struct vc_identify *id = malloc(sizeof(*id));

		if (!id) {
			st = VC_SC_INTERNAL;
			break;
		}
		fill_identify(id);
		admin_put(s, id, sizeof(*id), &st);
		free(id);
		break;
	}
	case VC_ADM_GET_LOG: {
		struct vc_health_log h;

		if (s->log.lid != VC_LOG_HEALTH) {
			st = VC_SC_INVALID_FIELD;
			break;
		}
		fill_health(&h);
		admin_put(s, &h, sizeof(h), &st);
		break;
	}
	case VC_ADM_CREATE_CQ:
		pthread_mutex_lock(&C.lock);
		if (!qid || qid > C.o->queues || C.cq[qid].valid)
			st = VC_SC_INVALID_QID;
		else if (qsize < 2 || qsize > C.o->qdepth)
			st = VC_SC_QUEUE_SIZE;
		else if (s->queue.vector >= C.nvec)
			st = VC_SC_INVALID_FIELD;
		else
			st = cq_create(qid, qsize, s->queue.vector, s->dptr);
		pthread_mutex_unlock(&C.lock);
		if (!st)
			fw_log("queue: CQ %u created (%u entries, vector %u)",
			       qid, qsize, s->queue.vector);
		break;
	case VC_ADM_CREATE_SQ:
		pthread_mutex_lock(&C.lock);
		if (!qid || qid > C.o->queues || C.sq[qid].valid)
			st = VC_SC_INVALID_QID;
		else if (qsize < 2 || qsize > C.o->qdepth)
			st = VC_SC_QUEUE_SIZE;
		else if (!s->queue.cqid || s->queue.cqid > C.o->queues ||
			 !C.cq[s->queue.cqid].valid)
			st = VC_SC_INVALID_FIELD;
		else
			st = sq_create(qid, qsize, s->queue.cqid, s->dptr);
		pthread_mutex_unlock(&C.lock);
		if (!st)
			fw_trace("queue: SQ %u created (%u entries, CQ %u)",
				 qid, qsize, s->queue.cqid);
		break;
	case VC_ADM_DELETE_SQ:
		admin_delete_sq(qid, &st);
		break;
	case VC_ADM_DELETE_CQ:
		pthread_mutex_lock(&C.lock);
		if (!qid || qid > C.o->queues || !C.cq[qid].valid)
			st = VC_SC_INVALID_QID;
		else if (C.cq[qid].nsq)
			st = VC_SC_INVALID_FIELD;	/* SQs still attached */
		else
			cq_destroy(qid);
		pthread_mutex_unlock(&C.lock);
		break;
	case VC_ADM_ABORT: {
		struct cmd *v;

		c->result = 1;		/* not aborted */
		pthread_mutex_lock(&C.lock);
		v = s->abort.sqid <= C.o->queues ?
			steal_cmds(s->abort.sqid, s->abort.cid) : NULL;
		pthread_mutex_unlock(&C.lock);
		if (s->abort.sqid > C.o->queues) {
			st = VC_SC_INVALID_QID;
			break;
		}
		if (v) {
			unsigned q = v->cqid;

			fw_log("abort: sq %u cid %u aborted", v->sqid,
			       v->sqe.cid);
			fwc.aborts++;
			v->status = VC_SC_ABORT_REQ;
			v->result = 0;
			post_cqe(v);
			free(v);
			cq_raise(q);
			c->result = 0;
		} else {
			fw_log("abort: sq %u cid %u not found (completed or completing)",
			       s->abort.sqid, s->abort.cid);
		}
		break;
	}
	default:
		st = VC_SC_INVALID_OPCODE;
		break;
	}
	c->status = st;
	complete_now(c);
}

/* ----------------------------------------------------- controller */
static void go_fatal(const char *why)
{
	pthread_mutex_lock(&C.lock);
	if (!C.fatal)
		fw_log("controller: FATAL (CFS set): %s; the host must reset the card",
		       why);
	C.fatal = 1;
	csts_set(VC_CSTS_CFS, 0);
	pthread_mutex_unlock(&C.lock);
}

/*
 * Forget every queue and command.  Waits until no worker is moving data for
 * an old command, so the host may free its buffers once RDY drops.
 */
static void ctrl_reset(const char *why)
{
	struct cmd *list;

	pthread_mutex_lock(&C.lock);
	atomic_fetch_add(&C.epoch, 1);
	list = steal_cmds(-1, -1);
	for (unsigned q = 0; q < C.nvec; q++) {
		C.sq[q].valid = 0;
		C.sq[q].gen++;
		C.sq[q].inflight = 0;
		cq_destroy(q);
		C.cq[q].nsq = 0;
	}
	while (C.dma_active)
		pthread_cond_wait(&C.cond, &C.lock);
	C.enabled = 0;
	C.fatal = 0;
	C.refused_logged = 0;
	pthread_mutex_unlock(&C.lock);
	while (list) {
		struct cmd *c = list;

		list = c->next;
		free(c);
	}
	fwc.resets++;
	fw_log("controller: reset (%s)", why);
}

/*
 * An enable the card cannot honour sets CFS.  It is not latched: while
 * cc.EN stays 1 the card re-evaluates the enable on every tick, so a host
 * that fixes the admin queue registers and re-enables faster than the card
 * notices cc.EN 1->0->1 still gets a ready card.
 */
static void enable_failed(const char *why)
{
	if (!C.refused_logged)
		fw_log("controller: cannot enable: %s; setting CFS", why);
	C.refused_logged = 1;
	csts_set(VC_CSTS_CFS, VC_CSTS_RDY);
}

/* cc.EN is 1 and the controller is not enabled yet.  C.lock not held. */
static void ctrl_enable(void)
{
	struct vc_regs *r = C.regs;
	uint32_t aqa = rd32(&r->aqa);
	unsigned sqs = aqa & 0xffff, cqs = aqa >> 16;
	uint64_t asq = rd64(&r->asq), acq = rd64(&r->acq);
	char why[160];
	int st;

	if (!C.refused_logged)
		gm_revalidate();
	pthread_mutex_lock(&C.lock);
	if (C.refuse) {
		if (!C.refused_logged)
			fw_log("controller: enable requested, refusing (fault injected)%s",
			       C.refuse == 2 ? ": setting CFS" : "");
		C.refused_logged = 1;
		if (C.refuse == 2)
			csts_set(VC_CSTS_CFS, 0);
		pthread_mutex_unlock(&C.lock);
		return;
	}
	if (C.ready_delay_ms) {
		uint64_t now = now_ns();

		if (!C.enable_seen_ns) {
			C.enable_seen_ns = now;
			fw_log("controller: enable requested, ready in %" PRIu64 " ms (fault injected)",
			       C.ready_delay_ms);
		}
		if (now - C.enable_seen_ns < C.ready_delay_ms * 1000000ULL) {
			pthread_mutex_unlock(&C.lock);
			return;
		}
		C.enable_seen_ns = 0;
	}
	if (atomic_load(&C.m->io_failed)) {
		/* one recovery attempt per enable */
		if (C.refused_logged || media_recover(C.m)) {
			enable_failed("the media file failed (host file I/O error)");
			pthread_mutex_unlock(&C.lock);
			return;
		}
	}
	if (sqs < 2 || cqs < 2 || sqs > C.o->qdepth || cqs > C.o->qdepth) {
		snprintf(why, sizeof(why), "bad admin queue sizes (aqa 0x%08x)",
			 aqa);
		enable_failed(why);
		pthread_mutex_unlock(&C.lock);
		return;
	}
	st = cq_create(0, cqs, 0, acq);
	if (!st)
		st = sq_create(0, sqs, 0, asq);
	if (st) {
		cq_destroy(0);
		snprintf(why, sizeof(why),
			 "admin queues outside guest memory or misaligned (asq 0x%" PRIx64 " acq 0x%" PRIx64 ")",
			 asq, acq);
		enable_failed(why);
		pthread_mutex_unlock(&C.lock);
		return;
	}
	wr32(&C.db[0].cq_head, 0);
	C.enabled = 1;
	C.fatal = 0;
	C.refused_logged = 0;
	csts_set(VC_CSTS_RDY, VC_CSTS_SHST_MASK | VC_CSTS_CFS);
	pthread_mutex_unlock(&C.lock);
	fw_log("controller: enabled (admin SQ %u, CQ %u entries), ready",
	       sqs, cqs);
}

static void ctrl_shutdown(void)
{
	int rc;

	fw_log("controller: normal shutdown requested, destaging write buffer");
	csts_set(VC_CSTS_SHST_OCCUR, VC_CSTS_SHST_MASK);
	rc = media_sync(C.m, 1);
	csts_set(VC_CSTS_SHST_CMPLT, VC_CSTS_SHST_MASK);
	fw_log("controller: shutdown complete%s",
	       rc ? " (media write FAILED)" : ", media clean");
}

static void ctrl_check(void)
{
	uint32_t cc = rd32(&C.regs->cc);
	uint32_t csts = rd32(&C.regs->csts);

	if (!atomic_load(&C.connected))
		return;
	if (C.enabled && !(cc & VC_CC_EN)) {
		ctrl_reset("cc.EN cleared by host");
		csts_set(0, VC_CSTS_RDY | VC_CSTS_CFS);
	} else if (!C.enabled && (cc & VC_CC_EN)) {
		ctrl_enable();
	} else if (!C.enabled && !(cc & VC_CC_EN)) {
		C.fatal = 0;
		C.refused_logged = 0;
		pthread_mutex_lock(&C.lock);
		if (C.enable_seen_ns)
			fw_log("controller: enable withdrawn before ready");
		C.enable_seen_ns = 0;
		pthread_mutex_unlock(&C.lock);
		if (csts & (VC_CSTS_RDY | VC_CSTS_CFS))
			csts_set(0, VC_CSTS_RDY | VC_CSTS_CFS);
	}
	if ((cc & VC_CC_SHN_MASK) == VC_CC_SHN_NORMAL) {
		if ((csts & VC_CSTS_SHST_MASK) == VC_CSTS_SHST_NORMAL)
			ctrl_shutdown();
	}
}

/*
 * `stall`: should fetching this command freeze the card?  Consumes the
 * fault.  card.lock held.
 */
static uint64_t stall_hit(unsigned q)
{
	uint64_t ms = C.stall_ms;

	if (!ms || (C.stall_kind == STALL_ADMIN && q != VC_ADMIN_QID) ||
	    (C.stall_kind == STALL_IO && q == VC_ADMIN_QID))
		return 0;
	C.stall_ms = 0;
	return ms;
}

/*
 * The whole card freezes for @ms with command @c fetched: no doorbell, no
 * cc change, no heartbeat.  Then @c runs to the end (its data moves, its
 * completion is posted) before the card looks at anything else, as a
 * firmware that hiccupped mid-command would.  Poller thread.
 */
static void stall_now(const struct cmd *c, uint64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	fw_log("fault: stalling %" PRIu64 " ms with sq %u cid %u op 0x%02x fetched",
	       ms, c->sqid, c->sqe.cid, c->sqe.opcode);
	atomic_store(&C.stall_until_ns, now_ns() + ms * 1000000ULL);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	fw_log("fault: stall over, finishing sq %u cid %u", c->sqid,
	       c->sqe.cid);
}

/* Fetch new entries of SQ @q.  Poller thread only. */
static void sq_fetch(unsigned q)
{
	struct sq *sq = &C.sq[q];
	uint64_t stall;
	uint32_t tail;
	int single;

	if (!sq->valid || C.fatal)
		return;
	tail = rd32(&C.db[q].sq_tail);
	if (tail >= sq->size) {
		char why[80];

		snprintf(why, sizeof(why), "SQ %u tail doorbell %u >= size %u",
			 q, tail, sq->size);
		go_fatal(why);
		return;
	}
	/* exactly one new command: maybe run it here (see below) */
	single = (sq->head + 1) % sq->size == tail;
	while (sq->head != tail && sq->valid) {
		struct cmd *c = malloc(sizeof(*c));

		if (!c)
			break;
		if (gm_copy(&c->sqe, &sq->ring[sq->head], sizeof(c->sqe))) {
			free(c);
			go_fatal("SQ memory vanished");
			break;
		}
		sq->head = (sq->head + 1) % sq->size;
		atomic_store(&sq->head_pub, sq->head);
		c->next = NULL;
		c->sqid = q;
		c->cqid = sq->cqid;
		c->sq_gen = sq->gen;
		c->cq_gen = C.cq[sq->cqid].gen;
		c->epoch = atomic_load(&C.epoch);
		c->result = 0;
		c->status = 0;
		fw_trace("sqe sq %u cid %u op 0x%02x flags %u slba %" PRIu64 " nlb %u nseg %u dlen %u",
			 q, c->sqe.cid, c->sqe.opcode, c->sqe.flags,
			 (uint64_t)c->sqe.rw.slba, c->sqe.rw.nlb, c->sqe.nseg,
			 c->sqe.dlen);
		pthread_mutex_lock(&C.lock);
		sq->inflight++;
		stall = stall_hit(q);
		if (q == VC_ADMIN_QID && !stall && C.hang_admin &&
		    (C.hang_admin_op < 0 || C.hang_admin_op == c->sqe.opcode)) {
			C.hang_admin--;
			fw_log("fault: admin cid %u op 0x%02x will never complete (hang-admin injected)",
			       c->sqe.cid, c->sqe.opcode);
			c->next = C.parked;
			C.parked = c;
			C.nparked++;
			pthread_mutex_unlock(&C.lock);
			continue;
		}
		if (stall) {
			pthread_mutex_unlock(&C.lock);
			stall_now(c, stall);
			if (q == VC_ADMIN_QID)
				exec_admin(c);
			else
				exec_io(c);
			continue;
		}
		if (q == VC_ADMIN_QID) {
			pthread_mutex_unlock(&C.lock);
			exec_admin(c);
			continue;
		}
		if (hang_hit(&c->sqe)) {
			fw_log("fault: sq %u cid %u op 0x%02x will never complete (hang injected)",
			       q, c->sqe.cid, c->sqe.opcode);
			c->next = C.parked;
			C.parked = c;
			C.nparked++;
		} else if (single && !C.work_head && !C.dma_active &&
			   (c->sqe.opcode == VC_CMD_READ ||
			    (c->sqe.opcode == VC_CMD_WRITE &&
			     !(c->sqe.flags & VC_SQE_F_FUA)))) {
			/*
			 * Queue depth 1: a lone read or buffered write runs
			 * in the poller, saving a thread hand-off (which costs
			 * most when QEMU's vCPU threads keep the CPUs busy).
			 * Commands that may block for long (flush, FUA,
			 * zeroes) always go to the workers.
			 */
			pthread_mutex_unlock(&C.lock);
			exec_io(c);
			continue;
		} else {
			*C.work_tail = c;
			C.work_tail = &c->next;
			pthread_cond_signal(&C.work_cond);
		}
		pthread_mutex_unlock(&C.lock);
	}
}

static void retry_backlogs(int *pending)
{
	*pending = 0;
	for (unsigned q = 0; q < C.nvec; q++) {
		struct cq *cq = &C.cq[q];
		int had;

		pthread_mutex_lock(&cq->lock);
		had = cq->backlog != NULL;
		if (had)
			cq_drain_backlog(cq, q);
		if (cq->backlog)
			*pending = 1;
		pthread_mutex_unlock(&cq->lock);
		if (had)
			cq_raise(q);
	}
}

static void *poller_main(void *arg)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = {
		.it_interval = { 0, VC_FW_POLL_MS * 1000000L },
		.it_value = { 0, VC_FW_POLL_MS * 1000000L },
	};
	struct epoll_event ev;
	uint64_t last_save = now_ns();
	int backlog = 0;

	(void)arg;
	xbuf = malloc(MAX_XFER);	/* for commands run inline */
	if (!xbuf || ep < 0 || tfd < 0 ||
	    timerfd_settime(tfd, 0, &its, NULL) < 0) {
		fw_log("poller: cannot set up epoll/timerfd: %s", strerror(errno));
		exit(1);
	}
	for (unsigned v = 0; v < C.nvec; v++) {
		ev.events = EPOLLIN;
		ev.data.u32 = v;
		epoll_ctl(ep, EPOLL_CTL_ADD, C.my_efd[v], &ev);
	}
	ev.events = EPOLLIN;
	ev.data.u32 = 1000;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.u32 = 1001;
	epoll_ctl(ep, EPOLL_CTL_ADD, C.wake_efd, &ev);

	while (!C.stop) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, backlog ? 1 : -1);
		int tick = 0;
		uint64_t v;

		pthread_mutex_lock(&C.state_lock);
		for (int i = 0; i < n; i++) {
			unsigned id = evs[i].data.u32;

			if (id == 1000) {
				if (read(tfd, &v, sizeof(v)) > 0)
					tick = 1;
			} else if (id == 1001) {
				if (read(C.wake_efd, &v, sizeof(v)) < 0)
					continue;
			} else if (read(C.my_efd[id], &v, sizeof(v)) > 0) {
				fwc.doorbells++;
				if (!atomic_load(&C.connected))
					continue;
				if (id == 0)
					ctrl_check();
				sq_fetch(id);
			}
		}
		if (C.stop) {
			pthread_mutex_unlock(&C.state_lock);
			break;
		}
		if (tick && atomic_load(&C.connected)) {
			ctrl_check();
			for (unsigned q = 0; q < C.nvec; q++)
				sq_fetch(q);
			if (now_ns() - last_save > 1000000000ULL) {
				uint64_t sum = fwc.read_cmds + fwc.write_cmds +
					       fwc.flush_cmds + fwc.media_errors;

				last_save = now_ns();
				if (sum != C.last_saved) {
					C.last_saved = sum;
					media_write_hdr(C.m, 0);
				}
			}
		}
		retry_backlogs(&backlog);
		pthread_mutex_unlock(&C.state_lock);
	}
	close(ep);
	close(tfd);
	free(xbuf);
	return NULL;
}

/*
 * The heartbeat has its own thread: a long admin command or a shutdown
 * destage in the poller must not look like a dead card to the host.
 */
static void *heartbeat_main(void *arg)
{
	struct timespec ts = { 0, VC_FW_POLL_MS * 1000000L };

	(void)arg;
	while (!atomic_load(&C.hb_stop)) {
		nanosleep(&ts, NULL);
		if (now_ns() < atomic_load(&C.stall_until_ns))
			continue;	/* frozen by `stall` */
		wr32(&C.regs->heartbeat, rd32(&C.regs->heartbeat) + 1);
	}
	return NULL;
}

/* ----------------------------------------------------------- ivshmem */
static int send_msg(int fd, int64_t val, int passfd)
{
	struct iovec iov = { .iov_base = &val, .iov_len = sizeof(val) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (passfd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &passfd, sizeof(int));
	}
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == sizeof(val) ? 0 : -1;
}

static int client_handshake(int fd, int id)
{
	unsigned v;

	if (send_msg(fd, 0, -1) || send_msg(fd, id, -1) ||
	    send_msg(fd, -1, C.shm_fd))
		return -1;
	for (v = 0; v < C.nvec; v++)
		if (send_msg(fd, VC_FW_PEER_ID, C.my_efd[v]))
			return -1;
	for (v = 0; v < C.nvec; v++)
		if (send_msg(fd, id, C.irq_efd[v]))
			return -1;
	return 0;
}

static void client_disconnect(void);

static void client_connect(void)
{
	int fd = accept4(C.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	int id;

	if (fd < 0)
		return;
	if (C.client_fd >= 0) {
		/*
		 * One guest per card.  A new connection while the old one is
		 * still open is a re-plug (device_del + device_add with a new
		 * chardev, or a QEMU that reconnects): the newcomer wins.
		 */
		fw_log("ivshmem: a new client replaces the connected guest");
		client_disconnect();
	}
	id = C.next_id++;
	if (C.next_id > 65535)
		C.next_id = 1;
	pthread_mutex_lock(&C.state_lock);
	/* a fresh guest: registers back to power-on state */
	regs_init();
	if (client_handshake(fd, id)) {
		pthread_mutex_unlock(&C.state_lock);
		fw_log("ivshmem: handshake with client %d failed: %s", id,
		       strerror(errno));
		close(fd);
		return;
	}
	C.client_fd = fd;
	pthread_mutex_lock(&C.gm_lock);
	gm_refresh_locked();
	pthread_mutex_unlock(&C.gm_lock);
	atomic_store(&C.connected, 1);
	pthread_mutex_unlock(&C.state_lock);
	fw_log("ivshmem: guest connected as peer %d (%u vectors)", id, C.nvec);
}

static void client_disconnect(void)
{
	pthread_mutex_lock(&C.state_lock);
	atomic_store(&C.connected, 0);
	close(C.client_fd);
	C.client_fd = -1;
	fw_log("ivshmem: guest disconnected");
	ctrl_reset("guest disconnected");
	csts_set(0, VC_CSTS_RDY | VC_CSTS_CFS);
	wr32(&C.regs->cc, 0);
	gm_close();
	/*
	 * The next guest gets its own interrupt eventfds: a QEMU that is
	 * still alive must not steal its interrupts.  The old ones stay open
	 * until exit (a completion racing with this may still write one).
	 */
	for (unsigned v = 0; v < C.nvec; v++) {
		int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

		if (fd < 0)
			break;
		if (C.nretired < MAX_RETIRED)
			C.retired[C.nretired++] = C.irq_efd[v];
		else
			close(C.irq_efd[v]);
		__atomic_store_n(&C.irq_efd[v], fd, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&C.state_lock);
}

/* ------------------------------------------------------ ctl socket */
static void out(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void out(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < *cap - *len)
			break;
		*cap = *cap * 2 + n + 64;
		*buf = realloc(*buf, *cap);
		if (!*buf)
			exit(1);
	}
	*len += n;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

static void stats(char **b, size_t *l, size_t *c, int json)
{
	struct {
		const char *k;
		uint64_t v;
	} kv[] = {
		{ "power_cycles", fwc.power_cycles },
		{ "unsafe_shutdowns", fwc.unsafe_shutdowns },
		{ "media_errors", fwc.media_errors },
		{ "bytes_read", fwc.bytes_read },
		{ "bytes_written", fwc.bytes_written },
		{ "read_cmds", fwc.read_cmds },
		{ "write_cmds", fwc.write_cmds },
		{ "flush_cmds", fwc.flush_cmds },
		{ "fua_cmds", fwc.fua_cmds },
		{ "rmw_writes", fwc.rmw_writes },
		{ "dealloc_cmds", fwc.dealloc_cmds },
		{ "wzeroes_cmds", fwc.wzeroes_cmds },
		{ "admin_cmds", fwc.admin_cmds },
		{ "error_completions", fwc.errors },
		{ "aborts", fwc.aborts },
		{ "flash_bytes_programmed", fwc.flash_bytes_programmed },
		{ "destages", fwc.destages },
		{ "wbuf_bytes", media_wbuf_bytes(C.m) },
		{ "wbuf_max", C.m->bytes_max },
		{ "doorbells", fwc.doorbells },
		{ "interrupts", fwc.irqs },
		{ "resets", fwc.resets },
		{ "capacity_blocks", C.m->capacity },
		{ "lba_size", C.m->lba_size },
		{ "io_queues", C.o->queues },
		{ "connected", (uint64_t)atomic_load(&C.connected) },
		{ "enabled", (uint64_t)C.enabled },
		{ "ready", !!(rd32(&C.regs->csts) & VC_CSTS_RDY) },
		{ "fatal", !!(rd32(&C.regs->csts) & VC_CSTS_CFS) },
		{ "hung_cmds", (uint64_t)C.nparked },
		{ "heartbeat", rd32(&C.regs->heartbeat) },
	};
	size_t n = sizeof(kv) / sizeof(kv[0]);

	if (json)
		out(b, l, c, "{");
	for (size_t i = 0; i < n; i++) {
		if (json)
			out(b, l, c, "%s\"%s\": %" PRIu64, i ? ", " : "",
			    kv[i].k, kv[i].v);
		else
			out(b, l, c, "%-24s %" PRIu64 "\n", kv[i].k, kv[i].v);
	}
	if (json)
		out(b, l, c, "}\n");
}

static const char *fault_name(int k)
{
	return k == FAULT_READ ? "read-error" : k == FAULT_WRITE ?
	       "write-error" : k == FAULT_HANG_FLUSH ? "hang-flush" : "hang";
}

/* Add an injected fault; a full table is reported as an error reply. */
static int add_fault(struct fault f, char **b, size_t *l, size_t *c)
{
	pthread_mutex_lock(&C.lock);
	if (C.nfaults == MAX_FAULTS) {
		pthread_mutex_unlock(&C.lock);
		out(b, l, c, "error: too many faults (max %d)\n", MAX_FAULTS);
		return 1;
	}
	C.faults[C.nfaults++] = f;
	pthread_mutex_unlock(&C.lock);
	return 0;
}

/* Run one control command; reply text ends with "ok" or "error: ...". */
static int ctl_exec(int argc, char **argv, char **b, size_t *l, size_t *c)
{
	const char *cmd = argc ? argv[0] : "";
	uint64_t a = 0, n = 0, cnt = 1;

	if (!strcmp(cmd, "stats")) {
		stats(b, l, c, argc > 1 && !strcmp(argv[1], "--json"));
	} else if (!strcmp(cmd, "read-error") || !strcmp(cmd, "write-error")) {
		if (argc != 3 || parse_u64(argv[1], &a) || parse_u64(argv[2], &n) ||
		    !n) {
			out(b, l, c, "error: usage: %s SLBA NLB\n", cmd);
			return 1;
		}
		if (add_fault((struct fault){
				.kind = cmd[0] == 'r' ? FAULT_READ : FAULT_WRITE,
				.slba = a, .nlb = n,
			}, b, l, c))
			return 1;
		fw_log("fault: %s on LBA %" PRIu64 "+%" PRIu64, cmd, a, n);
	} else if (!strcmp(cmd, "hang")) {
		if ((argc != 1 && argc != 2 && argc != 4) ||
		    (argc >= 2 && (parse_u64(argv[1], &cnt) || !cnt)) ||
		    (argc == 4 && (parse_u64(argv[2], &a) ||
				   parse_u64(argv[3], &n) || !n))) {
			out(b, l, c, "error: usage: hang [COUNT [SLBA NLB]]\n");
			return 1;
		}
		if (add_fault((struct fault){
				.kind = FAULT_HANG, .slba = a, .nlb = n,
				.count = cnt,
			}, b, l, c))
			return 1;
		fw_log("fault: the next %" PRIu64 " I/O commands%s will hang",
		       cnt, n ? " in the LBA range" : "");
	} else if (!strcmp(cmd, "hang-flush")) {
		if (argc > 2 || (argc == 2 && (parse_u64(argv[1], &cnt) || !cnt))) {
			out(b, l, c, "error: usage: hang-flush [COUNT]\n");
			return 1;
		}
		if (add_fault((struct fault){ .kind = FAULT_HANG_FLUSH,
					      .count = cnt }, b, l, c))
			return 1;
		fw_log("fault: the next %" PRIu64 " FLUSH commands will hang", cnt);
	} else if (!strcmp(cmd, "hang-admin")) {
		int op = argc == 3 ? (!strcmp(argv[2], "abort") ? VC_ADM_ABORT :
				      -2) : -1;

		if (argc > 3 || op == -2 ||
		    (argc >= 2 && (parse_u64(argv[1], &cnt) || !cnt))) {
			out(b, l, c, "error: usage: hang-admin [COUNT [abort]]\n");
			return 1;
		}
		pthread_mutex_lock(&C.lock);
		C.hang_admin = cnt;
		C.hang_admin_op = op;
		pthread_mutex_unlock(&C.lock);
		fw_log("fault: the next %" PRIu64 " admin %s will hang", cnt,
		       op < 0 ? "commands" : "aborts");
	} else if (!strcmp(cmd, "stall")) {
		int kind = argc == 3 ? (!strcmp(argv[2], "admin") ? STALL_ADMIN :
					!strcmp(argv[2], "io") ? STALL_IO : 0) :
			   STALL_ANY;

		if ((argc != 2 && argc != 3) || parse_u64(argv[1], &n) || !n ||
		    n > 600000 || !kind) {
			out(b, l, c, "error: usage: stall MS [admin|io] (MS 1..600000)\n");
			return 1;
		}
		pthread_mutex_lock(&C.lock);
		C.stall_ms = n;
		C.stall_kind = kind;
		pthread_mutex_unlock(&C.lock);
		fw_log("fault: the card will stall %" PRIu64 " ms at the next %scommand",
		       n, kind == STALL_ADMIN ? "admin " : kind == STALL_IO ? "I/O " : "");
	} else if (!strcmp(cmd, "ident")) {
		const char *f = argc == 3 ? argv[1] : "";

		if (argc != 3 || parse_u64(argv[2], &n) ||
		    (strcmp(f, "max_xfer") && strcmp(f, "discard_gran") &&
		     strcmp(f, "capacity")) ||
		    (strcmp(f, "capacity") && n > UINT32_MAX)) {
			out(b, l, c, "error: usage: ident max_xfer|discard_gran|capacity VALUE\n");
			return 1;
		}
		pthread_mutex_lock(&C.lock);
		if (!strcmp(f, "max_xfer")) {
			C.ovr_max_xfer = 1;
			C.max_xfer_val = (uint32_t)n;
		} else if (!strcmp(f, "discard_gran")) {
			C.ovr_discard_gran = 1;
			C.discard_gran_val = (uint32_t)n;
		} else {
			C.ovr_capacity = 1;
			C.capacity_val = n;
		}
		pthread_mutex_unlock(&C.lock);
		fw_log("fault: identify reports %s = %" PRIu64, f, n);
	} else if (!strcmp(cmd, "ready-delay")) {
		if (argc != 2 || parse_u64(argv[1], &n) || n > 600000) {
			out(b, l, c, "error: usage: ready-delay MS (0..600000)\n");
			return 1;
		}
		pthread_mutex_lock(&C.lock);
		C.ready_delay_ms = n;
		C.enable_seen_ns = 0;
		pthread_mutex_unlock(&C.lock);
		fw_log("fault: every enable takes %" PRIu64 " ms to become ready", n);
	} else if (!strcmp(cmd, "refuse")) {
		int cfs = argc > 1 && !strcmp(argv[1], "cfs");

		if (argc > 2 || (argc == 2 && !cfs)) {
			out(b, l, c, "error: usage: refuse [cfs]\n");
			return 1;
		}
		pthread_mutex_lock(&C.lock);
		C.refuse = cfs ? 2 : 1;
		pthread_mutex_unlock(&C.lock);
		fw_log("fault: the card will refuse the next enable%s",
		       cfs ? " with CFS" : "");
	} else if (!strcmp(cmd, "clear")) {
		pthread_mutex_lock(&C.lock);
		C.nfaults = 0;
		C.refuse = 0;
		C.hang_admin = 0;
		C.stall_ms = 0;
		C.ready_delay_ms = 0;
		C.ovr_max_xfer = C.ovr_discard_gran = C.ovr_capacity = 0;
		pthread_mutex_unlock(&C.lock);
		fw_log("fault: all faults cleared");
	} else if (!strcmp(cmd, "faults")) {
		pthread_mutex_lock(&C.lock);
		for (int i = 0; i < C.nfaults; i++) {
			struct fault *f = &C.faults[i];

			out(b, l, c, "%s", fault_name(f->kind));
			if (f->kind == FAULT_HANG || f->kind == FAULT_HANG_FLUSH)
				out(b, l, c, " count %" PRIu64, f->count);
			if (f->nlb)
				out(b, l, c, " lba %" PRIu64 "+%" PRIu64,
				    f->slba, f->nlb);
			out(b, l, c, "\n");
		}
		if (C.refuse)
			out(b, l, c, "refuse%s\n", C.refuse == 2 ? " cfs" : "");
		if (C.hang_admin)
			out(b, l, c, "hang-admin count %" PRIu64 "%s\n",
			    C.hang_admin, C.hang_admin_op < 0 ? "" : " abort");
		if (C.stall_ms)
			out(b, l, c, "stall %" PRIu64 " ms%s\n", C.stall_ms,
			    C.stall_kind == STALL_ADMIN ? " admin" :
			    C.stall_kind == STALL_IO ? " io" : "");
		if (C.ready_delay_ms)
			out(b, l, c, "ready-delay %" PRIu64 " ms\n",
			    C.ready_delay_ms);
		if (C.ovr_max_xfer)
			out(b, l, c, "ident max_xfer %u\n", C.max_xfer_val);
		if (C.ovr_discard_gran)
			out(b, l, c, "ident discard_gran %u\n",
			    C.discard_gran_val);
		if (C.ovr_capacity)
			out(b, l, c, "ident capacity %" PRIu64 "\n",
			    C.capacity_val);
		out(b, l, c, "hung commands: %d\n", C.nparked);
		pthread_mutex_unlock(&C.lock);
	} else if (!strcmp(cmd, "powercut")) {
		fw_log("POWER CUT: dropping %zu bytes of write buffer, exiting without destage",
		       media_wbuf_bytes(C.m));
		return 2;
	} else if (!strcmp(cmd, "flush")) {
		if (media_flush(C.m, NULL)) {
			out(b, l, c, "error: flush failed\n");
			return 1;
		}
	} else if (!strcmp(cmd, "help") || !*cmd) {
		out(b, l, c,
		    "commands: stats [--json] | read-error SLBA NLB | write-error SLBA NLB |\n"
		    "  hang [COUNT [SLBA NLB]] | hang-flush [COUNT] | hang-admin [COUNT] |\n"
		    "  stall MS [admin|io] |\n"
		    "  ready-delay MS | ident FIELD VALUE | refuse [cfs] | clear | faults |\n"
		    "  flush | powercut\n");
	} else {
		out(b, l, c, "error: unknown command '%s' (try help)\n", cmd);
		return 1;
	}
	out(b, l, c, "ok\n");
	return 0;
}

static void ctl_serve(void);

/*
 * Control connections get their own thread: a slow client must not delay
 * noticing QEMU going away, and `stats` must answer while main is busy.
 */
static void *ctl_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd p = { .fd = C.ctl_fd, .events = POLLIN };

		if (poll(&p, 1, 200) < 0 && errno != EINTR)
			break;
		if (atomic_load(&C.ctl_stop))
			break;
		if (p.revents & POLLIN)
			ctl_serve();
	}
	return NULL;
}

static void ctl_serve(void)
{
	int fd = accept4(C.ctl_fd, NULL, NULL, SOCK_CLOEXEC);
	char line[1024], *argv[16], *save, *tok;
	size_t len = 0, cap = 256, ol = 0;
	char *reply;
	int argc = 0, rc;
	struct pollfd p;

	if (fd < 0)
		return;
	p.fd = fd;
	p.events = POLLIN;
	while (len < sizeof(line) - 1) {
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0)
			break;
		n = read(fd, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		if (memchr(line, '\n', len))
			break;
	}
	line[len] = 0;
	if (!len) {		/* a connect probe: nothing to answer */
		close(fd);
		return;
	}
	line[strcspn(line, "\r\n")] = 0;
	for (tok = strtok_r(line, " \t", &save); tok && argc < 16;
	     tok = strtok_r(NULL, " \t", &save))
		argv[argc++] = tok;
	reply = malloc(cap);
	if (!reply)
		exit(1);
	reply[0] = 0;
	rc = ctl_exec(argc, argv, &reply, &ol, &cap);
	if (rc == 2) {
		/* power cut: answer, then die without destaging */
		static const char ok[] = "ok\n";

		if (write(fd, ok, sizeof(ok) - 1) < 0)
			_exit(0);
		_exit(0);
	}
	if (write(fd, reply, ol) < 0)
		fw_log("ctl: cannot reply: %s", strerror(errno));
	free(reply);
	close(fd);
}

/* ------------------------------------------------------------ setup */
static int listen_unix(const char *path, const char *what)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fw_log("%s path too long: %s", what, path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (!lstat(path, &st)) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			fw_log("%s %s exists and is not a socket", what, path);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && !connect(probe, (struct sockaddr *)&sa,
					   sizeof(sa))) {
			close(probe);
			fw_log("%s %s is in use by another process", what, path);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 4) < 0) {
		fw_log("cannot listen on %s %s: %s", what, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int setup(void)
{
	sigset_t ss;

	C.nvec = C.o->queues + 1;
	C.client_fd = -1;
	C.gm_fd = -1;
	C.next_id = 1;
	C.work_tail = &C.work_head;
	pthread_mutex_init(&C.lock, NULL);
	pthread_mutex_init(&C.state_lock, NULL);
	pthread_mutex_init(&C.gm_lock, NULL);
	pthread_mutex_init(&C.hlock, NULL);
	pthread_cond_init(&C.cond, NULL);
	pthread_cond_init(&C.work_cond, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&C.hcond, &ca);
		pthread_condattr_destroy(&ca);
	}
	for (unsigned q = 0; q < MAX_VEC; q++) {
		pthread_mutex_init(&C.cq[q].lock, NULL);
		C.cq[q].backlog_tail = &C.cq[q].backlog;
	}
	C.refuse = C.o->refuse;

	C.shm_fd = memfd_create("vcache-card-bar2", MFD_CLOEXEC);
	if (C.shm_fd < 0 || ftruncate(C.shm_fd, C.o->shm_size) < 0) {
		fw_log("cannot create card memory: %s", strerror(errno));
		return -1;
	}
	C.shm = mmap(NULL, C.o->shm_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     C.shm_fd, 0);
	if (C.shm == MAP_FAILED) {
		fw_log("cannot map card memory: %s", strerror(errno));
		return -1;
	}
	C.regs = (struct vc_regs *)C.shm;
	C.db = (struct vc_doorbell *)(C.shm + VC_PAGE_SIZE);
	regs_init();
	for (unsigned v = 0; v < C.nvec; v++) {
		C.my_efd[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		C.irq_efd[v] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (C.my_efd[v] < 0 || C.irq_efd[v] < 0) {
			fw_log("cannot create eventfds: %s", strerror(errno));
			return -1;
		}
	}
	C.wake_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	sigemptyset(&ss);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &ss, NULL);
	signal(SIGPIPE, SIG_IGN);
	C.sig_fd = signalfd(-1, &ss, SFD_CLOEXEC);
	{
		struct sigaction sa = {
			.sa_sigaction = sigbus_handler,
			.sa_flags = SA_SIGINFO | SA_NODEFER,
		};

		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
	}

	C.listen_fd = listen_unix(C.o->socket_path, "socket");
	if (C.listen_fd < 0)
		return -1;
	C.ctl_fd = -1;
	if (C.o->ctl_path) {
		C.ctl_fd = listen_unix(C.o->ctl_path, "control socket");
		if (C.ctl_fd < 0) {
			unlink(C.o->socket_path);
			return -1;
		}
	}
	return 0;
}

static void stop_threads(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&C.lock);
	C.stop = 1;
	pthread_cond_broadcast(&C.work_cond);
	pthread_mutex_unlock(&C.lock);
	if (write(C.wake_efd, &one, sizeof(one)) < 0)
		fw_log("cannot wake the poller");
	pthread_join(C.poller, NULL);
	for (unsigned i = 0; i < C.o->threads; i++)
		pthread_join(C.workers[i], NULL);
	pthread_mutex_lock(&C.hlock);
	C.hstop = 1;
	pthread_cond_broadcast(&C.hcond);
	pthread_mutex_unlock(&C.hlock);
	pthread_join(C.completer, NULL);
	atomic_store(&C.hb_stop, 1);
	pthread_join(C.heartbeat, NULL);
}

/* Release what is left after the threads stopped (keeps ASan quiet). */
static void card_free(void)
{
	struct cmd *l = steal_cmds(-1, -1);

	while (l) {
		struct cmd *c = l;

		l = c->next;
		free(c);
	}
	for (unsigned q = 0; q < MAX_VEC; q++)
		cq_destroy(q);
	while (C.hn)
		free(heap_pop());
	free(C.heap);
	free(C.workers);
	gm_close();
	for (int i = 0; i < C.nretired; i++)
		close(C.retired[i]);
	munmap(C.shm, C.o->shm_size);
	close(C.shm_fd);
}

int card_run(struct fw_opts *o, struct media *m)
{
	int rc = 0, running = 1;

	C.o = o;
	C.m = m;
	if (setup())
		return 1;
	media_start(m);
	C.workers = calloc(o->threads, sizeof(*C.workers));
	if (!C.workers || pthread_create(&C.poller, NULL, poller_main, NULL) ||
	    pthread_create(&C.completer, NULL, completer_main, NULL) ||
	    pthread_create(&C.heartbeat, NULL, heartbeat_main, NULL)) {
		fw_log("cannot start threads");
		return 1;
	}
	for (unsigned i = 0; i < o->threads; i++)
		if (pthread_create(&C.workers[i], NULL, worker_main, NULL)) {
			fw_log("cannot start worker threads");
			return 1;
		}
	if (C.ctl_fd >= 0 &&
	    pthread_create(&C.ctl_thread, NULL, ctl_main, NULL)) {
		fw_log("cannot start the control thread");
		return 1;
	}
	fw_log("card ready: socket %s, %u I/O queues (%u vectors), %" PRIu64 " x %u-byte blocks, write buffer %zu MiB, timing %s%s%s",
	       o->socket_path, o->queues, C.nvec, m->capacity, m->lba_size,
	       o->wbuf_bytes >> 20, o->tm.nodelay ? "nodelay" : "flash",
	       o->bad_magic ? ", BAD MAGIC" : "",
	       o->bad_version ? ", BAD VERSION" : "");

	while (running) {
		struct pollfd p[4];
		int np = 0, ci = -1;

		p[np].fd = C.listen_fd;
		p[np++].events = POLLIN;
		p[np].fd = C.sig_fd;
		p[np++].events = POLLIN;
		if (C.client_fd >= 0) {
			ci = np;
			p[np].fd = C.client_fd;
			p[np++].events = POLLIN | POLLRDHUP;
		}
		if (poll(p, np, -1) < 0) {
			if (errno == EINTR)
				continue;
			fw_log("poll: %s", strerror(errno));
			rc = 1;
			break;
		}
		if (p[1].revents) {
			struct signalfd_siginfo si;

			if (read(C.sig_fd, &si, sizeof(si)) == sizeof(si))
				fw_log("got signal %u (%s), shutting down cleanly",
				       si.ssi_signo, strsignal(si.ssi_signo));
			running = 0;
			break;
		}
		if (ci >= 0 && p[ci].revents) {
			char junk[64];
			ssize_t n = recv(C.client_fd, junk, sizeof(junk),
					 MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN &&
				       errno != EINTR) ||
			    (p[ci].revents & (POLLHUP | POLLERR | POLLRDHUP))) {
				client_disconnect();
				if (!o->stay) {
					fw_log("QEMU went away: shutting down cleanly");
					running = 0;
					break;
				}
				media_sync(m, 1);
			}
		}
		if (p[0].revents)
			client_connect();
	}
	atomic_store(&C.connected, 0);
	if (C.ctl_fd >= 0) {
		atomic_store(&C.ctl_stop, 1);
		pthread_join(C.ctl_thread, NULL);
		close(C.ctl_fd);
	}
	stop_threads();
	if (C.client_fd >= 0)
		ctrl_reset("firmware exiting");
	if (media_close(m, 1)) {
		fw_log("exit: destaging the write buffer FAILED; media left unclean");
		rc = 1;
	} else {
		fw_log("exit: write buffer destaged, media marked clean");
	}
	fw_log("exit: lifetime %" PRIu64 " reads (%" PRIu64 " MiB), %" PRIu64 " writes (%" PRIu64 " MiB), %" PRIu64 " flushes, %" PRIu64 " media errors, %" PRIu64 " power cycles, %" PRIu64 " unsafe shutdowns",
	       (uint64_t)fwc.read_cmds, (uint64_t)fwc.bytes_read >> 20,
	       (uint64_t)fwc.write_cmds, (uint64_t)fwc.bytes_written >> 20,
	       (uint64_t)fwc.flush_cmds, (uint64_t)fwc.media_errors,
	       (uint64_t)fwc.power_cycles, (uint64_t)fwc.unsafe_shutdowns);
	unlink(o->socket_path);
	if (o->ctl_path)
		unlink(o->ctl_path);
	card_free();
	media_free(m);
	return rc;
}
