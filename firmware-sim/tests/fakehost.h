/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fakehost: plays QEMU + the vcache driver against firmware-sim, with no VM.
 *
 * It connects to the firmware's ivshmem socket as the client, receives the
 * card memory and the eventfds, maps a "guest RAM" file it created itself
 * (DMA address == file offset, as with QEMU's memory-backend-file), builds
 * admin and I/O queues there, rings doorbells by writing the firmware's
 * eventfds and waits for "MSI-X" interrupts on its own eventfds.
 *
 * Reusable: the only dependencies are libc and include/vcache/vc_card.h.
 */
#ifndef FAKEHOST_H
#define FAKEHOST_H

#include <stddef.h>
#include <stdint.h>

#include "vcache/vc_card.h"

#define FH_MAX_VEC	256

struct fh_queue {
	int live;
	uint16_t size;
	uint16_t vector;
	uint64_t sq_dma, cq_dma;
	struct vc_sqe *sq;
	struct vc_cqe *cq;
	uint16_t sq_tail, cq_head, phase;
	uint16_t next_cid;
	uint16_t sq_head;		/* last sq_head seen in a CQE */
};

struct fakehost {
	int sock;			/* ivshmem connection */
	int id;				/* our peer id */
	int nvec;
	int shm_fd;
	size_t shm_size;
	uint8_t *shm;
	volatile struct vc_regs *regs;
	volatile struct vc_doorbell *db;
	int fw_efd[FH_MAX_VEC];		/* ring the firmware (doorbell) */
	int irq_efd[FH_MAX_VEC];	/* our MSI-X vectors */
	int mem_fd;
	uint8_t *mem;			/* guest RAM */
	size_t mem_size;
	uint64_t brk;			/* bump allocator in guest RAM */
	struct fh_queue q[FH_MAX_VEC];
	char err[256];			/* last error, for test messages */
};

/*
 * Create (truncate) the guest RAM file @mem_path of @mem_size bytes, connect
 * to the firmware at @sock_path and receive @nvec vectors.  0 or -1.
 */
int  fh_connect(struct fakehost *h, const char *sock_path,
		const char *mem_path, size_t mem_size, int nvec);
void fh_close(struct fakehost *h);

/* Guest RAM: allocate (zeroed, aligned) and translate. */
uint64_t fh_alloc(struct fakehost *h, size_t len, size_t align);
void *fh_ptr(struct fakehost *h, uint64_t dma);

void fh_ring(struct fakehost *h, unsigned vec);

/* Controller bring-up: admin queues of @aq entries, wait for RDY. */
int  fh_enable(struct fakehost *h, unsigned aq, int timeout_ms);
/* cc.EN = 0 and wait for RDY to clear; forgets every queue. */
int  fh_disable(struct fakehost *h, int timeout_ms);
/* cc.SHN = NORMAL and wait for SHST = COMPLETE. */
int  fh_shutdown(struct fakehost *h, int timeout_ms);
/* Wait until (csts & mask) == want.  0 or -1 on timeout. */
int  fh_wait_csts(struct fakehost *h, uint32_t mask, uint32_t want,
		  int timeout_ms);

/*
 * Post one SQE on queue @qid (cid assigned and returned), optionally
 * without ringing (ring later with fh_ring_sq to batch).
 */
int  fh_post(struct fakehost *h, unsigned qid, struct vc_sqe *sqe, int ring);
void fh_ring_sq(struct fakehost *h, unsigned qid);
/* Next CQE of queue @qid: 0, or -1 on timeout. */
int  fh_reap(struct fakehost *h, unsigned qid, struct vc_cqe *out,
	     int timeout_ms);
/* Is a new CQE waiting on @qid (no wait, no consume)? */
int  fh_cqe_ready(struct fakehost *h, unsigned qid);
/* Post, ring and wait for that command: its status, or -1 on timeout. */
int  fh_cmd(struct fakehost *h, unsigned qid, struct vc_sqe *sqe,
	    struct vc_cqe *out, int timeout_ms);

int  fh_identify(struct fakehost *h, struct vc_identify *id);
int  fh_get_health(struct fakehost *h, struct vc_health_log *log);
/* Create CQ+SQ pair @qid of @size entries (vector @qid).  Status or -1. */
int  fh_create_ioq(struct fakehost *h, unsigned qid, unsigned size);
int  fh_delete_ioq(struct fakehost *h, unsigned qid);

/* Read/write @nlb blocks at @slba through a single buffer at @dma. */
int  fh_rw(struct fakehost *h, unsigned qid, int opcode, uint64_t slba,
	   uint32_t nlb, uint32_t lba_size, uint64_t dma, int flags);
/* Same, with the data split in a descriptor list (nseg > 1). */
int  fh_rw_sgl(struct fakehost *h, unsigned qid, int opcode, uint64_t slba,
	       uint32_t nlb, uint32_t lba_size, const uint64_t *addr,
	       const uint32_t *len, unsigned nseg, int flags);
int  fh_simple(struct fakehost *h, unsigned qid, int opcode, uint64_t slba,
	       uint32_t nlb);

#endif /* FAKEHOST_H */
