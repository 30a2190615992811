/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Driver for the vcache flash card (PCI + blk-mq).
 *
 * Design
 * ------
 * One struct vcd_dev per card (PCI function 1af4:1110 whose BAR2 carries
 * VC_CARD_MAGIC).  The host interface is include/vcache/vc_card.h.
 *
 *   vc_pci.c    probe/remove/shutdown: BARs, MSI-X, DMA mask, bring-up
 *               order, teardown that unwinds every step.
 *   vc_ctrl.c   controller registers (enable/disable/shutdown), I/O queue
 *               memory, CQ processing, vcd_dev_disable (the one teardown),
 *               reset, "kill" (the card is dead: fail everything), watchdog.
 *   vc_admin.c  the admin queue: slots, commands with deadlines, aborts,
 *               identify (validated), health log, I/O queue creation.
 *   vc_blk.c    blk-mq: tag set, disk /dev/vflashN, queue limits,
 *               queue_rq/commit_rqs/complete/timeout.
 *   vc_sysfs.c  identity, health (GET_LOG) and state attributes on the PCI
 *               device (reachable as /sys/block/vflashN/device/...).
 *   vc_core.c   module init/exit: subsystem inits in order, unwound on
 *               failure (the cache engine adds itself there).
 *   vc_stack.c  the stacking API for in-module users (vcache_stack.h).
 *   vc_space.c  card space: the table at the card's end that shares it
 *               between the raw disk and regions (caches); each open
 *               region is a hidden disk on the card's tag set.
 *   vc_debugfs.c  test hooks (shutdown path, stacking API stand-ins).
 *
 * Queues.  Queue 0 is the admin queue, driven by the driver alone: a small
 * array of command slots (VCD_ADMIN_SLOTS), each command id is the slot index
 * plus a generation byte so that a late completion of an abandoned command
 * is recognised and dropped.  Queues 1..nr_ioq are blk-mq hardware queues:
 * the command id of a request is its tag plus a 4-bit generation
 * (VCD_CID_GEN_SHIFT), bumped on every submission.
 *
 * Exactly-once completion.  A request is completed (blk_mq_complete_request)
 * by whoever first sets VCD_IOD_DONE in its iod: the CQ handler (interrupt or
 * timeout poll), a reset cancelling it, or the kill path.  queue_rq clears
 * the bit before the command becomes visible to the card.
 *
 * States (dev->state, changed under state_lock, read with READ_ONCE):
 *   NEW -> LIVE            probe finished bring-up
 *   LIVE -> RESETTING      vcd_schedule_reset(): timeout after a failed
 *                          abort, csts.CFS, heartbeat stopped
 *   RESETTING -> LIVE      reset_work re-enabled the card and recreated
 *                          every queue; cancelled requests are requeued
 *   any -> DELETING        remove/shutdown; resets are no longer started,
 *                          a timeout kills the card instead
 *   any -> DEAD            the card did not come back: every request in
 *                          flight and every new one fails with an error
 * Resets and kills run under ctrl_lock (a mutex): from reset_work, from
 * the timeout handler (DELETING only: del_gendisk syncs the timeout work
 * before it tears the queue down) and from remove.
 *
 * Disable before release.  No buffer or request is given back while the
 * card may still touch it.  Every path (probe failure, remove, reset,
 * shutdown, kill) stops the card through vcd_dev_disable(), as nvme's
 * nvme_dev_disable: quiesce, (cc.SHN), cc.EN = 0 and a bounded wait for
 * csts.RDY = 0, then reap completions, end admin commands, cancel requests.
 * A card that never confirms loses bus mastering and keeps the buffers of
 * its admin commands (leaked on purpose, counted, logged).  An admin
 * command whose caller timed out keeps its slot and buffer until the card
 * completes it late or is disabled (vc_admin.c).
 *
 * Timeouts (vcd_timeout): poll the CQ (lost interrupt?), then send
 * VC_ADM_ABORT for the command (asynchronously, at most VCD_MAX_ABORTS at
 * once) and re-arm the timer; the card completes an aborted command with
 * VC_SC_ABORT_REQ and it is retried.  An abort answered "nothing to abort"
 * (it completed meanwhile) changes nothing.  Escalation to a controller
 * reset: the abort fails, an abort is not answered within admin_timeout
 * (watchdog), or the same submission times out a second time (whether or
 * not an abort could be sent).  Requests cancelled by a reset are retried
 * (at most VCD_MAX_RETRIES times each), so nothing is lost.  The handler
 * changes a request's state only by cmpxchg on its submission generation
 * (vcd_iod.tstate), never a later submission's.
 *
 * Removal: DELETING, stop the watchdog, wait for a running reset, kill at
 * once if the device is gone, del_gendisk (drains I/O: a stuck request
 * times out and kills the card), delete the queues, then vcd_teardown():
 * cc.SHN = NORMAL and wait for SHST (the card makes its write buffer
 * durable), disable, free everything in reverse order of allocation.
 * Shutdown (reboot, kexec) does the same disable and fails every request,
 * now and later, but frees nothing.
 */
#ifndef VCACHE_PCI_H
#define VCACHE_PCI_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/dmapool.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <vcache/vc_card.h>

#include "vcache_stack.h"

#define VCD_DRV_NAME		"vcache"
#define VCD_DISK_NAME		"vflash"
#define VCD_MINORS		16	/* partitions per disk, incl. whole */

#define VCD_ADMIN_DEPTH		32	/* admin SQ/CQ entries */
#define VCD_ADMIN_SLOTS		16	/* admin commands in flight */
#define VCD_MAX_ABORTS		4	/* VC_ADM_ABORT in flight */
#define VCD_MAX_RETRIES		5	/* requeues of one request */
#define VCD_MAX_QSIZE		4096	/* cid: 12-bit tag + 4-bit gen */
#define VCD_CID_GEN_SHIFT	12
#define VCD_CID_TAG_MASK		((1u << VCD_CID_GEN_SHIFT) - 1)
#define VCD_INLINE_SG		8	/* scatterlist entries in the iod */
#define VCD_WATCHDOG_MS		1000
#define VCD_HEARTBEAT_STALL_MS	5000	/* heartbeat frozen this long: reset */
#define VCD_FW_ALIVE_MS		1000	/* vcd_fw_alive() patience */
#define VCD_HEALTH_MAX_AGE	HZ	/* health/ reads share one GET_LOG */

/* Host-side completion codes, outside the card's enum vc_status. */
#define VCD_HOST_CANCELLED	0x100	/* cancelled by a reset: retry */
#define VCD_HOST_DEAD		0x101	/* card dead or removed: fail */

enum vcd_state {
	VCD_STATE_NEW,
	VCD_STATE_LIVE,
	VCD_STATE_RESETTING,
	VCD_STATE_DELETING,
	VCD_STATE_DEAD,
};

/* vcd_queue.flags */
#define VCD_Q_LIVE		0	/* card knows the queue; may submit */
#define VCD_Q_IRQ		1	/* its interrupt is requested */

/* vcd_iod.flags */
#define VCD_IOD_DONE		0

/*
 * vcd_iod.tstate: the submission's generation (low 8 bits) and whether it
 * timed out already.  queue_rq sets it; the timeout handler changes it only
 * with a cmpxchg against the generation it saw, so it never writes into a
 * later submission of the same request.
 */
#define VCD_TS_GEN_MASK		0xff
#define VCD_TS_TIMED_OUT	0x100

struct vcd_dev;

/*
 * One SQ/CQ pair.  The admin queue (qid 0) uses admin_lock for everything;
 * I/O queues use sq_lock for the submission side and cq_lock for the
 * completion side.
 */
struct vcd_queue {
	struct vcd_dev *dev;
	spinlock_t sq_lock;	/* sqes[], sq_tail, last_sq_tail, LIVE->!LIVE */
	spinlock_t cq_lock;	/* cq_head, cq_phase (irq and timeout poll) */
	struct vc_sqe *sqes;	/* coherent, qsize entries */
	struct vc_cqe *cqes;	/* coherent, qsize entries */
	dma_addr_t sq_dma;
	dma_addr_t cq_dma;
	struct vc_doorbell __iomem *db;	/* our slot in BAR2 */
	struct blk_mq_tags *tags;	/* set by init_hctx (I/O queues) */
	unsigned long flags;	/* VCD_Q_*, atomic bitops */
	u16 qid;
	u16 qsize;		/* entries; qsize - 1 commands at most */
	u16 sq_tail;		/* sq_lock */
	u16 last_sq_tail;	/* sq_lock: tail the card was told about */
	u16 cq_head;		/* cq_lock */
	u8 cq_phase;		/* cq_lock: phase of a new entry */
	unsigned int irq_vector;	/* MSI-X vector index (== qid) */
};

/* Per-request driver data (blk_mq_rq_to_pdu). */
struct vcd_iod {
	struct sg_table sgt;
	struct vc_sgl_desc *sgl;	/* from dev->sgl_pool, or NULL */
	dma_addr_t sgl_dma;
	unsigned long flags;	/* VCD_IOD_DONE */
	u16 cid;		/* as sent to the card */
	u16 status;		/* enum vc_status or VCD_HOST_* */
	atomic_t tstate;	/* VCD_TS_* */
	u8 gen;
	u8 retries;
	u8 opcode;
	bool sgt_alloced;	/* sgt holds a (chained) scatterlist */
	bool dma_mapped;	/* sgt is DMA mapped */
	struct scatterlist inline_sg[VCD_INLINE_SG];
	/*
	 * A direct request of a region's user (vcd_region_direct()): its
	 * one bio, over the user's pages, and whom to tell at completion.
	 */
	struct bio dbio;
	vcd_direct_end_t dend;
	void *dpriv;
};

struct vcd_admin_slot;

/*
 * Completion callback of an admin command, called under admin_lock, maybe
 * in hard interrupt context.  err is 0 (status/result are the card's) or
 * -EIO when the command was cancelled.  card_done: the card completed it or
 * confirmed it stopped, so its buffer may be freed.
 */
typedef void (*vcd_admin_done_t)(struct vcd_dev *dev,
				 struct vcd_admin_slot *slot, int err,
				 u16 status, u32 result, bool card_done);

/* Admin command slot: admin_lock. */
struct vcd_admin_slot {
	vcd_admin_done_t done;	/* NULL: abandoned by its caller */
	void *ctx;
	u32 data;		/* caller's cookie (abort: qid << 16 | cid) */
	void *buf;		/* data buffer the card writes, or NULL */
	dma_addr_t buf_dma;
	u32 buf_len;
	unsigned long deadline;	/* jiffies: the card must have answered */
	u8 gen;
	bool busy;
};

struct vcd_ident {
	char serial[sizeof_field(struct vc_identify, serial) + 1];
	char model[sizeof_field(struct vc_identify, model) + 1];
	char fw_rev[sizeof_field(struct vc_identify, fw_rev) + 1];
	u64 capacity;		/* logical blocks */
	u32 lba_size;
	u32 phys_block_size;
	u32 max_xfer;
	u32 max_discard_nlb;
	u32 max_wzeroes_nlb;
	u32 discard_gran;
	u16 num_ioq;
	u16 max_qdepth;
	u16 max_sge;
	u16 flags;
};

struct vcd_bdev_handle;

/* State of the card-space table (vc_space.c). */
enum vcd_space_state {
	VCD_SPACE_NONE,		/* no table: raw up to the table area */
	VCD_SPACE_OK,
	/* no valid copy: raw read-only, no regions; vcd_space_repair() */
	VCD_SPACE_DAMAGED,
	VCD_SPACE_TOO_SMALL,	/* card too small for a table */
	/*
	 * removal began (vcd_space_remove): no region opens, is listed or
	 * changes any more, and the table's memory may be freed
	 */
	VCD_SPACE_GONE,
};

/*
 * The stacking API's view of a card (vc_stack.c), embedded in vcd_dev: its
 * reference count decides when vcd_dev is freed.
 */
struct vcd_card {
	struct kref ref;
	struct list_head node;		/* vcd_cards, while bound */
	struct mutex lock;		/* gone, claim */
	bool gone;			/* removed: no more hardware access */
	void *holder;			/* exclusive claim */
	struct vcd_bdev_handle *claim;
	struct work_struct dead_work;	/* VCD_CARD_DEAD notice */
	bool killed;			/* that notice sent or due */
};

/* An open region of card space (vc_space.c): a hidden disk on the tag set. */
struct vcd_region {
	struct vcd_dev *dev;		/* a card reference is held */
	struct list_head node;		/* dev->regions, ctrl_lock */
	struct gendisk *disk;		/* NULL once the card is gone */
	char name[32];			/* VC_SPACE_NAME_LEN */
	u64 start_sect;			/* offset on the card, sectors */
};

struct vcd_dev {
	struct vcd_card card;		/* first: see vc_stack.c */
	struct pci_dev *pdev;
	int instance;		/* N of vflashN */
	char name[DISK_NAME_LEN];

	void __iomem *bar0;	/* ivshmem registers */
	void __iomem *bar2;	/* vc_regs page + doorbells */
	struct vc_regs __iomem *regs;
	size_t bar2_mapped;

	/* Capabilities read from vc_regs at probe. */
	u32 cap_mqes;
	u16 cap_max_ioq;
	u16 cap_timeout_ms;
	u32 db_offset;
	u32 db_stride;
	u32 if_version;

	struct vcd_ident id;
	unsigned int lba_shift;

	/* Admin queue: admin_lock protects the queue and slots[]. */
	struct vcd_queue aq;
	spinlock_t admin_lock;	/* admin SQ/CQ, slots[], admin_live */
	bool admin_live;	/* admin_lock */
	u16 admin_sq_head;	/* admin_lock: from the last admin CQE */
	struct vcd_admin_slot slots[VCD_ADMIN_SLOTS];	/* admin_lock */
	struct semaphore admin_sem;	/* free slots */
	atomic_t aborts_inflight;
	atomic_t leaked_bufs;	/* kept: the card never confirmed a stop */

	/* I/O queues, ioq[i] has qid i + 1. */
	struct vcd_queue *ioq;
	unsigned int nr_ioq;	/* queues created on the card */
	unsigned int io_qsize;	/* entries per I/O SQ/CQ */
	unsigned int max_segs;
	struct dma_pool *sgl_pool;

	struct blk_mq_tag_set tagset;
	bool tagset_alloced;
	struct gendisk *disk;
	bool disk_added;

	/* State machine: see the design comment. */
	spinlock_t state_lock;
	enum vcd_state state;	/* state_lock for writes */
	struct mutex ctrl_lock;	/* resets, kills, shutdown, quiesced */
	bool quiesced;		/* ctrl_lock: blk-mq quiesced by us */
	bool unresponsive;	/* ctrl_lock: ignored the last disable */
	struct work_struct reset_work;
	const char *reset_reason;	/* state_lock */
	struct delayed_work watchdog;
	u32 last_heartbeat;	/* watchdog only */
	unsigned long heartbeat_stamp;	/* watchdog only: jiffies */

	struct dentry *debugfs;	/* test hooks (vc_debugfs.c) */

	/* health/ cache: one GET_LOG per VCD_HEALTH_MAX_AGE at most */
	struct mutex health_lock;
	struct vc_health_log health;
	unsigned long health_stamp;	/* jiffies of the last fetch */
	bool health_valid;

	/*
	 * Card space (vc_space.c): the table (one copy, vmalloc), its state
	 * and the open regions.  space_lock serialises table changes and
	 * region open/close; the regions list changes under ctrl_lock too,
	 * so that a reset quiesces every queue of the tag set.
	 */
	struct mutex space_lock;
	void *space;
	enum vcd_space_state space_state;
	const char *space_why[2];	/* per copy, when damaged: a token */
	struct list_head regions;
	struct vcd_region *space_r;	/* the table's own hidden disk */
	unsigned int region_seq;	/* names region disks vcspaceNrM */

	/* Counters for sysfs. */
	atomic_t nr_timeouts;
	atomic_t nr_aborts;
	atomic_t nr_resets;
};

/* Module parameters (vc_pci.c). */
extern unsigned int vcd_io_timeout;
extern unsigned int vcd_admin_timeout;
extern unsigned int vcd_max_queues;
extern unsigned int vcd_queue_depth;
extern struct workqueue_struct *vcd_wq;

/* vc_ctrl.c */
void vcd_ring(struct vcd_dev *dev, u16 qid);
int vcd_ctrl_disable(struct vcd_dev *dev);
int vcd_ctrl_enable(struct vcd_dev *dev);
int vcd_ctrl_shutdown(struct vcd_dev *dev);
bool vcd_fw_alive(struct vcd_dev *dev);
int vcd_queue_alloc(struct vcd_dev *dev, struct vcd_queue *q, u16 qid,
		    u16 qsize);
void vcd_queue_free(struct vcd_dev *dev, struct vcd_queue *q);
void vcd_queue_reinit(struct vcd_queue *q);
irqreturn_t vcd_admin_irq(int irq, void *data);
irqreturn_t vcd_io_irq(int irq, void *data);
void vcd_poll_cq(struct vcd_queue *q);
void vcd_stop_io_queues(struct vcd_dev *dev);
int vcd_dev_disable(struct vcd_dev *dev, bool shutdown, u16 status);
void vcd_shutdown_locked(struct vcd_dev *dev);
bool vcd_schedule_reset(struct vcd_dev *dev, const char *reason);
void vcd_reset_work(struct work_struct *work);
void vcd_kill(struct vcd_dev *dev, const char *reason);
void vcd_watchdog_work(struct work_struct *work);
const char *vcd_state_name(enum vcd_state state);
const char *vcd_status_name(u16 status);
bool vcd_set_state(struct vcd_dev *dev, enum vcd_state from, enum vcd_state to);

/* vc_admin.c */
void vcd_admin_init(struct vcd_dev *dev);
void vcd_admin_start(struct vcd_dev *dev);
void vcd_admin_stop(struct vcd_dev *dev, bool card_stopped);
bool vcd_admin_expired(struct vcd_dev *dev);
int vcd_admin_exec(struct vcd_dev *dev, struct vc_sqe *cmd, void *data,
		   u32 len, u32 *result);
int vcd_admin_abort(struct vcd_dev *dev, u16 qid, u16 cid);
int vcd_identify(struct vcd_dev *dev, struct vcd_ident *id);
int vcd_get_health(struct vcd_dev *dev, struct vc_health_log *log);
int vcd_create_io_queues(struct vcd_dev *dev);
void vcd_delete_io_queues(struct vcd_dev *dev);

/* vc_blk.c */
int vcd_blk_init_tagset(struct vcd_dev *dev);
struct vcd_limits;
void vcd_blk_limits(struct vcd_dev *dev, struct vcd_limits *l);
int vcd_blk_alloc_disk(struct vcd_dev *dev);
int vcd_blk_add_disk(struct vcd_dev *dev);
void vcd_blk_remove_disk(struct vcd_dev *dev);
void vcd_blk_free(struct vcd_dev *dev);
void vcd_blk_quiesce(struct vcd_dev *dev);
void vcd_blk_unquiesce(struct vcd_dev *dev);
void vcd_blk_cancel_all(struct vcd_dev *dev, u16 status);
void vcd_complete_cqe(struct vcd_queue *q, const struct vc_cqe *cqe);
int vcd_blk_register(void);
void vcd_blk_unregister(void);

/* vc_pci.c */
int vcd_pci_init(void);
void vcd_pci_exit(void);
void vcd_pci_shutdown_dev(struct vcd_dev *dev);

/* vc_stack.c */
void vcd_stack_init_dev(struct vcd_dev *dev);
void vcd_stack_add(struct vcd_dev *dev);
void vcd_stack_going(struct vcd_dev *dev);
void vcd_stack_dead(struct vcd_dev *dev);
void vcd_stack_put_dev(struct vcd_dev *dev);
int vcd_stack_test(const char *serial, u64 bad_lba);

/* vc_space.c */
int vcd_space_load(struct vcd_dev *dev);
void vcd_space_remove(struct vcd_dev *dev);
void vcd_space_release(struct vcd_dev *dev);
ssize_t vcd_space_show(struct vcd_dev *dev, char *buf);
sector_t vcd_region_offset(struct request *rq);

/* vc_debugfs.c */
void vcd_debugfs_init(void);
void vcd_debugfs_exit(void);
void vcd_debugfs_add(struct vcd_dev *dev);
void vcd_debugfs_remove(struct vcd_dev *dev);

/* vc_sysfs.c */
extern const struct attribute_group *vcd_dev_groups[];

static inline enum vcd_state vcd_state(struct vcd_dev *dev)
{
	return READ_ONCE(dev->state);
}

/* A new CQE at the head of @q?  Its lock held. */
static inline bool vcd_cqe_pending(struct vcd_queue *q)
{
	u16 status = le16_to_cpu(READ_ONCE(q->cqes[q->cq_head].status));

	return (status & VC_CQE_PHASE) == q->cq_phase;
}

static inline void vcd_cq_advance(struct vcd_queue *q)
{
	if (++q->cq_head == q->qsize) {
		q->cq_head = 0;
		q->cq_phase ^= 1;
	}
}

static inline struct vc_doorbell __iomem *vcd_db(struct vcd_dev *dev, u16 qid)
{
	return dev->bar2 + dev->db_offset + (size_t)qid * dev->db_stride;
}

#endif /* VCACHE_PCI_H */
