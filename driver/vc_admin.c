// SPDX-License-Identifier: GPL-2.0
/*
 * admin queue of the vcache card: command slots, synchronous and abort
 * commands with deadlines, identify, health log, I/O queue creation.
 *
 * Buffer rule: the buffer of an admin command belongs to the driver until
 * the card has completed the command or has confirmed that it stopped
 * (csts.RDY = 0 after cc.EN = 0).  A command that times out is abandoned by
 * its caller but keeps its slot and its buffer; the late completion or the
 * disable frees them.  A card that never confirms keeps them forever.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "vcache_pci.h"

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

/*
 * Give back a command's data buffer.  @card_done: the card completed the
 * command or confirmed it stopped; otherwise it may still write there and
 * the buffer is leaked on purpose.  Any context.
 */
static void vcd_abuf_release(struct vcd_dev *dev, void *buf, dma_addr_t dma,
			     u32 len, bool card_done)
{
	if (!buf)
		return;
	if (!card_done) {
		atomic_inc(&dev->leaked_bufs);
		dev_err_ratelimited(&dev->pdev->dev,
				    "%s: keeping a %u-byte admin buffer: the card never confirmed it stopped\n",
				    dev->name, len);
		return;
	}
	dma_unmap_single(&dev->pdev->dev, dma, len, DMA_FROM_DEVICE);
	kfree(buf);
}

/*
 * admin_lock held.  Completes slot @i with @err and frees it.  A buffer
 * still owned by the slot (its caller gave up) is released here.
 */
static void vcd_admin_finish(struct vcd_dev *dev, unsigned int i, int err,
			     u16 status, u32 result, bool card_done)
{
	struct vcd_admin_slot *slot = &dev->slots[i];

	slot->busy = false;
	if (slot->done)
		slot->done(dev, slot, err, status, result, card_done);
	vcd_abuf_release(dev, slot->buf, slot->buf_dma, slot->buf_len,
			 card_done);
	slot->buf = NULL;
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
				 le32_to_cpu(cqe.result), true);
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
 * flight completes with -EIO.  Call with the card disabled; @card_stopped
 * says whether it confirmed (only then are abandoned buffers freed).
 */
void vcd_admin_stop(struct vcd_dev *dev, bool card_stopped)
{
	unsigned long flags;
	unsigned int i;

	if (test_bit(VCD_Q_IRQ, &dev->aq.flags))
		synchronize_irq(pci_irq_vector(dev->pdev, 0));
	spin_lock_irqsave(&dev->admin_lock, flags);
	dev->admin_live = false;
	if (dev->aq.cqes)
		vcd_process_admin_cq(dev);
	for (i = 0; i < VCD_ADMIN_SLOTS; i++)
		if (dev->slots[i].busy)
			vcd_admin_finish(dev, i, -EIO, 0, 0, card_stopped);
	spin_unlock_irqrestore(&dev->admin_lock, flags);
}

/*
 * An admin command past its deadline (an abort the card never answered, a
 * command whose caller gave up) means the card ignores its admin queue.
 */
bool vcd_admin_expired(struct vcd_dev *dev)
{
	unsigned long flags;
	bool expired = false;
	unsigned int i;

	spin_lock_irqsave(&dev->admin_lock, flags);
	for (i = 0; i < VCD_ADMIN_SLOTS; i++)
		if (dev->slots[i].busy &&
		    time_after(jiffies, dev->slots[i].deadline))
			expired = true;
	spin_unlock_irqrestore(&dev->admin_lock, flags);
	return expired;
}

/* What to post: the command, who hears of its end, its buffer. */
struct vcd_admin_req {
	struct vc_sqe *cmd;
	vcd_admin_done_t done;
	void *ctx;
	u32 data;
	void *buf;
	dma_addr_t buf_dma;
	u32 buf_len;
};

/*
 * Post @r in a free slot (the caller holds one from admin_sem) and ring.
 * The slot owns the buffer from here.  Returns the slot index, -ENODEV
 * when the admin queue is not live, -EBUSY when the card stopped consuming
 * its SQ.
 */
static int vcd_admin_post(struct vcd_dev *dev, const struct vcd_admin_req *r)
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
		spin_unlock_irqrestore(&dev->admin_lock, flags);
		return -EBUSY;
	}
	slot = &dev->slots[i];
	slot->busy = true;
	slot->gen++;
	slot->done = r->done;
	slot->ctx = r->ctx;
	slot->data = r->data;
	slot->buf = r->buf;
	slot->buf_dma = r->buf_dma;
	slot->buf_len = r->buf_len;
	slot->deadline = jiffies + vcd_admin_timeout * HZ;
	r->cmd->cid = cpu_to_le16(((u16)slot->gen << 8) | i);
	memcpy(&q->sqes[q->sq_tail], r->cmd, sizeof(*r->cmd));
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
	void *buf;		/* handed back by the slot on completion */
	dma_addr_t buf_dma;
	bool card_done;
};

static void vcd_admin_sync_done(struct vcd_dev *dev, struct vcd_admin_slot *slot,
				int err, u16 status, u32 result, bool card_done)
{
	struct vcd_admin_wait *w = slot->ctx;

	w->err = err;
	w->status = status;
	w->result = result;
	w->buf = slot->buf;
	w->buf_dma = slot->buf_dma;
	w->card_done = card_done;
	slot->buf = NULL;	/* the waiter releases it */
	complete(&w->done);
}

/**
 * vcd_admin_exec - run an admin command and wait for it
 * @dev: the card
 * @cmd: the command (cid and, with @data, the data pointer are filled in)
 * @data: where the card's data goes (the card writes a driver buffer that
 *        is copied here on success), or NULL
 * @len: bytes of @data
 * @result: the CQE result, or NULL
 *
 * Waits at most admin_timeout seconds.  Returns 0, -EIO when the card
 * returned an error status (logged) or the command was cancelled,
 * -ETIMEDOUT, -ENOMEM, or -ENODEV when the admin queue is down (reset in
 * progress, card dead).  A command that times out keeps its buffer until
 * the card is done with it (see the top of this file).
 */
int vcd_admin_exec(struct vcd_dev *dev, struct vc_sqe *cmd, void *data,
		   u32 len, u32 *result)
{
	unsigned long tmo = msecs_to_jiffies(vcd_admin_timeout * MSEC_PER_SEC);
	struct vcd_admin_req r = { .cmd = cmd, .done = vcd_admin_sync_done };
	struct device *d = &dev->pdev->dev;
	struct vcd_admin_wait w = { };
	unsigned long flags;
	bool abandoned = false;
	int i;

	init_completion(&w.done);
	r.ctx = &w;
	if (data) {
		r.buf = kzalloc(len, GFP_KERNEL);
		if (!r.buf)
			return -ENOMEM;
		r.buf_len = len;
		r.buf_dma = dma_map_single(d, r.buf, len, DMA_FROM_DEVICE);
		if (dma_mapping_error(d, r.buf_dma)) {
			kfree(r.buf);
			return -ENOMEM;
		}
		cmd->nseg = cpu_to_le16(1);
		cmd->dptr = cpu_to_le64(r.buf_dma);
		cmd->dlen = cpu_to_le32(len);
	}
	if (down_timeout(&dev->admin_sem, tmo)) {
		vcd_abuf_release(dev, r.buf, r.buf_dma, len, true);
		return -ETIMEDOUT;
	}
	i = vcd_admin_post(dev, &r);
	if (i < 0) {
		up(&dev->admin_sem);
		vcd_abuf_release(dev, r.buf, r.buf_dma, len, true);
		return i;
	}
	if (!wait_for_completion_timeout(&w.done, tmo)) {
		/*
		 * Give up waiting, unless it completed meanwhile.  The slot
		 * and its buffer stay busy: the card may still write there.
		 */
		spin_lock_irqsave(&dev->admin_lock, flags);
		if (dev->slots[i].busy && dev->slots[i].ctx == &w) {
			dev->slots[i].done = NULL;
			dev->slots[i].ctx = NULL;
			abandoned = true;
		}
		spin_unlock_irqrestore(&dev->admin_lock, flags);
		if (abandoned) {
			dev_err(d, "admin command 0x%02x timed out after %u s\n",
				cmd->opcode, vcd_admin_timeout);
			/* A LIVE card that ignores its admin queue is wedged. */
			vcd_schedule_reset(dev, "admin command timeout");
			return -ETIMEDOUT;
		}
		/* else completed under the lock: w is filled in */
	}
	if (w.buf && w.card_done) {
		dma_unmap_single(d, w.buf_dma, len, DMA_FROM_DEVICE);
		if (!w.err && w.status == VC_SC_SUCCESS)
			memcpy(data, w.buf, len);
		kfree(w.buf);
	} else if (w.buf) {
		vcd_abuf_release(dev, w.buf, w.buf_dma, len, false);
	}
	if (w.err)
		return w.err;
	if (w.status != VC_SC_SUCCESS) {
		dev_err(d, "admin command 0x%02x failed: %s (0x%x)\n",
			cmd->opcode, vcd_status_name(w.status), w.status);
		return -EIO;
	}
	if (result)
		*result = w.result;
	return 0;
}

static void vcd_abort_done(struct vcd_dev *dev, struct vcd_admin_slot *slot,
			   int err, u16 status, u32 result, bool card_done)
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
	if (status == VC_SC_SUCCESS) {
		/*
		 * Nothing to abort: it completed meanwhile.  If it is still
		 * stuck after all, its next timeout resets the controller.
		 */
		dev_info(&dev->pdev->dev,
			 "QID %u cid 0x%x: nothing to abort, already completed\n",
			 qid, cid);
		return;
	}
	dev_warn(&dev->pdev->dev,
		 "abort of QID %u cid 0x%x failed (%s): resetting\n",
		 qid, cid, vcd_status_name(status));
	vcd_schedule_reset(dev, "abort failed");
}

/*
 * Send VC_ADM_ABORT for (qid, cid) without waiting.  Never sleeps.  Its
 * deadline is admin_timeout (vcd_admin_expired).  Returns 0, or -EBUSY
 * (VCD_MAX_ABORTS in flight, admin SQ full) or -ENODEV when no abort could
 * be sent now.
 */
int vcd_admin_abort(struct vcd_dev *dev, u16 qid, u16 cid)
{
	struct vc_sqe cmd = { .opcode = VC_ADM_ABORT };
	struct vcd_admin_req r = {
		.cmd = &cmd, .done = vcd_abort_done,
		.data = ((u32)qid << 16) | cid,
	};
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
	i = vcd_admin_post(dev, &r);
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

/* What the driver relies on in an identify page; 0 or -EINVAL, logged. */
static int vcd_check_ident(struct device *d, const struct vcd_ident *id)
{
	const char *why = NULL;

	if (id->lba_size != 512 && id->lba_size != 4096)
		why = "unsupported LBA size";
	else if (!id->capacity)
		why = "zero capacity";
	else if (id->capacity > (U64_MAX >> ilog2(id->lba_size)))
		why = "capacity overflows 64-bit bytes";
	else if (id->phys_block_size < id->lba_size ||
		 !is_power_of_2(id->phys_block_size))
		why = "bad physical block size";
	else if (id->max_xfer < PAGE_SIZE)
		why = "max transfer below the page size";
	else if (id->max_xfer % id->lba_size)
		why = "max transfer not a multiple of the LBA size";
	else if ((id->flags & VC_ID_F_DEALLOCATE) && id->max_discard_nlb &&
		 id->discard_gran && !is_power_of_2(id->discard_gran))
		why = "discard granularity not a power of two";
	else if (id->max_qdepth < 2)
		why = "queue depth below 2";
	else if (!id->max_sge)
		why = "max_sge is 0";
	else if (!id->num_ioq)
		why = "no I/O queues";
	if (!why)
		return 0;
	dev_err(d,
		"identify: %s (capacity %llu, LBA %u, physical block %u, max transfer %u, discard granularity %u, queue depth %u, max_sge %u, %u I/O queues): refusing the card\n",
		why, id->capacity, id->lba_size, id->phys_block_size,
		id->max_xfer, id->discard_gran, id->max_qdepth, id->max_sge,
		id->num_ioq);
	return -EINVAL;
}

/* IDENTIFY into @id, with sanity checks of what the driver relies on. */
int vcd_identify(struct vcd_dev *dev, struct vcd_ident *id)
{
	struct vc_sqe cmd = { .opcode = VC_ADM_IDENTIFY };
	struct vc_identify *raw;
	int ret;

	raw = kzalloc_obj(*raw, GFP_KERNEL);
	if (!raw)
		return -ENOMEM;
	ret = vcd_admin_exec(dev, &cmd, raw, sizeof(*raw), NULL);
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
	ret = vcd_check_ident(&dev->pdev->dev, id);
out:
	kfree(raw);
	return ret;
}

int vcd_get_health(struct vcd_dev *dev, struct vc_health_log *log)
{
	struct vc_sqe cmd = { .opcode = VC_ADM_GET_LOG };

	cmd.log.lid = VC_LOG_HEALTH;
	return vcd_admin_exec(dev, &cmd, log, sizeof(*log), NULL);
}

/* --------------------------------------------------------- I/O queues */

/* CREATE_CQ or CREATE_SQ for queue pair @q (the SQ completes on its CQ). */
static int vcd_create_queue(struct vcd_dev *dev, struct vcd_queue *q, u8 opcode)
{
	struct vc_sqe cmd = { .opcode = opcode };
	bool cq = opcode == VC_ADM_CREATE_CQ;
	int ret;

	cmd.dptr = cpu_to_le64(cq ? q->cq_dma : q->sq_dma);
	cmd.queue.qid = cpu_to_le16(q->qid);
	cmd.queue.qsize = cpu_to_le16(q->qsize);
	if (cq)
		cmd.queue.vector = cpu_to_le16(q->irq_vector);
	else
		cmd.queue.cqid = cpu_to_le16(q->qid);
	ret = vcd_admin_exec(dev, &cmd, NULL, 0, NULL);
	if (ret)
		dev_err(&dev->pdev->dev, "cannot create %s %u: %d\n",
			cq ? "CQ" : "SQ", q->qid, ret);
	return ret;
}

static int vcd_create_queue_pair(struct vcd_dev *dev, struct vcd_queue *q)
{
	int ret;

	vcd_queue_reinit(q);
	ret = vcd_create_queue(dev, q, VC_ADM_CREATE_CQ);
	if (!ret)
		ret = vcd_create_queue(dev, q, VC_ADM_CREATE_SQ);
	if (!ret)
		set_bit(VCD_Q_LIVE, &q->flags);
	return ret;
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

	for (i = 0; dev->ioq && i < dev->nr_ioq; i++) {
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
		if (vcd_admin_exec(dev, &cmd, NULL, 0, NULL))
			failed = true;
		cmd.opcode = VC_ADM_DELETE_CQ;
		if (!failed && vcd_admin_exec(dev, &cmd, NULL, 0, NULL))
			failed = true;
	}
}
