// SPDX-License-Identifier: GPL-2.0
/*
 * controller registers, admin queue, I/O queue creation, CQ
 * processing, reset, kill and the health watchdog of the vcache card.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "vcache_pci.h"

/* Slack on top of cap_timeout_ms for a loaded host. */
#define VCD_CSTS_SLACK_MS	500

static const char * const vcd_state_names[] = {
	[VCD_STATE_NEW]		= "new",
	[VCD_STATE_LIVE]		= "live",
	[VCD_STATE_RESETTING]	= "resetting",
	[VCD_STATE_DELETING]	= "deleting",
	[VCD_STATE_DEAD]		= "dead",
};

const char *vcd_state_name(enum vcd_state state)
{
	if (state < ARRAY_SIZE(vcd_state_names) && vcd_state_names[state])
		return vcd_state_names[state];
	return "unknown";
}

static const char * const vcd_status_names[] = {
	[VC_SC_SUCCESS]		= "success",
	[VC_SC_INVALID_OPCODE]	= "invalid opcode",
	[VC_SC_INVALID_FIELD]	= "invalid field",
	[VC_SC_LBA_RANGE]	= "LBA out of range",
	[VC_SC_READ_ERROR]	= "unrecovered read error",
	[VC_SC_WRITE_FAULT]	= "write fault",
	[VC_SC_ABORT_REQ]	= "aborted",
	[VC_SC_ABORT_SQ_DEL]	= "aborted, queue deleted",
	[VC_SC_INTERNAL]	= "internal error",
	[VC_SC_INVALID_QID]	= "invalid queue id",
	[VC_SC_DATA_XFER]	= "data transfer error",
	[VC_SC_QUEUE_SIZE]	= "invalid queue size",
};

const char *vcd_status_name(u16 status)
{
	if (status == VCD_HOST_CANCELLED)
		return "cancelled by controller reset";
	if (status == VCD_HOST_DEAD)
		return "card dead or removed";
	if (status < ARRAY_SIZE(vcd_status_names) && vcd_status_names[status])
		return vcd_status_names[status];
	return "unknown status";
}

bool vcd_set_state(struct vcd_dev *dev, enum vcd_state from, enum vcd_state to)
{
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&dev->state_lock, flags);
	if (dev->state == from) {
		WRITE_ONCE(dev->state, to);
		ok = true;
	}
	spin_unlock_irqrestore(&dev->state_lock, flags);
	return ok;
}

/* Wake the firmware for queue @qid (admin/controller events: 0). */
void vcd_ring(struct vcd_dev *dev, u16 qid)
{
	writel((VC_FW_PEER_ID << 16) | qid, dev->bar0 + VC_IVSHMEM_DOORBELL);
}

static void vcd_write_cc(struct vcd_dev *dev, u32 cc)
{
	writel(cc, &dev->regs->cc);
	vcd_ring(dev, VC_ADMIN_QID);
}

static int vcd_wait_csts(struct vcd_dev *dev, u32 mask, u32 val, u32 *csts)
{
	unsigned int ms = dev->cap_timeout_ms + VCD_CSTS_SLACK_MS;
	unsigned long deadline = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		*csts = readl(&dev->regs->csts);
		if (*csts == ~0u)
			return -ENODEV;
		if ((*csts & mask) == val)
			return 0;
		/* waiting for RDY: a fatal status will not go away by itself */
		if ((val & VC_CSTS_RDY) && (*csts & VC_CSTS_CFS))
			return -EIO;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(1000, 2000);
	}
}

/*
 * cc.EN = 0: the card forgets every queue and every command in flight and
 * clears csts.RDY.  Returns 0 once RDY is clear.
 */
int vcd_ctrl_disable(struct vcd_dev *dev)
{
	u32 cc = readl(&dev->regs->cc);
	u32 csts;
	int ret;

	cc &= ~(VC_CC_EN | VC_CC_SHN_MASK);
	vcd_write_cc(dev, cc);
	ret = vcd_wait_csts(dev, VC_CSTS_RDY, 0, &csts);
	if (ret)
		dev_err(&dev->pdev->dev,
			"card did not clear csts.RDY within %u ms of disable (csts 0x%x): %d\n",
			dev->cap_timeout_ms + VCD_CSTS_SLACK_MS, csts, ret);
	return ret;
}

/* Program the admin queue and set cc.EN; wait for csts.RDY. */
int vcd_ctrl_enable(struct vcd_dev *dev)
{
	struct vcd_queue *aq = &dev->aq;
	u32 csts;
	int ret;

	writel(((u32)aq->qsize << 16) | aq->qsize, &dev->regs->aqa);
	writeq(aq->sq_dma, &dev->regs->asq);
	writeq(aq->cq_dma, &dev->regs->acq);
	vcd_write_cc(dev, VC_CC_EN);
	ret = vcd_wait_csts(dev, VC_CSTS_RDY | VC_CSTS_CFS, VC_CSTS_RDY, &csts);
	if (ret)
		dev_err(&dev->pdev->dev,
			"card did not become ready within %u ms (csts 0x%x%s): %d\n",
			dev->cap_timeout_ms + VCD_CSTS_SLACK_MS, csts,
			csts & VC_CSTS_CFS ? ", fatal status" : "", ret);
	return ret;
}

/*
 * Normal shutdown: the card makes its volatile write buffer durable.  The
 * controller stays enabled; the caller disables it afterwards.
 */
int vcd_ctrl_shutdown(struct vcd_dev *dev)
{
	u32 cc = readl(&dev->regs->cc);
	u32 csts;
	int ret;

	cc = (cc & ~VC_CC_SHN_MASK) | VC_CC_SHN_NORMAL;
	vcd_write_cc(dev, cc);
	ret = vcd_wait_csts(dev, VC_CSTS_SHST_MASK, VC_CSTS_SHST_CMPLT, &csts);
	if (ret)
		dev_err(&dev->pdev->dev,
			"shutdown did not complete within %u ms (csts 0x%x): data in the card's write buffer may be lost\n",
			dev->cap_timeout_ms + VCD_CSTS_SLACK_MS, csts);
	return ret;
}

/*
 * Is the firmware running?  Its heartbeat moves every VC_FW_POLL_MS; give
 * it up to VCD_FW_ALIVE_MS (a loaded host may not schedule it at once).
 */
bool vcd_fw_alive(struct vcd_dev *dev)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(VCD_FW_ALIVE_MS);
	u32 hb = readl(&dev->regs->heartbeat);

	do {
		msleep(VC_FW_POLL_MS);
		if (readl(&dev->regs->csts) == ~0u)
			return false;
		if (readl(&dev->regs->heartbeat) != hb)
			return true;
	} while (time_before(jiffies, deadline));
	return false;
}

/* ------------------------------------------------------------ queues */

int vcd_queue_alloc(struct vcd_dev *dev, struct vcd_queue *q, u16 qid,
		    u16 qsize)
{
	struct device *dmadev = &dev->pdev->dev;

	q->dev = dev;
	q->qid = qid;
	q->qsize = qsize;
	q->irq_vector = qid;
	q->db = vcd_db(dev, qid);
	spin_lock_init(&q->sq_lock);
	spin_lock_init(&q->cq_lock);
	q->sqes = dma_alloc_coherent(dmadev, qsize * sizeof(struct vc_sqe),
				     &q->sq_dma, GFP_KERNEL);
	if (!q->sqes)
		return -ENOMEM;
	q->cqes = dma_alloc_coherent(dmadev, qsize * sizeof(struct vc_cqe),
				     &q->cq_dma, GFP_KERNEL);
	if (!q->cqes) {
		dma_free_coherent(dmadev, qsize * sizeof(struct vc_sqe),
				  q->sqes, q->sq_dma);
		q->sqes = NULL;
		return -ENOMEM;
	}
	vcd_queue_reinit(q);
	return 0;
}

void vcd_queue_free(struct vcd_dev *dev, struct vcd_queue *q)
{
	struct device *dmadev = &dev->pdev->dev;

	if (q->cqes)
		dma_free_coherent(dmadev, q->qsize * sizeof(struct vc_cqe),
				  q->cqes, q->cq_dma);
	if (q->sqes)
		dma_free_coherent(dmadev, q->qsize * sizeof(struct vc_sqe),
				  q->sqes, q->sq_dma);
	q->cqes = NULL;
	q->sqes = NULL;
}

/* Empty a queue before the card (re)learns it.  Not LIVE: no users. */
void vcd_queue_reinit(struct vcd_queue *q)
{
	memset(q->cqes, 0, q->qsize * sizeof(struct vc_cqe));
	q->sq_tail = 0;
	q->last_sq_tail = 0;
	q->cq_head = 0;
	q->cq_phase = 1;
	writel(0, &q->db->sq_tail);
	writel(0, &q->db->cq_head);
}

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

/* Consume new CQEs of I/O queue @q.  cq_lock held. */
static bool vcd_process_io_cq(struct vcd_queue *q)
{
	bool found = false;

	while (vcd_cqe_pending(q)) {
		struct vc_cqe cqe;

		dma_rmb();	/* the entry after its phase bit */
		cqe = q->cqes[q->cq_head];
		vcd_cq_advance(q);
		vcd_complete_cqe(q, &cqe);
		found = true;
	}
	if (found)
		writel(q->cq_head, &q->db->cq_head);
	return found;
}

irqreturn_t vcd_io_irq(int irq, void *data)
{
	struct vcd_queue *q = data;

	spin_lock(&q->cq_lock);
	vcd_process_io_cq(q);
	spin_unlock(&q->cq_lock);
	/* The vector is ours alone; a late interrupt is not an error. */
	return IRQ_HANDLED;
}

/* Reap completions without an interrupt (timeout handler, reset). */
void vcd_poll_cq(struct vcd_queue *q)
{
	unsigned long flags;

	spin_lock_irqsave(&q->cq_lock, flags);
	vcd_process_io_cq(q);
	spin_unlock_irqrestore(&q->cq_lock, flags);
}

/* ------------------------------------------------------- admin queue */

void vcd_admin_init(struct vcd_dev *dev)
{
	spin_lock_init(&dev->admin_lock);
	sema_init(&dev->admin_sem, VCD_ADMIN_SLOTS);
	atomic_set(&dev->aborts_inflight, 0);
	dev->admin_live = false;
}

/* Admin queue memory is fresh and the card is about to be enabled. */
void vcd_admin_start(struct vcd_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->admin_lock, flags);
	vcd_queue_reinit(&dev->aq);
	dev->admin_sq_head = 0;
	dev->admin_live = true;
	spin_unlock_irqrestore(&dev->admin_lock, flags);
}

/* admin_lock held.  Completes slot @i with @err and frees it. */
static void vcd_admin_finish(struct vcd_dev *dev, unsigned int i, int err,
			     u16 status, u32 result)
{
	struct vcd_admin_slot *slot = &dev->slots[i];

	slot->busy = false;
	if (slot->done)
		slot->done(dev, slot, err, status, result);
	slot->done = NULL;
	slot->ctx = NULL;
	up(&dev->admin_sem);
}

/* admin_lock held. */
static void vcd_process_admin_cq(struct vcd_dev *dev)
{
	struct vcd_queue *q = &dev->aq;
	bool found = false;

	while (vcd_cqe_pending(q)) {
		struct vc_cqe cqe;
		unsigned int i;
		u16 cid;

		dma_rmb();
		cqe = q->cqes[q->cq_head];
		vcd_cq_advance(q);
		found = true;
		if (le16_to_cpu(cqe.sq_head) < q->qsize)
			dev->admin_sq_head = le16_to_cpu(cqe.sq_head);
		cid = le16_to_cpu(cqe.cid);
		i = cid & 0xff;
		if (i >= VCD_ADMIN_SLOTS || !dev->slots[i].busy ||
		    dev->slots[i].gen != cid >> 8) {
			dev_warn_ratelimited(&dev->pdev->dev,
					     "late or unknown admin completion, cid 0x%x: dropped\n",
					     cid);
			continue;
		}
		vcd_admin_finish(dev, i, 0, VC_CQE_STATUS(le16_to_cpu(cqe.status)),
				 le32_to_cpu(cqe.result));
	}
	if (found)
		writel(q->cq_head, &q->db->cq_head);
}

irqreturn_t vcd_admin_irq(int irq, void *data)
{
	struct vcd_dev *dev = data;

	spin_lock(&dev->admin_lock);
	vcd_process_admin_cq(dev);
	spin_unlock(&dev->admin_lock);
	return IRQ_HANDLED;
}

/*
 * The admin queue stops: no new command is accepted and every command in
 * flight completes with -EIO.  Call with the card disabled (or dead).
 */
void vcd_admin_stop(struct vcd_dev *dev)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&dev->admin_lock, flags);
	dev->admin_live = false;
	if (dev->aq.cqes)
		vcd_process_admin_cq(dev);
	for (i = 0; i < VCD_ADMIN_SLOTS; i++)
		if (dev->slots[i].busy)
			vcd_admin_finish(dev, i, -EIO, 0, 0);
	spin_unlock_irqrestore(&dev->admin_lock, flags);
}

/*
 * Post @cmd in a free slot (the caller holds one from admin_sem) and ring.
 * Returns the slot index or -ENODEV when the admin queue is not live.
 */
static int vcd_admin_post(struct vcd_dev *dev, struct vc_sqe *cmd,
			  vcd_admin_done_t done, void *ctx, u32 data)
{
	struct vcd_queue *q = &dev->aq;
	struct vcd_admin_slot *slot;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&dev->admin_lock, flags);
	if (!dev->admin_live) {
		spin_unlock_irqrestore(&dev->admin_lock, flags);
		return -ENODEV;
	}
	for (i = 0; i < VCD_ADMIN_SLOTS; i++)
		if (!dev->slots[i].busy)
			break;
	if (WARN_ON_ONCE(i == VCD_ADMIN_SLOTS) ||
	    (q->sq_tail + 1) % q->qsize == dev->admin_sq_head) {
		/* no free slot, or the card stopped consuming the SQ */
		spin_unlock_irqrestore(&dev->admin_lock, flags);
		return -EBUSY;
	}
	slot = &dev->slots[i];
	slot->busy = true;
	slot->gen++;
	slot->done = done;
	slot->ctx = ctx;
	slot->data = data;
	cmd->cid = cpu_to_le16(((u16)slot->gen << 8) | i);
	memcpy(&q->sqes[q->sq_tail], cmd, sizeof(*cmd));
	if (++q->sq_tail == q->qsize)
		q->sq_tail = 0;
	writel(q->sq_tail, &q->db->sq_tail);
	vcd_ring(dev, VC_ADMIN_QID);
	spin_unlock_irqrestore(&dev->admin_lock, flags);
	return i;
}

struct vcd_admin_wait {
	struct completion done;
	int err;
	u16 status;
	u32 result;
};

static void vcd_admin_sync_done(struct vcd_dev *dev, struct vcd_admin_slot *slot,
				int err, u16 status, u32 result)
{
	struct vcd_admin_wait *w = slot->ctx;

	w->err = err;
	w->status = status;
	w->result = result;
	complete(&w->done);
}

/**
 * vcd_admin_exec - run an admin command and wait for it
 * @dev: the card
 * @cmd: the command (cid is filled in)
 * @result: the CQE result, or NULL
 *
 * Waits at most admin_timeout seconds.  Returns 0, -EIO when the card
 * returned an error status (logged), -ETIMEDOUT, or -ENODEV when the admin
 * queue is down (reset in progress, card dead).
 */
int vcd_admin_exec(struct vcd_dev *dev, struct vc_sqe *cmd, u32 *result)
{
	unsigned long tmo = msecs_to_jiffies(vcd_admin_timeout * MSEC_PER_SEC);
	struct vcd_admin_wait w;
	unsigned long flags;
	int i;

	init_completion(&w.done);
	w.err = 0;
	if (down_timeout(&dev->admin_sem, tmo))
		return -ETIMEDOUT;
	i = vcd_admin_post(dev, cmd, vcd_admin_sync_done, &w, 0);
	if (i < 0) {
		up(&dev->admin_sem);
		return i;
	}
	if (!wait_for_completion_timeout(&w.done, tmo)) {
		/* Abandon the slot unless it completed in the meantime. */
		spin_lock_irqsave(&dev->admin_lock, flags);
		if (dev->slots[i].busy && dev->slots[i].ctx == &w) {
			dev->slots[i].done = NULL;
			vcd_admin_finish(dev, i, -ETIMEDOUT, 0, 0);
			w.err = -ETIMEDOUT;
		}
		spin_unlock_irqrestore(&dev->admin_lock, flags);
		if (w.err == -ETIMEDOUT) {
			dev_err(&dev->pdev->dev,
				"admin command 0x%02x timed out after %u s\n",
				cmd->opcode, vcd_admin_timeout);
			/* A LIVE card that ignores its admin queue is wedged. */
			vcd_schedule_reset(dev, "admin command timeout");
			return -ETIMEDOUT;
		}
		/* else completed under the lock: w is filled in */
	}
	if (w.err)
		return w.err;
	if (w.status != VC_SC_SUCCESS) {
		dev_err(&dev->pdev->dev, "admin command 0x%02x failed: %s (0x%x)\n",
			cmd->opcode, vcd_status_name(w.status), w.status);
		return -EIO;
	}
	if (result)
		*result = w.result;
	return 0;
}

static void vcd_abort_done(struct vcd_dev *dev, struct vcd_admin_slot *slot,
			   int err, u16 status, u32 result)
{
	u16 qid = slot->data >> 16, cid = slot->data & 0xffff;

	atomic_dec(&dev->aborts_inflight);
	if (err)	/* the admin queue stopped: a reset is under way */
		return;
	if (status == VC_SC_SUCCESS && result == 0) {
		dev_info(&dev->pdev->dev, "QID %u cid 0x%x aborted by the card\n",
			 qid, cid);
		return;
	}
	dev_warn(&dev->pdev->dev,
		 "abort of QID %u cid 0x%x failed (%s, result %u): resetting\n",
		 qid, cid, vcd_status_name(status), result);
	vcd_schedule_reset(dev, "abort failed");
}

/*
 * Send VC_ADM_ABORT for (qid, cid) without waiting.  Never sleeps.
 * Returns 0 or -EBUSY/-ENODEV when no abort could be sent now.
 */
int vcd_admin_abort(struct vcd_dev *dev, u16 qid, u16 cid)
{
	struct vc_sqe cmd = { .opcode = VC_ADM_ABORT };
	int i;

	if (atomic_inc_return(&dev->aborts_inflight) > VCD_MAX_ABORTS) {
		atomic_dec(&dev->aborts_inflight);
		return -EBUSY;
	}
	if (down_trylock(&dev->admin_sem)) {
		atomic_dec(&dev->aborts_inflight);
		return -EBUSY;
	}
	cmd.abort.sqid = cpu_to_le16(qid);
	cmd.abort.cid = cpu_to_le16(cid);
	i = vcd_admin_post(dev, &cmd, vcd_abort_done, NULL,
			   ((u32)qid << 16) | cid);
	if (i < 0) {
		up(&dev->admin_sem);
		atomic_dec(&dev->aborts_inflight);
		return i;
	}
	atomic_inc(&dev->nr_aborts);
	return 0;
}

static void vcd_copy_str(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : ' ';
	while (n && dst[n - 1] == ' ')
		n--;
	dst[n] = '\0';
}

/* IDENTIFY into @id, with sanity checks of what the driver relies on. */
int vcd_identify(struct vcd_dev *dev, struct vcd_ident *id)
{
	struct device *d = &dev->pdev->dev;
	struct vc_sqe cmd = { .opcode = VC_ADM_IDENTIFY };
	struct vc_identify *raw;
	dma_addr_t dma;
	int ret;

	raw = dma_alloc_coherent(d, sizeof(*raw), &dma, GFP_KERNEL);
	if (!raw)
		return -ENOMEM;
	cmd.nseg = cpu_to_le16(1);
	cmd.dptr = cpu_to_le64(dma);
	cmd.dlen = cpu_to_le32(sizeof(*raw));
	ret = vcd_admin_exec(dev, &cmd, NULL);
	if (ret)
		goto out;

	vcd_copy_str(id->serial, raw->serial, sizeof(raw->serial));
	vcd_copy_str(id->model, raw->model, sizeof(raw->model));
	vcd_copy_str(id->fw_rev, raw->fw_rev, sizeof(raw->fw_rev));
	id->capacity = le64_to_cpu(raw->capacity);
	id->lba_size = le32_to_cpu(raw->lba_size);
	id->phys_block_size = le32_to_cpu(raw->phys_block_size);
	id->max_xfer = le32_to_cpu(raw->max_xfer);
	id->num_ioq = le16_to_cpu(raw->num_ioq);
	id->max_qdepth = le16_to_cpu(raw->max_qdepth);
	id->max_sge = le16_to_cpu(raw->max_sge);
	id->flags = le16_to_cpu(raw->flags);
	id->max_discard_nlb = le32_to_cpu(raw->max_discard_nlb);
	id->max_wzeroes_nlb = le32_to_cpu(raw->max_wzeroes_nlb);
	id->discard_gran = le32_to_cpu(raw->discard_gran);

	ret = -EINVAL;
	if (id->lba_size != 512 && id->lba_size != 4096)
		dev_err(d, "identify: unsupported LBA size %u\n", id->lba_size);
	else if (!id->capacity)
		dev_err(d, "identify: zero capacity\n");
	else if (id->phys_block_size < id->lba_size ||
		 !is_power_of_2(id->phys_block_size))
		dev_err(d, "identify: bad physical block size %u\n",
			id->phys_block_size);
	else if (id->max_xfer < id->lba_size)
		dev_err(d, "identify: max transfer %u below LBA size\n",
			id->max_xfer);
	else if (id->max_qdepth < 2)
		dev_err(d, "identify: queue depth %u\n", id->max_qdepth);
	else if (!id->max_sge)
		dev_err(d, "identify: max_sge is 0\n");
	else if (!id->num_ioq)
		dev_err(d, "identify: no I/O queues\n");
	else
		ret = 0;
out:
	dma_free_coherent(d, sizeof(*raw), raw, dma);
	return ret;
}

int vcd_get_health(struct vcd_dev *dev, struct vc_health_log *log)
{
	struct device *d = &dev->pdev->dev;
	struct vc_sqe cmd = { .opcode = VC_ADM_GET_LOG };
	struct vc_health_log *buf;
	dma_addr_t dma;
	int ret;

	buf = dma_alloc_coherent(d, sizeof(*buf), &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cmd.nseg = cpu_to_le16(1);
	cmd.dptr = cpu_to_le64(dma);
	cmd.dlen = cpu_to_le32(sizeof(*buf));
	cmd.log.lid = VC_LOG_HEALTH;
	ret = vcd_admin_exec(dev, &cmd, NULL);
	if (!ret)
		memcpy(log, buf, sizeof(*log));
	dma_free_coherent(d, sizeof(*buf), buf, dma);
	return ret;
}

/* --------------------------------------------------------- I/O queues */

static int vcd_create_queue_pair(struct vcd_dev *dev, struct vcd_queue *q)
{
	struct vc_sqe cmd = { .opcode = VC_ADM_CREATE_CQ };
	int ret;

	vcd_queue_reinit(q);
	cmd.dptr = cpu_to_le64(q->cq_dma);
	cmd.queue.qid = cpu_to_le16(q->qid);
	cmd.queue.qsize = cpu_to_le16(q->qsize);
	cmd.queue.vector = cpu_to_le16(q->irq_vector);
	ret = vcd_admin_exec(dev, &cmd, NULL);
	if (ret) {
		dev_err(&dev->pdev->dev, "cannot create CQ %u: %d\n", q->qid,
			ret);
		return ret;
	}
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = VC_ADM_CREATE_SQ;
	cmd.dptr = cpu_to_le64(q->sq_dma);
	cmd.queue.qid = cpu_to_le16(q->qid);
	cmd.queue.qsize = cpu_to_le16(q->qsize);
	cmd.queue.cqid = cpu_to_le16(q->qid);
	ret = vcd_admin_exec(dev, &cmd, NULL);
	if (ret) {
		dev_err(&dev->pdev->dev, "cannot create SQ %u: %d\n", q->qid,
			ret);
		return ret;
	}
	set_bit(VCD_Q_LIVE, &q->flags);
	return 0;
}

/*
 * Create every I/O queue pair on the card (memory is allocated).  On error
 * the queues already created stay known to the card; the caller disables
 * the controller, which forgets them.
 */
int vcd_create_io_queues(struct vcd_dev *dev)
{
	unsigned int i;
	int ret;

	for (i = 0; i < dev->nr_ioq; i++) {
		ret = vcd_create_queue_pair(dev, &dev->ioq[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Best effort DELETE_SQ/DELETE_CQ before a clean shutdown; after the first
 * failure the queues are only marked stopped (the disable forgets them).
 */
void vcd_delete_io_queues(struct vcd_dev *dev)
{
	bool failed = false;
	struct vc_sqe cmd;
	unsigned int i;

	for (i = 0; i < dev->nr_ioq; i++) {
		struct vcd_queue *q = &dev->ioq[i];

		if (!test_bit(VCD_Q_LIVE, &q->flags))
			continue;
		spin_lock(&q->sq_lock);
		clear_bit(VCD_Q_LIVE, &q->flags);
		spin_unlock(&q->sq_lock);
		if (failed)
			continue;
		memset(&cmd, 0, sizeof(cmd));
		cmd.opcode = VC_ADM_DELETE_SQ;
		cmd.queue.qid = cpu_to_le16(q->qid);
		if (vcd_admin_exec(dev, &cmd, NULL))
			failed = true;
		cmd.opcode = VC_ADM_DELETE_CQ;
		if (!failed && vcd_admin_exec(dev, &cmd, NULL))
			failed = true;
	}
}

/*
 * Stop submissions on every I/O queue and reap what the card completed.
 * Call with the blk-mq queues quiesced and the card disabled.
 */
void vcd_stop_io_queues(struct vcd_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_ioq; i++) {
		struct vcd_queue *q = &dev->ioq[i];

		spin_lock(&q->sq_lock);
		clear_bit(VCD_Q_LIVE, &q->flags);
		spin_unlock(&q->sq_lock);
		if (test_bit(VCD_Q_IRQ, &q->flags))
			synchronize_irq(pci_irq_vector(dev->pdev,
						       q->irq_vector));
		vcd_poll_cq(q);
	}
}

/* ------------------------------------------------------ reset / kill */

/**
 * vcd_schedule_reset - ask for a controller reset
 * @dev: the card
 * @reason: for the log
 *
 * Only a LIVE card is reset; in any other state the caller's problem is
 * already being handled (reset running, removal, dead).  Any context.
 */
bool vcd_schedule_reset(struct vcd_dev *dev, const char *reason)
{
	unsigned long flags;
	bool ok = false;

	spin_lock_irqsave(&dev->state_lock, flags);
	if (dev->state == VCD_STATE_LIVE) {
		WRITE_ONCE(dev->state, VCD_STATE_RESETTING);
		dev->reset_reason = reason;
		ok = true;
	}
	spin_unlock_irqrestore(&dev->state_lock, flags);
	if (ok)
		queue_work(vcd_wq, &dev->reset_work);
	return ok;
}

/*
 * Card is dead: fail everything, now and later.  ctrl_lock held.
 * @disable: try cc.EN = 0 first (skip it when the card already ignored it).
 */
static void vcd_kill_locked(struct vcd_dev *dev, const char *reason,
			    bool disable)
{
	enum vcd_state old;
	unsigned long flags;

	spin_lock_irqsave(&dev->state_lock, flags);
	old = dev->state;
	WRITE_ONCE(dev->state, VCD_STATE_DEAD);
	spin_unlock_irqrestore(&dev->state_lock, flags);
	if (old == VCD_STATE_DEAD)
		return;

	dev_err(&dev->pdev->dev,
		"%s: card is dead (%s); failing all I/O. Check the card, then remove and rescan the PCI device or reload vcache to retry\n",
		dev->name, reason);
	if (dev->disk_added && old != VCD_STATE_DELETING)
		blk_mark_disk_dead(dev->disk);
	vcd_blk_quiesce(dev);
	if (disable)
		vcd_ctrl_disable(dev);	/* best effort: stop the card's DMA */
	vcd_stop_io_queues(dev);
	vcd_admin_stop(dev);
	vcd_blk_cancel_all(dev, VCD_HOST_DEAD);
	/* Requests waiting for dispatch now reach queue_rq and fail there. */
	vcd_blk_unquiesce(dev);
}

void vcd_kill(struct vcd_dev *dev, const char *reason, bool disable)
{
	mutex_lock(&dev->ctrl_lock);
	vcd_kill_locked(dev, reason, disable);
	mutex_unlock(&dev->ctrl_lock);
}

/* Same card after a reset?  A different one is not silently adopted. */
static int vcd_reidentify(struct vcd_dev *dev)
{
	struct vcd_ident *id;
	int ret;

	id = kzalloc_obj(*id, GFP_KERNEL);
	if (!id)
		return -ENOMEM;
	ret = vcd_identify(dev, id);
	if (!ret && (strcmp(id->serial, dev->id.serial) ||
		     id->capacity != dev->id.capacity ||
		     id->lba_size != dev->id.lba_size)) {
		dev_err(&dev->pdev->dev,
			"card changed across reset (serial %s, %llu blocks of %u bytes)\n",
			id->serial, id->capacity, id->lba_size);
		ret = -ENODEV;
	}
	kfree(id);
	return ret;
}

void vcd_reset_work(struct work_struct *work)
{
	struct vcd_dev *dev = container_of(work, struct vcd_dev, reset_work);
	struct device *d = &dev->pdev->dev;
	const char *reason;
	unsigned long flags;
	int ret;

	mutex_lock(&dev->ctrl_lock);
	spin_lock_irqsave(&dev->state_lock, flags);
	reason = dev->reset_reason ? dev->reset_reason : "requested";
	spin_unlock_irqrestore(&dev->state_lock, flags);
	if (vcd_state(dev) != VCD_STATE_RESETTING)
		goto out;

	dev_warn(d, "%s: resetting controller (%s)\n", dev->name, reason);
	atomic_inc(&dev->nr_resets);
	vcd_blk_quiesce(dev);
	if (!vcd_fw_alive(dev)) {
		vcd_kill_locked(dev, "firmware not running", false);
		goto unquiesce;
	}
	ret = vcd_ctrl_disable(dev);
	vcd_stop_io_queues(dev);
	vcd_admin_stop(dev);
	if (ret) {
		vcd_kill_locked(dev, "no response to disable", false);
		goto unquiesce;
	}
	/* The card forgot them: give them back to blk-mq for a retry. */
	vcd_blk_cancel_all(dev, VCD_HOST_CANCELLED);

	vcd_admin_start(dev);
	ret = vcd_ctrl_enable(dev);
	if (!ret)
		ret = vcd_reidentify(dev);
	if (!ret)
		ret = vcd_create_io_queues(dev);
	if (ret) {
		vcd_kill_locked(dev, "reset failed", true);
		goto unquiesce;
	}
	dev->last_heartbeat = readl(&dev->regs->heartbeat);
	dev->heartbeat_stamp = jiffies;
	if (vcd_set_state(dev, VCD_STATE_RESETTING, VCD_STATE_LIVE))
		dev_info(d, "%s: controller reset complete, %u I/O queues\n",
			 dev->name, dev->nr_ioq);
unquiesce:
	/* balances the quiesce above; a kill nests its own pair inside */
	vcd_blk_unquiesce(dev);
out:
	mutex_unlock(&dev->ctrl_lock);
}

/*
 * Watchdog: a fatal status or a frozen heartbeat means the firmware is
 * wedged; requests would only find out by timing out, one by one.
 */
void vcd_watchdog_work(struct work_struct *work)
{
	struct vcd_dev *dev = container_of(to_delayed_work(work),
					  struct vcd_dev, watchdog);
	enum vcd_state state = vcd_state(dev);
	u32 csts, hb;

	if (state == VCD_STATE_DELETING || state == VCD_STATE_DEAD)
		return;
	if (state != VCD_STATE_LIVE)
		goto rearm;

	csts = readl(&dev->regs->csts);
	hb = readl(&dev->regs->heartbeat);
	if (csts == ~0u) {
		dev_err(&dev->pdev->dev, "%s: card registers read all ones\n",
			dev->name);
		vcd_schedule_reset(dev, "card not responding");
	} else if (csts & VC_CSTS_CFS) {
		dev_err(&dev->pdev->dev, "%s: controller fatal status (csts 0x%x)\n",
			dev->name, csts);
		vcd_schedule_reset(dev, "controller fatal status");
	} else if (hb != dev->last_heartbeat) {
		dev->last_heartbeat = hb;
		dev->heartbeat_stamp = jiffies;
	} else if (time_after(jiffies, dev->heartbeat_stamp +
			      msecs_to_jiffies(VCD_HEARTBEAT_STALL_MS))) {
		dev_err(&dev->pdev->dev,
			"%s: firmware heartbeat stopped at %u for %u ms\n",
			dev->name, hb, VCD_HEARTBEAT_STALL_MS);
		dev->heartbeat_stamp = jiffies;
		vcd_schedule_reset(dev, "heartbeat stopped");
	}
rearm:
	queue_delayed_work(vcd_wq, &dev->watchdog,
			   msecs_to_jiffies(VCD_WATCHDOG_MS));
}
