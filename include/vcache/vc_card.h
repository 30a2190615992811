/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vc_card.h - host interface of the vcache flash card.
 *
 * This header is the contract between the kernel driver (driver/) and the
 * card's firmware (firmware-sim/).  Both sides include it unchanged.  The
 * prose version of this contract is docs/card-interface.md; if the two ever
 * disagree, this header wins and the document is fixed.
 *
 * Design
 * ------
 * The card is an NVMe-like controller behind a QEMU ivshmem-doorbell PCI
 * function (vendor 0x1af4, device 0x1110):
 *
 *   BAR0  ivshmem registers.  Only the Doorbell register (offset 0x0c) is
 *         used: writing (peer << 16 | vector) wakes the firmware, which is
 *         always peer VC_FW_PEER_ID.  A doorbell carries no value; the value
 *         (queue tail/head) is first written to the doorbell page in BAR2.
 *   BAR1  MSI-X table.  Vector 0 belongs to the admin queue, vector q to
 *         I/O queue q (1..num_ioq).
 *   BAR2  Card memory (power-of-two size).  Page 0 holds struct vc_regs,
 *         page 1 (regs->db_offset) holds the doorbell slots.
 *
 * Queues live in host memory (DMA coherent, physically contiguous), exactly
 * as in NVMe: the host posts 64-byte struct vc_sqe entries to a submission
 * queue (SQ) and the card posts 16-byte struct vc_cqe entries to a completion
 * queue (CQ).  A CQ entry is new when its phase bit differs from the phase
 * the host saw on the previous pass; the card inverts the phase it writes
 * every time it wraps.  Queue pair q uses SQ q and CQ q; queue 0 is the
 * admin queue.
 *
 * Submission:  write SQEs, wmb, store the new tail in doorbells[q].sq_tail,
 *              then write q to BAR0 Doorbell.  Several SQEs may be posted
 *              per doorbell (batching).
 * Completion:  the card writes CQEs, then raises MSI-X vector q.  The host
 *              consumes entries by phase, then stores its new head in
 *              doorbells[q].cq_head (no doorbell write needed: the card reads
 *              cq_head before it would overrun the CQ).
 *
 * Controller state: the host writes regs->cc and then rings doorbell 0
 * (the admin vector).  The card also re-reads cc on its own at least every
 * VC_FW_POLL_MS, so a lost doorbell never wedges a reset.
 *
 *   Enable:   cc.EN 0->1 after aqa/asq/acq are set; the card sets csts.RDY
 *             within cap_timeout_ms.
 *   Disable:  cc.EN 1->0 (controller reset): the card stops fetching,
 *             forgets every queue and every command in flight (they never
 *             complete), keeps its write buffer, and clears csts.RDY.
 *   Shutdown: cc.SHN = NORMAL: the card makes its write buffer durable and
 *             sets csts.SHST = COMPLETE.  Without it, the next power-on
 *             counts an unsafe shutdown.
 *   Fatal:    csts.CFS set by the card: the host must reset it.
 *
 * Data transfer: a command's data is described by dptr/nseg/dlen.  If nseg
 * is 1, dptr is the DMA address of the buffer itself (dlen bytes).  If nseg
 * is greater than 1, dptr is the DMA address of an array of nseg struct
 * vc_sgl_desc, and the buffers they name add up to dlen.  No descriptor may
 * be empty, and nseg never exceeds identify.max_sge.  DMA addresses are guest
 * physical addresses: the card has no IOMMU.
 *
 * Durability: the card has a volatile write buffer (identify.flags has
 * VC_ID_F_VWC).  A completed write is durable only after a completed FLUSH
 * that was submitted after it, or if it was written with VC_SQE_F_FUA.
 * Loss of power drops what is not yet durable; it never changes data that
 * was durable, and it never tears a single logical block.
 *
 * Every multi-byte field is little endian.
 */
#ifndef VCACHE_VC_CARD_H
#define VCACHE_VC_CARD_H

#include <linux/types.h>

/* "VCACHEFL" read as a little-endian 64-bit number. */
#define VC_CARD_MAGIC		0x4c46454843414356ULL
#define VC_IF_VERSION_MAJOR	1
#define VC_IF_VERSION_MINOR	1
#define VC_IF_VERSION		((VC_IF_VERSION_MAJOR << 16) | VC_IF_VERSION_MINOR)
#define VC_IF_MAJOR(v)		((v) >> 16)
#define VC_IF_MINOR(v)		((v) & 0xffff)

/* PCI identity of the ivshmem function the card sits behind. */
#define VC_PCI_VENDOR_ID	0x1af4
#define VC_PCI_DEVICE_ID	0x1110

/* BAR numbers and the ivshmem register the host uses. */
#define VC_BAR_REGS		0	/* ivshmem registers */
#define VC_BAR_MSIX		1
#define VC_BAR_MEM		2	/* card memory: vc_regs + doorbells */
#define VC_IVSHMEM_DOORBELL	0x0c	/* write (peer << 16) | vector */
#define VC_IVSHMEM_IVPOSITION	0x08	/* our own peer id */
#define VC_FW_PEER_ID		0

#define VC_ADMIN_QID		0
#define VC_MAX_IOQ		255	/* vectors 1..255 */
#define VC_FW_POLL_MS		20	/* card re-reads cc at least this often */
#define VC_PAGE_SIZE		4096

/* struct vc_regs.cc */
#define VC_CC_EN		(1u << 0)
#define VC_CC_SHN_SHIFT		14
#define VC_CC_SHN_MASK		(3u << VC_CC_SHN_SHIFT)
#define VC_CC_SHN_NONE		(0u << VC_CC_SHN_SHIFT)
#define VC_CC_SHN_NORMAL	(1u << VC_CC_SHN_SHIFT)

/* struct vc_regs.csts */
#define VC_CSTS_RDY		(1u << 0)
#define VC_CSTS_CFS		(1u << 1)	/* controller fatal status */
#define VC_CSTS_SHST_SHIFT	2
#define VC_CSTS_SHST_MASK	(3u << VC_CSTS_SHST_SHIFT)
#define VC_CSTS_SHST_NORMAL	(0u << VC_CSTS_SHST_SHIFT)
#define VC_CSTS_SHST_OCCUR	(1u << VC_CSTS_SHST_SHIFT)
#define VC_CSTS_SHST_CMPLT	(2u << VC_CSTS_SHST_SHIFT)

/*
 * Page 0 of BAR2.  RO fields are written by the card only; RW fields by the
 * host only (the card never writes them).
 */
struct vc_regs {
	__le64 magic;		/* 0x00 RO VC_CARD_MAGIC */
	__le32 version;		/* 0x08 RO VC_IF_VERSION of the card */
	__le32 regs_size;	/* 0x0c RO bytes of this structure */
	__le32 cap_mqes;	/* 0x10 RO max entries of any queue */
	__le16 cap_max_ioq;	/* 0x14 RO I/O queue pairs the card serves */
	__le16 cap_timeout_ms;	/* 0x16 RO worst-case time to RDY/SHST */
	__le32 db_offset;	/* 0x18 RO BAR2 offset of doorbell slots */
	__le32 db_stride;	/* 0x1c RO bytes per queue (>= 8) */
	__le32 cc;		/* 0x20 RW controller configuration */
	__le32 csts;		/* 0x24 RO controller status */
	__le32 aqa;		/* 0x28 RW admin SQ size (15:0), CQ size (31:16) */
	__le32 rsvd0;		/* 0x2c */
	__le64 asq;		/* 0x30 RW admin SQ DMA address */
	__le64 acq;		/* 0x38 RW admin CQ DMA address */
	__le32 heartbeat;	/* 0x40 RO +1 every VC_FW_POLL_MS while alive */
	__le32 rsvd1;		/* 0x44 */
};

/* One doorbell slot per queue, at db_offset + qid * db_stride in BAR2. */
struct vc_doorbell {
	__le32 sq_tail;		/* RW host: index of the next free SQ slot */
	__le32 cq_head;		/* RW host: index of the next CQE to consume */
};

/* Opcodes.  Admin opcodes are only valid on queue 0, I/O ones elsewhere. */
enum vc_admin_opcode {
	VC_ADM_IDENTIFY		= 0x01,	/* dptr: 4096-byte struct vc_identify */
	VC_ADM_CREATE_CQ	= 0x02,	/* queue.{qid,qsize,vector}, dptr */
	VC_ADM_CREATE_SQ	= 0x03,	/* queue.{qid,qsize,cqid}, dptr */
	VC_ADM_DELETE_SQ	= 0x04,	/* queue.qid */
	VC_ADM_DELETE_CQ	= 0x05,	/* queue.qid */
	VC_ADM_GET_LOG		= 0x06,	/* log.lid, dptr, dlen */
	VC_ADM_ABORT		= 0x07,	/* abort.{sqid,cid}; result 0 = aborted */
};

enum vc_io_opcode {
	VC_CMD_FLUSH		= 0x10,	/* make every completed write durable */
	VC_CMD_WRITE		= 0x11,	/* rw.{slba,nlb}, data from host */
	VC_CMD_READ		= 0x12,	/* rw.{slba,nlb}, data to host */
	VC_CMD_WRITE_ZEROES	= 0x13,	/* rw.{slba,nlb}, no data */
	VC_CMD_DEALLOCATE	= 0x14,	/* rw.{slba,nlb}: reads return zeroes */
};

/* struct vc_sqe.flags */
#define VC_SQE_F_FUA		(1u << 0)	/* write: durable on completion */

struct vc_sqe {
	__u8   opcode;
	__u8   flags;
	__le16 cid;		/* command id, unique within the SQ */
	__le16 nseg;		/* see "Data transfer" above */
	__le16 rsvd0;
	__le64 dptr;
	__le32 dlen;		/* data bytes */
	__le32 rsvd1;
	union {
		struct {
			__le64 slba;	/* first logical block */
			__le32 nlb;	/* logical blocks, 1-based */
			__le32 rsvd;
		} rw;
		struct {
			__le16 qid;
			__le16 qsize;	/* entries */
			__le16 cqid;	/* CREATE_SQ: CQ it completes to */
			__le16 vector;	/* CREATE_CQ: MSI-X vector */
		} queue;
		struct {
			__le16 sqid;
			__le16 cid;
		} abort;
		struct {
			__u8 lid;	/* enum vc_log_id */
			__u8 rsvd[3];
		} log;
		__le32 cdw[10];
	};
};

/* struct vc_cqe.status: bit 0 is the phase tag, bits 15:1 the status. */
#define VC_CQE_PHASE		1u
#define VC_CQE_STATUS(s)	((s) >> 1)

enum vc_status {
	VC_SC_SUCCESS		= 0x00,
	VC_SC_INVALID_OPCODE	= 0x01,
	VC_SC_INVALID_FIELD	= 0x02,
	VC_SC_LBA_RANGE		= 0x03,	/* slba + nlb beyond capacity */
	VC_SC_READ_ERROR	= 0x04,	/* unrecovered media read error */
	VC_SC_WRITE_FAULT	= 0x05,	/* media write fault */
	VC_SC_ABORT_REQ		= 0x06,	/* aborted by VC_ADM_ABORT */
	VC_SC_ABORT_SQ_DEL	= 0x07,	/* aborted: queue deleted */
	VC_SC_INTERNAL		= 0x08,
	VC_SC_INVALID_QID	= 0x09,
	VC_SC_DATA_XFER		= 0x0a,	/* bad DMA address or SGL */
	VC_SC_QUEUE_SIZE	= 0x0b,	/* qsize over cap_mqes */
};

struct vc_cqe {
	__le32 result;		/* command specific */
	__le32 rsvd;
	__le16 sq_head;		/* SQ entries the card has consumed */
	__le16 sqid;
	__le16 cid;
	__le16 status;		/* VC_CQE_PHASE | status << 1 */
};

struct vc_sgl_desc {
	__le64 addr;
	__le32 len;
	__le32 rsvd;
};

/* struct vc_identify.flags */
#define VC_ID_F_VWC		(1u << 0)	/* volatile write cache */
#define VC_ID_F_FUA		(1u << 1)
#define VC_ID_F_DEALLOCATE	(1u << 2)
#define VC_ID_F_WRITE_ZEROES	(1u << 3)

struct vc_identify {
	char   serial[20];	/* space padded, not NUL terminated */
	char   model[40];
	char   fw_rev[8];
	__le32 rsvd0;
	__le64 capacity;	/* logical blocks */
	__le32 lba_size;	/* 512 or 4096 */
	__le32 phys_block_size;	/* bytes, >= lba_size */
	__le32 max_xfer;	/* bytes per read/write command */
	__le16 num_ioq;		/* I/O queue pairs (= cap_max_ioq) */
	__le16 max_qdepth;	/* entries per I/O queue */
	__le16 max_sge;		/* descriptors per command */
	__le16 flags;		/* VC_ID_F_* */
	__le32 max_discard_nlb;	/* per DEALLOCATE command */
	__le32 max_wzeroes_nlb;	/* per WRITE_ZEROES command */
	__le32 discard_gran;	/* bytes */
	__u8   rsvd[3984];
};

enum vc_log_id {
	VC_LOG_HEALTH		= 0x01,	/* struct vc_health_log */
};

struct vc_health_log {
	__le64 media_errors;	/* unrecovered read + write faults */
	__le64 bytes_read;	/* host data read */
	__le64 bytes_written;	/* host data written */
	__le64 read_cmds;
	__le64 write_cmds;
	__le64 flush_cmds;
	__le64 power_cycles;
	__le64 unsafe_shutdowns;
	__le64 flash_bytes_programmed;	/* to media, incl. destage */
	__le64 aborts;		/* commands aborted by VC_ADM_ABORT */
	__le32 percent_used;	/* wear estimate, may exceed 100 */
	__le32 temperature_k;
	__le32 wbuf_bytes;	/* volatile write buffer in use now */
	__le32 rsvd0;
	/*
	 * Writes (WRITE and WRITE_ZEROES) that cover a physical block
	 * (identify.phys_block_size) only in part: smaller than one or not
	 * aligned to one, so the card reads, modifies and programs the whole
	 * block.  Counted since the firmware started (interface 1.1; zero
	 * from older cards).
	 */
	__le64 rmw_writes;
	__u8   rsvd[408];
};

#ifdef __KERNEL__
#include <linux/build_bug.h>
#define VC_STATIC_ASSERT(e)	static_assert(e, #e)
#else
#define VC_STATIC_ASSERT(e)	_Static_assert(e, #e)
#endif

VC_STATIC_ASSERT(sizeof(struct vc_regs) == 0x48);
VC_STATIC_ASSERT(sizeof(struct vc_doorbell) == 8);
VC_STATIC_ASSERT(sizeof(struct vc_sqe) == 64);
VC_STATIC_ASSERT(sizeof(struct vc_cqe) == 16);
VC_STATIC_ASSERT(sizeof(struct vc_sgl_desc) == 16);
VC_STATIC_ASSERT(sizeof(struct vc_identify) == 4096);
VC_STATIC_ASSERT(sizeof(struct vc_health_log) == 512);

#endif /* VCACHE_VC_CARD_H */
