// SPDX-License-Identifier: GPL-2.0
/*
 * blk-mq block device of the vcache card (/dev/vflashN).
 */
#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/dma-mapping.h>
#include <linux/dmapool.h>
#include <linux/module.h>
#include <linux/scatterlist.h>

#include "compat.h"
#include "vcache_pci.h"
#include "vc_release.h"

static int vcd_major;

static const struct block_device_operations vcd_bdev_ops = {
	.owner = THIS_MODULE,
	.free_disk = vcd_free_disk,
};

static const char *vcd_opname(u8 opcode)
{
	switch (opcode) {
	case VC_CMD_READ:
		return "read";
	case VC_CMD_WRITE:
		return "write";
	case VC_CMD_FLUSH:
		return "flush";
	case VC_CMD_DEALLOCATE:
		return "deallocate";
	case VC_CMD_WRITE_ZEROES:
		return "write-zeroes";
	default:
		return "command";
	}
}

/* Build the SQE of @rq except cid and data pointer.  *data: has a payload */
static blk_status_t vcd_setup_cmd(struct vcd_dev *dev, struct request *rq,
				  struct vc_sqe *cmd, bool *data)
{
	sector_t pos;

	*data = false;
	switch (req_op(rq)) {
	case REQ_OP_READ:
		cmd->opcode = VC_CMD_READ;
		*data = true;
		break;
	case REQ_OP_WRITE:
		cmd->opcode = VC_CMD_WRITE;
		if (rq->cmd_flags & REQ_FUA)
			cmd->flags |= VC_SQE_F_FUA;
		*data = true;
		break;
	case REQ_OP_FLUSH:
		cmd->opcode = VC_CMD_FLUSH;
		return BLK_STS_OK;
	case REQ_OP_DISCARD:
		cmd->opcode = VC_CMD_DEALLOCATE;
		break;
	case REQ_OP_WRITE_ZEROES:
		cmd->opcode = VC_CMD_WRITE_ZEROES;
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	pos = blk_rq_pos(rq);
	if (rq->q != dev->disk->queue)	/* a region (vc_space.c) */
		pos += vcd_region_offset(rq);
	cmd->rw.slba = cpu_to_le64(pos >> (dev->lba_shift - SECTOR_SHIFT));
	cmd->rw.nlb = cpu_to_le32(blk_rq_bytes(rq) >> dev->lba_shift);
	return BLK_STS_OK;
}

static void vcd_unmap_data(struct vcd_dev *dev, struct request *rq)
{
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);

	if (iod->sgl) {
		dma_pool_free(dev->sgl_pool, iod->sgl, iod->sgl_dma);
		iod->sgl = NULL;
	}
	if (iod->dma_mapped) {
		dma_unmap_sgtable(&dev->pdev->dev, &iod->sgt, rq_dma_dir(rq), 0);
		iod->dma_mapped = false;
	}
	if (iod->sgt_alloced) {
		/*
		 * Freed by the size it was allocated with: blk_rq_map_sg() may
		 * map fewer entries (it does on 6.15+), and the chain's pools
		 * follow the allocated count.
		 */
		iod->sgt.orig_nents = blk_rq_nr_phys_segments(rq);
		sg_free_table_chained(&iod->sgt, VCD_INLINE_SG);
		iod->sgt_alloced = false;
	}
}

/*
 * Map the data of @rq for the card: one segment goes in dptr, more go in an
 * SGL from the per-card dma_pool.  The card moves the bytes itself (DMA);
 * nothing is copied here.
 */
static blk_status_t vcd_map_data(struct vcd_dev *dev, struct request *rq,
				 struct vc_sqe *cmd)
{
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);
	struct scatterlist *sg;
	blk_status_t sts = BLK_STS_RESOURCE;
	int nents, i, ret;

	iod->sgt.sgl = iod->inline_sg;
	if (sg_alloc_table_chained(&iod->sgt, blk_rq_nr_phys_segments(rq),
				   iod->inline_sg, VCD_INLINE_SG))
		return BLK_STS_RESOURCE;
	iod->sgt_alloced = true;
	iod->sgt.orig_nents = blk_rq_map_sg(rq, iod->sgt.sgl);
	if (!iod->sgt.orig_nents) {
		sts = BLK_STS_IOERR;
		goto out;
	}
	ret = dma_map_sgtable(&dev->pdev->dev, &iod->sgt, rq_dma_dir(rq),
			      DMA_ATTR_NO_WARN);
	if (ret) {
		sts = ret == -ENOMEM ? BLK_STS_RESOURCE : BLK_STS_IOERR;
		goto out;
	}
	iod->dma_mapped = true;
	nents = iod->sgt.nents;
	if (nents == 1) {
		cmd->nseg = cpu_to_le16(1);
		cmd->dptr = cpu_to_le64(sg_dma_address(iod->sgt.sgl));
	} else {
		if (nents > dev->max_segs) {
			dev_err_ratelimited(&dev->pdev->dev,
					    "%s: request of %d segments over the card's %u\n",
					    dev->name, nents, dev->max_segs);
			sts = BLK_STS_IOERR;
			goto out;
		}
		iod->sgl = dma_pool_alloc(dev->sgl_pool, GFP_ATOMIC,
					  &iod->sgl_dma);
		if (!iod->sgl)
			goto out;
		for_each_sgtable_dma_sg(&iod->sgt, sg, i) {
			iod->sgl[i].addr = cpu_to_le64(sg_dma_address(sg));
			iod->sgl[i].len = cpu_to_le32(sg_dma_len(sg));
			iod->sgl[i].rsvd = 0;
		}
		cmd->nseg = cpu_to_le16(nents);
		cmd->dptr = cpu_to_le64(iod->sgl_dma);
	}
	cmd->dlen = cpu_to_le32(blk_rq_bytes(rq));
	return BLK_STS_OK;
out:
	vcd_unmap_data(dev, rq);
	return sts;
}

/*
 * Card status to block layer status.  Requests with REQ_FAILFAST_DEV come
 * from in-kernel users that must tell a bad block from a dead card (a
 * cache: vcache_stack.h) and get BLK_STS_MEDIUM / BLK_STS_OFFLINE.  Others
 * get BLK_STS_IOERR: MEDIUM would reach O_DIRECT callers as ENODATA and
 * OFFLINE as ENODEV, and databases act on EIO; the log line names the
 * error.
 */
static blk_status_t vcd_blk_status(struct request *rq, u16 status)
{
	bool precise = rq->cmd_flags & REQ_FAILFAST_DEV;

	switch (status) {
	case VC_SC_SUCCESS:
		return BLK_STS_OK;
	case VC_SC_INVALID_OPCODE:
		return BLK_STS_NOTSUPP;
	case VC_SC_READ_ERROR:
	case VC_SC_WRITE_FAULT:
		return precise ? BLK_STS_MEDIUM : BLK_STS_IOERR;
	case VCD_HOST_DEAD:
		return precise ? BLK_STS_OFFLINE : BLK_STS_IOERR;
	default:
		return BLK_STS_IOERR;
	}
}

/* queue_rq on a queue that is not live: wait for a reset, or fail. */
static blk_status_t vcd_not_live(struct vcd_dev *dev, struct request *rq)
{
	if (vcd_state(dev) == VCD_STATE_RESETTING)
		return BLK_STS_RESOURCE;
	return vcd_blk_status(rq, VCD_HOST_DEAD);
}

/* sq_lock held: tell the card about new SQ entries. */
static void vcd_ring_sq(struct vcd_queue *q)
{
	if (q->sq_tail == q->last_sq_tail)
		return;
	writel(q->sq_tail, &q->db->sq_tail);
	vcd_ring(q->dev, q->qid);
	q->last_sq_tail = q->sq_tail;
}

static blk_status_t vcd_queue_rq(struct blk_mq_hw_ctx *hctx,
				 const struct blk_mq_queue_data *bd)
{
	struct vcd_queue *q = hctx->driver_data;
	struct vcd_dev *dev = q->dev;
	struct request *rq = bd->rq;
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);
	struct vc_sqe cmd = { };
	blk_status_t sts;
	bool data;

	if (unlikely(!test_bit(VCD_Q_LIVE, &q->flags)))
		return vcd_not_live(dev, rq);

	if (!(rq->rq_flags & RQF_DONTPREP)) {
		/* first submission, not a requeue */
		iod->retries = 0;
		rq->rq_flags |= RQF_DONTPREP;
	}
	iod->sgl = NULL;
	iod->sgt_alloced = false;
	iod->dma_mapped = false;

	sts = vcd_setup_cmd(dev, rq, &cmd, &data);
	if (sts)
		return sts;
	if (data) {
		sts = vcd_map_data(dev, rq, &cmd);
		if (sts)
			return sts;
	}
	iod->opcode = cmd.opcode;
	clear_bit(VCD_IOD_DONE, &iod->flags);
	blk_mq_start_request(rq);

	spin_lock(&q->sq_lock);
	if (unlikely(!test_bit(VCD_Q_LIVE, &q->flags))) {
		spin_unlock(&q->sq_lock);
		/* blk-mq ends or requeues it; nobody else may complete it */
		set_bit(VCD_IOD_DONE, &iod->flags);
		vcd_unmap_data(dev, rq);
		return vcd_not_live(dev, rq);
	}
	iod->gen++;
	atomic_set(&iod->tstate, iod->gen);
	iod->cid = ((iod->gen & 0xf) << VCD_CID_GEN_SHIFT) | rq->tag;
	cmd.cid = cpu_to_le16(iod->cid);
	memcpy(&q->sqes[q->sq_tail], &cmd, sizeof(cmd));
	if (++q->sq_tail == q->qsize)
		q->sq_tail = 0;
	if (bd->last)
		vcd_ring_sq(q);
	spin_unlock(&q->sq_lock);
	return BLK_STS_OK;
}

static void vcd_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct vcd_queue *q = hctx->driver_data;

	spin_lock(&q->sq_lock);
	vcd_ring_sq(q);
	spin_unlock(&q->sq_lock);
}

static bool vcd_should_retry(struct vcd_dev *dev, struct request *rq, u16 status)
{
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);

	if (status != VCD_HOST_CANCELLED && status != VC_SC_ABORT_REQ &&
	    status != VC_SC_ABORT_SQ_DEL)
		return false;
	if (blk_noretry_request(rq) || iod->retries >= VCD_MAX_RETRIES)
		return false;
	return vcd_state(dev) != VCD_STATE_DEAD;
}

static void vcd_complete_rq(struct request *rq)
{
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);
	struct vcd_dev *dev = rq->q->queuedata;
	u16 status = iod->status;

	vcd_unmap_data(dev, rq);
	if (likely(status == VC_SC_SUCCESS)) {
		blk_mq_end_request(rq, BLK_STS_OK);
		return;
	}
	if (vcd_should_retry(dev, rq, status)) {
		iod->retries++;
		blk_mq_requeue_request(rq, true);
		return;
	}
	if (status != VCD_HOST_DEAD)
		dev_err_ratelimited(&dev->pdev->dev,
				    "%s: %s of %u bytes at sector %llu failed: %s (0x%x)\n",
				    dev->name, vcd_opname(iod->opcode),
				    blk_rq_bytes(rq),
				    (unsigned long long)blk_rq_pos(rq),
				    vcd_status_name(status), status);
	blk_mq_end_request(rq, vcd_blk_status(rq, status));
}

/* Complete @rq with @status unless someone else completed it already. */
static bool vcd_complete_once(struct request *rq, u16 status)
{
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);

	if (test_and_set_bit(VCD_IOD_DONE, &iod->flags))
		return false;
	iod->status = status;
	blk_mq_complete_request(rq);
	return true;
}

/* A CQE of I/O queue @q (cq_lock held). */
void vcd_complete_cqe(struct vcd_queue *q, const struct vc_cqe *cqe)
{
	struct vcd_dev *dev = q->dev;
	u16 cid = le16_to_cpu(cqe->cid);
	struct request *rq = NULL;
	struct vcd_iod *iod;

	if (dev->tagset_alloced)
		rq = blk_mq_tag_to_rq(dev->tagset.tags[q->qid - 1],
				      cid & VCD_CID_TAG_MASK);
	if (unlikely(!rq)) {
		dev_warn_ratelimited(&dev->pdev->dev,
				     "QID %u: completion with invalid cid 0x%x\n",
				     q->qid, cid);
		return;
	}
	iod = blk_mq_rq_to_pdu(rq);
	if (unlikely((cid >> VCD_CID_GEN_SHIFT) != (iod->gen & 0xf))) {
		dev_warn_ratelimited(&dev->pdev->dev,
				     "QID %u: stale completion, cid 0x%x (now 0x%x)\n",
				     q->qid, cid, iod->cid);
		return;
	}
	vcd_complete_once(rq, VC_CQE_STATUS(le16_to_cpu(cqe->status)));
}

/*
 * A command did not complete within io_timeout.  Runs with blk-mq holding a
 * reference on @rq, but the request may complete (and be sent again) under
 * us: iod fields are read once and changed only through tstate's cmpxchg.
 * First timeout: abort (the card completes it as aborted and it is
 * retried).  Second timeout of the same submission, abort sent or not (too
 * many in flight, admin SQ full): reset the controller.
 */
static enum blk_eh_timer_return vcd_timeout(struct request *rq)
{
	struct vcd_iod *iod = blk_mq_rq_to_pdu(rq);
	struct vcd_queue *q = rq->mq_hctx->driver_data;
	struct vcd_dev *dev = q->dev;
	struct device *d = &dev->pdev->dev;
	enum vcd_state state = vcd_state(dev);
	int ts = atomic_read(&iod->tstate);
	u16 cid = ((ts & 0xf) << VCD_CID_GEN_SHIFT) | rq->tag;
	const char *op = vcd_opname(READ_ONCE(iod->opcode));
	u32 csts;
	int ret;

	if (test_bit(VCD_IOD_DONE, &iod->flags))
		return BLK_EH_DONE;
	if (state == VCD_STATE_DEAD) {
		vcd_complete_once(rq, VCD_HOST_DEAD);
		return BLK_EH_DONE;
	}
	vcd_poll_cq(q);
	if (test_bit(VCD_IOD_DONE, &iod->flags)) {
		dev_warn(d, "%s: QID %u cid 0x%x timeout, completion polled (lost interrupt?)\n",
			 dev->name, q->qid, cid);
		return BLK_EH_DONE;
	}
	atomic_inc(&dev->nr_timeouts);

	if (state == VCD_STATE_DELETING) {
		dev_warn(d, "%s: QID %u cid 0x%x %s timed out during removal: disabling the card\n",
			 dev->name, q->qid, cid, op);
		vcd_kill(dev, "I/O timeout during removal");
		return BLK_EH_DONE;
	}
	if (state != VCD_STATE_LIVE)	/* reset under way: it requeues us */
		return BLK_EH_RESET_TIMER;

	csts = readl(&dev->regs->csts);
	if (csts == ~0u || (csts & VC_CSTS_CFS)) {
		dev_warn(d, "%s: QID %u cid 0x%x timeout, controller status 0x%x: resetting\n",
			 dev->name, q->qid, cid, csts);
		vcd_schedule_reset(dev, "controller fatal status");
		return BLK_EH_RESET_TIMER;
	}
	if (ts & VCD_TS_TIMED_OUT) {
		dev_warn(d, "%s: QID %u cid 0x%x %s timed out again: resetting controller\n",
			 dev->name, q->qid, cid, op);
		vcd_schedule_reset(dev, "I/O timeout after abort");
		return BLK_EH_RESET_TIMER;
	}
	/* this submission's first timeout is ours, unless it moved on */
	if (atomic_cmpxchg(&iod->tstate, ts, ts | VCD_TS_TIMED_OUT) != ts)
		return BLK_EH_DONE;

	dev_warn(d, "%s: QID %u cid 0x%x %s of %u bytes at sector %llu timed out after %u ms: aborting\n",
		 dev->name, q->qid, cid, op, blk_rq_bytes(rq),
		 (unsigned long long)blk_rq_pos(rq),
		 jiffies_to_msecs(rq->timeout));
	ret = vcd_admin_abort(dev, q->qid, cid);
	if (ret == -EBUSY) {
		dev_warn(d, "%s: QID %u cid 0x%x: no abort possible now; the next timeout resets\n",
			 dev->name, q->qid, cid);
	} else if (ret) {
		dev_warn(d, "%s: QID %u cid 0x%x: cannot send abort (%d): resetting\n",
			 dev->name, q->qid, cid, ret);
		vcd_schedule_reset(dev, "abort not possible");
	}
	return BLK_EH_RESET_TIMER;
}

static int vcd_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			 unsigned int hctx_idx)
{
	struct vcd_dev *dev = data;

	if (WARN_ON_ONCE(hctx_idx >= dev->nr_ioq))
		return -EINVAL;
	hctx->driver_data = &dev->ioq[hctx_idx];
	return 0;
}

static void vcd_map_queues_cb(struct blk_mq_tag_set *set)
{
	struct vcd_dev *dev = set->driver_data;

	/* vector 0 is the admin queue, vector q serves hctx q - 1 */
	blk_mq_map_hw_queues(&set->map[HCTX_TYPE_DEFAULT], &dev->pdev->dev,
			     1);
}

static const struct blk_mq_ops vcd_mq_ops = {
	.queue_rq	= vcd_queue_rq,
	.commit_rqs	= vcd_commit_rqs,
	.complete	= vcd_complete_rq,
	.timeout	= vcd_timeout,
	.init_hctx	= vcd_init_hctx,
	.map_queues	= vcd_map_queues_cb,
};

int vcd_blk_init_tagset(struct vcd_dev *dev)
{
	struct blk_mq_tag_set *set = &dev->tagset;
	int ret;

	memset(set, 0, sizeof(*set));
	set->ops = &vcd_mq_ops;
	set->nr_hw_queues = dev->nr_ioq;
	set->nr_maps = 1;
	set->queue_depth = dev->io_qsize - 1;
	set->cmd_size = sizeof(struct vcd_iod);
	set->numa_node = dev_to_node(&dev->pdev->dev);
	set->timeout = vcd_io_timeout * HZ;
	set->driver_data = dev;
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		return ret;
	dev->tagset_alloced = true;
	return 0;
}

/* The card's queue limits, for the raw disk and every region. */
void vcd_blk_limits(struct vcd_dev *dev, struct vcd_limits *l)
{
	const struct vcd_ident *id = &dev->id;
	unsigned int to_sect = dev->lba_shift - SECTOR_SHIFT;

	memset(l, 0, sizeof(*l));
	l->lba_size = id->lba_size;
	l->phys_block_size = id->phys_block_size;
	l->max_hw_sectors = id->max_xfer >> SECTOR_SHIFT;
	l->max_segments = dev->max_segs;
	l->max_segment_size = id->max_xfer;
	if ((id->flags & VC_ID_F_DEALLOCATE) && id->max_discard_nlb) {
		l->discard_granularity = max(id->discard_gran, id->lba_size);
		l->max_discard_sectors = min_t(u64, (u64)id->max_discard_nlb <<
					       to_sect, UINT_MAX);
	}
	if ((id->flags & VC_ID_F_WRITE_ZEROES) && id->max_wzeroes_nlb)
		l->max_write_zeroes_sectors =
			min_t(u64, (u64)id->max_wzeroes_nlb << to_sect,
			      UINT_MAX);
	l->write_cache = id->flags & VC_ID_F_VWC;
	l->fua = id->flags & VC_ID_F_FUA;
}

int vcd_blk_alloc_disk(struct vcd_dev *dev)
{
	const struct vcd_ident *id = &dev->id;
	unsigned int to_sect = dev->lba_shift - SECTOR_SHIFT;
	struct vcd_limits l;
	struct gendisk *disk;

	vcd_blk_limits(dev, &l);
	disk = vcd_alloc_disk(&dev->tagset, &l, dev);
	if (IS_ERR(disk))
		return PTR_ERR(disk);
	disk->major = vcd_major;
	disk->first_minor = dev->instance * VCD_MINORS;
	disk->minors = VCD_MINORS;
	disk->fops = &vcd_bdev_ops;
	disk->private_data = dev;
	strscpy(disk->disk_name, dev->name, sizeof(disk->disk_name));
	set_capacity(disk, id->capacity << to_sect);
	dev->disk = disk;
	return 0;
}

int vcd_blk_add_disk(struct vcd_dev *dev)
{
	int ret;

	ret = device_add_disk(&dev->pdev->dev, dev->disk, NULL);
	if (ret)
		return ret;
	vcd_release_hold();	/* its release calls vcd_free_disk() */
	dev->disk_added = true;
	return 0;
}

bool vcd_devt_is_card(dev_t devt)
{
	return vcd_major > 0 && MAJOR(devt) == vcd_major &&
	       !(MINOR(devt) % VCD_MINORS);
}

/* del_gendisk: writes back, fails new I/O, waits for requests in flight. */
void vcd_blk_remove_disk(struct vcd_dev *dev)
{
	if (dev->disk_added)
		del_gendisk(dev->disk);
	dev->disk_added = false;
}

void vcd_blk_free(struct vcd_dev *dev)
{
	if (dev->disk)
		put_disk(dev->disk);
	dev->disk = NULL;
	if (dev->tagset_alloced)
		blk_mq_free_tag_set(&dev->tagset);
	dev->tagset_alloced = false;
}

/*
 * Stop dispatch to the card (once; ctrl_lock held): the raw disk's queue
 * and every open region's (vc_space.c adds and removes regions under
 * ctrl_lock, matching this state).
 */
void vcd_blk_quiesce(struct vcd_dev *dev)
{
	struct vcd_region *r;

	lockdep_assert_held(&dev->ctrl_lock);
	if (dev->disk && !dev->quiesced) {
		blk_mq_quiesce_queue(dev->disk->queue);
		list_for_each_entry(r, &dev->regions, node)
			blk_mq_quiesce_queue(r->disk->queue);
		dev->quiesced = true;
	}
}

/* Dispatch again, requeued requests first (ctrl_lock held). */
void vcd_blk_unquiesce(struct vcd_dev *dev)
{
	struct vcd_region *r;

	lockdep_assert_held(&dev->ctrl_lock);
	if (dev->disk && dev->quiesced) {
		blk_mq_unquiesce_queue(dev->disk->queue);
		blk_mq_kick_requeue_list(dev->disk->queue);
		list_for_each_entry(r, &dev->regions, node) {
			blk_mq_unquiesce_queue(r->disk->queue);
			blk_mq_kick_requeue_list(r->disk->queue);
		}
		dev->quiesced = false;
	}
}

struct vcd_cancel {
	u16 status;
	unsigned int count;
};

static bool vcd_cancel_rq(struct request *rq, void *data)
{
	struct vcd_cancel *c = data;

	if (vcd_complete_once(rq, c->status))
		c->count++;
	return true;
}

/*
 * Complete every request the card still holds with @status (requeue or
 * fail, see vcd_complete_rq).  The card must no longer be working on them:
 * disabled, dead, or its queues stopped.
 */
void vcd_blk_cancel_all(struct vcd_dev *dev, u16 status)
{
	struct vcd_cancel c = { .status = status };

	if (!dev->tagset_alloced)
		return;
	blk_mq_tagset_busy_iter(&dev->tagset, vcd_cancel_rq, &c);
	blk_mq_tagset_wait_completed_request(&dev->tagset);
	if (c.count)
		dev_warn(&dev->pdev->dev, "%s: requests in flight: %u %s\n",
			 dev->name, c.count,
			 status == VCD_HOST_CANCELLED ? "will be retried" :
			 "failed");
}

int vcd_blk_register(void)
{
	vcd_major = register_blkdev(0, VCD_DISK_NAME);
	if (vcd_major < 0) {
		pr_err("vcache: cannot register block major: %d\n", vcd_major);
		return vcd_major;
	}
	return 0;
}

void vcd_blk_unregister(void)
{
	unregister_blkdev(vcd_major, VCD_DISK_NAME);
}
