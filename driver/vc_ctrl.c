// SPDX-License-Identifier: GPL-2.0
/*
 * controller registers, queue memory, CQ processing, the one disable
 * path (vcd_dev_disable), reset, kill and the health watchdog of the
 * vcache card.  The admin queue and its commands are in vc_admin.c.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/sched/mm.h>
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
	if (dev->unresponsive) {
		/* it ignored the last disable: look once, do not wait again */
		csts = readl(&dev->regs->csts);
		ret = csts == ~0u ? -ENODEV :
		      (csts & VC_CSTS_RDY) ? -ETIMEDOUT : 0;
	} else {
		ret = vcd_wait_csts(dev, VC_CSTS_RDY, 0, &csts);
	}
	dev->unresponsive = ret == -ETIMEDOUT;
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
	if (!ret)
		dev->unresponsive = false;
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

static struct lock_class_key vcd_aq_sq_key, vcd_aq_cq_key;

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
	/*
	 * The admin queue's locks are only taken inside admin_lock, which its
	 * interrupt handler takes; an I/O queue's sq_lock is taken with
	 * interrupts on (queue_rq).  Different lock classes, or lockdep sees
	 * an irq lock inversion between unrelated queues.
	 */
	if (qid == VC_ADMIN_QID) {
		lockdep_set_class(&q->sq_lock, &vcd_aq_sq_key);
		lockdep_set_class(&q->cq_lock, &vcd_aq_cq_key);
	}
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

/*
 * Empty a queue before the card (re)learns it.  Not LIVE, so nothing
 * submits; a timeout handler may still poll the CQ, hence the locks.
 * sq_lock outside cq_lock: cq_lock is taken in hard IRQ (vcd_io_irq) and
 * sq_lock with interrupts on (queue_rq), so sq_lock may never be taken
 * inside cq_lock (lockdep: irq lock inversion).
 */
void vcd_queue_reinit(struct vcd_queue *q)
{
	unsigned long flags;

	spin_lock_irqsave(&q->sq_lock, flags);
	spin_lock(&q->cq_lock);
	memset(q->cqes, 0, q->qsize * sizeof(struct vc_cqe));
	q->sq_tail = 0;
	q->last_sq_tail = 0;
	q->cq_head = 0;
	q->cq_phase = 1;
	writel(0, &q->db->sq_tail);
	writel(0, &q->db->cq_head);
	spin_unlock(&q->cq_lock);
	spin_unlock_irqrestore(&q->sq_lock, flags);
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

/*
 * Stop submissions on every I/O queue and reap what the card completed.
 * Call with the blk-mq queues quiesced and the card disabled.
 */
void vcd_stop_io_queues(struct vcd_dev *dev)
{
	unsigned int i;

	for (i = 0; dev->ioq && i < dev->nr_ioq; i++) {
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

/**
 * vcd_dev_disable - stop the card and take back everything it holds
 * @dev: the card (ctrl_lock held)
 * @shutdown: first cc.SHN = NORMAL (the card makes its write buffer
 *            durable), for remove, reboot and power-off
 * @status: how requests still held end if the card confirmed it stopped:
 *          VCD_HOST_CANCELLED (retried after a reset) or VCD_HOST_DEAD
 *          (failed); a card that did not confirm is going to be killed, so
 *          its requests fail as VCD_HOST_DEAD
 *
 * The one teardown of every path (probe failure, remove, reset, shutdown,
 * kill), in the order of nvme_dev_disable: no new command reaches the card
 * (blk-mq quiesced, left so for the caller), cc.EN = 0 and a bounded wait
 * for csts.RDY = 0, and only then are completions reaped, admin commands
 * ended and requests given back, so that a card resuming late cannot DMA
 * into memory that was reused.  A card that does not confirm loses bus
 * mastering, and the buffers of its abandoned admin commands are kept.
 * Every step copes with what probe has not set up yet.
 *
 * Returns 0 when the card confirmed that it stopped (or is gone).
 */
int vcd_dev_disable(struct vcd_dev *dev, bool shutdown, u16 status)
{
	bool stopped;
	int ret;

	lockdep_assert_held(&dev->ctrl_lock);
	vcd_blk_quiesce(dev);
	if (shutdown && !dev->unresponsive &&
	    readl(&dev->regs->csts) != ~0u && !vcd_ctrl_shutdown(dev))
		dev_info(&dev->pdev->dev, "%s: clean shutdown, write buffer durable\n",
			 dev->name);
	ret = vcd_ctrl_disable(dev);
	/* a function that reads all ones is gone: it has no bus to DMA on */
	stopped = !ret || ret == -ENODEV;
	if (!stopped) {
		dev_err(&dev->pdev->dev,
			"%s: card did not confirm it stopped: bus mastering off\n",
			dev->name);
		pci_clear_master(dev->pdev);
	}
	vcd_stop_io_queues(dev);
	vcd_admin_stop(dev, stopped);
	vcd_blk_cancel_all(dev, stopped ? status : VCD_HOST_DEAD);
	return stopped ? 0 : ret;
}

/*
 * Card is dead: fail everything, now and later.  ctrl_lock held.  The card
 * is disabled first (a stalled card that resumes must not complete READs
 * into pages that were given back).
 */
static void vcd_kill_locked(struct vcd_dev *dev, const char *reason)
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
	vcd_dev_disable(dev, false, VCD_HOST_DEAD);
	vcd_stack_dead(dev);
	/* Requests waiting for dispatch now reach queue_rq and fail there. */
	vcd_blk_unquiesce(dev);
}

void vcd_kill(struct vcd_dev *dev, const char *reason)
{
	mutex_lock(&dev->ctrl_lock);
	vcd_kill_locked(dev, reason);
	mutex_unlock(&dev->ctrl_lock);
}

/*
 * Reboot, power-off, kexec: the write buffer is made durable and the card
 * disabled (in-flight commands must not write into the next kernel), and
 * every request ends, now and later: nothing waits on a card that is gone
 * (the CPU-offline notifier drains queues).
 */
void vcd_shutdown_locked(struct vcd_dev *dev)
{
	unsigned long flags;

	lockdep_assert_held(&dev->ctrl_lock);
	vcd_dev_disable(dev, vcd_state(dev) != VCD_STATE_DEAD &&
			pci_device_is_present(dev->pdev), VCD_HOST_DEAD);
	spin_lock_irqsave(&dev->state_lock, flags);
	WRITE_ONCE(dev->state, VCD_STATE_DEAD);
	spin_unlock_irqrestore(&dev->state_lock, flags);
	vcd_blk_unquiesce(dev);
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

/*
 * Reset: disable (requests are cancelled for a retry once the card
 * confirmed it stopped), enable, check it is the same card, recreate the
 * queues.  No allocation here may wait for I/O on this card: noio scope.
 */
void vcd_reset_work(struct work_struct *work)
{
	struct vcd_dev *dev = container_of(work, struct vcd_dev, reset_work);
	struct device *d = &dev->pdev->dev;
	unsigned int noio = memalloc_noio_save();
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
	ret = vcd_dev_disable(dev, false, VCD_HOST_CANCELLED);
	if (ret) {
		vcd_kill_locked(dev, ret == -ENODEV ? "card gone" :
				"no response to disable");
		goto out;
	}
	vcd_admin_start(dev);
	ret = vcd_ctrl_enable(dev);
	if (!ret)
		ret = vcd_reidentify(dev);
	if (!ret)
		ret = vcd_create_io_queues(dev);
	if (ret) {
		vcd_kill_locked(dev, "reset failed");
		goto out;
	}
	dev->last_heartbeat = readl(&dev->regs->heartbeat);
	dev->heartbeat_stamp = jiffies;
	if (vcd_set_state(dev, VCD_STATE_RESETTING, VCD_STATE_LIVE))
		dev_info(d, "%s: controller reset complete, %u I/O queues\n",
			 dev->name, dev->nr_ioq);
	/* cancelled requests go to the card again */
	vcd_blk_unquiesce(dev);
out:
	mutex_unlock(&dev->ctrl_lock);
	memalloc_noio_restore(noio);
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
	} else if (vcd_admin_expired(dev)) {
		dev_err(&dev->pdev->dev,
			"%s: admin command not answered within %u s (lost abort?)\n",
			dev->name, vcd_admin_timeout);
		vcd_schedule_reset(dev, "admin command not answered");
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
