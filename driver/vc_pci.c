// SPDX-License-Identifier: GPL-2.0
/*
 * PCI side of the vcache card: probe, remove, shutdown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/dma-mapping.h>
#include <linux/dmapool.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "compat.h"
#include "vcache_pci.h"

unsigned int vcd_io_timeout = 10;
module_param_named(io_timeout, vcd_io_timeout, uint, 0444);
MODULE_PARM_DESC(io_timeout,
		 "I/O timeout in seconds before a command is aborted (default 10; per disk: /sys/block/vflashN/queue/io_timeout)");

unsigned int vcd_admin_timeout = 5;
module_param_named(admin_timeout, vcd_admin_timeout, uint, 0444);
MODULE_PARM_DESC(admin_timeout, "admin command timeout in seconds (default 5)");

unsigned int vcd_max_queues;
module_param_named(max_queues, vcd_max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues,
		 "max I/O queues per card (default 0: one per online CPU, capped by the card)");

unsigned int vcd_queue_depth = 1024;
module_param_named(queue_depth, vcd_queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth,
		 "max commands in flight per I/O queue (default 1024, capped by the card)");

struct workqueue_struct *vcd_wq;
static DEFINE_IDA(vcd_instance_ida);

/*
 * Is this ivshmem function a vcache card?  Reads BAR2 page 0 only; an
 * unknown device is left exactly as found.
 */
static int vcd_check_card(struct pci_dev *pdev, u32 *version)
{
	struct vc_regs __iomem *regs;
	u64 magic;
	u32 size;

	if (!(pci_resource_flags(pdev, VC_BAR_MEM) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, VC_BAR_MEM) < 2 * VC_PAGE_SIZE) {
		dev_info(&pdev->dev,
			 "ivshmem device without a usable BAR2: not a vcache card, leaving it alone\n");
		return -ENODEV;
	}
	regs = pci_iomap_range(pdev, VC_BAR_MEM, 0, VC_PAGE_SIZE);
	if (!regs)
		return -ENOMEM;
	magic = readq(&regs->magic);
	*version = readl(&regs->version);
	size = readl(&regs->regs_size);
	pci_iounmap(pdev, regs);

	if (magic != VC_CARD_MAGIC) {
		dev_info(&pdev->dev,
			 "ivshmem device with signature 0x%016llx is not a vcache card (0x%016llx), leaving it alone\n",
			 magic, VC_CARD_MAGIC);
		return -ENODEV;
	}
	if (VC_IF_MAJOR(*version) != VC_IF_VERSION_MAJOR) {
		dev_err(&pdev->dev,
			"vcache card speaks interface %u.%u, this driver %u.%u: refusing it (update the driver or the firmware)\n",
			VC_IF_MAJOR(*version), VC_IF_MINOR(*version),
			VC_IF_VERSION_MAJOR, VC_IF_VERSION_MINOR);
		return -ENODEV;
	}
	if (size < sizeof(struct vc_regs)) {
		dev_err(&pdev->dev,
			"vcache card register block of %u bytes, need %zu: refusing it\n",
			size, sizeof(struct vc_regs));
		return -ENODEV;
	}
	return 0;
}

/* Capabilities and mapping of the registers and doorbells. */
static int vcd_map_card(struct vcd_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	struct vc_regs __iomem *regs;
	resource_size_t len = pci_resource_len(pdev, VC_BAR_MEM);
	u64 need;

	dev->bar0 = pci_iomap(pdev, VC_BAR_REGS, 0);
	if (!dev->bar0) {
		dev_err(&pdev->dev, "cannot map BAR0\n");
		return -ENOMEM;
	}
	regs = pci_iomap_range(pdev, VC_BAR_MEM, 0, VC_PAGE_SIZE);
	if (!regs)
		return -ENOMEM;
	dev->cap_mqes = readl(&regs->cap_mqes);
	dev->cap_max_ioq = readw(&regs->cap_max_ioq);
	dev->cap_timeout_ms = readw(&regs->cap_timeout_ms);
	dev->db_offset = readl(&regs->db_offset);
	dev->db_stride = readl(&regs->db_stride);
	pci_iounmap(pdev, regs);

	need = (u64)dev->db_offset + ((u64)dev->cap_max_ioq + 1) *
		dev->db_stride;
	if (dev->cap_mqes < 2 || !dev->cap_max_ioq ||
	    dev->db_stride < sizeof(struct vc_doorbell) ||
	    dev->db_offset < sizeof(struct vc_regs) || need > len) {
		dev_err(&pdev->dev,
			"bad card capabilities (mqes %u, max_ioq %u, doorbells at 0x%x stride %u, BAR2 %llu bytes): refusing it\n",
			dev->cap_mqes, dev->cap_max_ioq, dev->db_offset,
			dev->db_stride, (unsigned long long)len);
		return -ENODEV;
	}
	dev->bar2_mapped = need;
	dev->bar2 = pci_iomap_range(pdev, VC_BAR_MEM, 0, need);
	if (!dev->bar2)
		return -ENOMEM;
	dev->regs = dev->bar2;
	return 0;
}

static unsigned int vcd_wanted_ioq(struct vcd_dev *dev)
{
	unsigned int n = min_t(unsigned int, dev->cap_max_ioq,
			       num_online_cpus());

	n = min_t(unsigned int, n, VC_MAX_IOQ);
	if (vcd_max_queues)
		n = min(n, vcd_max_queues);
	return n;
}

static int vcd_setup_irqs(struct vcd_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	struct irq_affinity affd = { .pre_vectors = 1 };
	int vecs, ret;

	vecs = pci_msix_vec_count(pdev);
	if (vecs < 2) {
		dev_err(&pdev->dev,
			"card has %d MSI-X vectors, needs 2 or more (ivshmem-doorbell vectors=N): refusing it\n",
			vecs);
		return -ENODEV;
	}
	ret = pci_alloc_irq_vectors_affinity(pdev, 2,
					     min_t(unsigned int, vecs,
						   vcd_wanted_ioq(dev) + 1),
					     PCI_IRQ_MSIX | PCI_IRQ_AFFINITY,
					     &affd);
	if (ret < 0) {
		dev_err(&pdev->dev, "cannot enable MSI-X: %d\n", ret);
		return ret;
	}
	dev->nr_ioq = ret - 1;
	return 0;
}

static void vcd_free_io_queues(struct vcd_dev *dev)
{
	unsigned int i;

	if (!dev->ioq)
		return;
	for (i = 0; i < dev->nr_ioq; i++) {
		struct vcd_queue *q = &dev->ioq[i];

		if (test_and_clear_bit(VCD_Q_IRQ, &q->flags))
			pci_free_irq(dev->pdev, q->irq_vector, q);
		vcd_queue_free(dev, q);
	}
	kfree(dev->ioq);
	dev->ioq = NULL;
}

static int vcd_alloc_io_queues(struct vcd_dev *dev)
{
	unsigned int i;
	int ret;

	dev->ioq = kcalloc_node(dev->nr_ioq, sizeof(*dev->ioq), GFP_KERNEL,
				dev_to_node(&dev->pdev->dev));
	if (!dev->ioq)
		return -ENOMEM;
	for (i = 0; i < dev->nr_ioq; i++) {
		struct vcd_queue *q = &dev->ioq[i];

		ret = vcd_queue_alloc(dev, q, i + 1, dev->io_qsize);
		if (ret)
			goto err;
		ret = pci_request_irq(dev->pdev, q->irq_vector, vcd_io_irq, NULL,
				      q, "vcache%d-q%u", dev->instance, q->qid);
		if (ret)
			goto err;
		set_bit(VCD_Q_IRQ, &q->flags);
	}
	return 0;
err:
	vcd_free_io_queues(dev);
	return ret;
}

/* Sizes of the I/O path from what the card and the parameters allow. */
static void vcd_size_io(struct vcd_dev *dev)
{
	struct vcd_ident *id = &dev->id;
	unsigned int qsize;

	dev->lba_shift = ilog2(id->lba_size);
	dev->nr_ioq = min_t(unsigned int, dev->nr_ioq, id->num_ioq);
	qsize = min_t(unsigned int, id->max_qdepth, dev->cap_mqes);
	qsize = min_t(unsigned int, qsize, VCD_MAX_QSIZE);
	if (vcd_queue_depth)
		qsize = min(qsize, vcd_queue_depth + 1);
	dev->io_qsize = max(qsize, 2u);
	dev->max_segs = min_t(unsigned int, id->max_sge,
			      PAGE_SIZE / sizeof(struct vc_sgl_desc));
}

static void vcd_log_summary(struct vcd_dev *dev)
{
	struct vcd_ident *id = &dev->id;
	u64 bytes = id->capacity << dev->lba_shift;

	dev_info(&dev->pdev->dev,
		 "%s: card %s, model %s, firmware %s, interface %u.%u: %llu MiB (%llu x %u-byte blocks), %u I/O queues x %u, max transfer %u KiB, %u segments, write cache %s%s\n",
		 dev->name, id->serial, id->model, id->fw_rev,
		 VC_IF_MAJOR(dev->if_version), VC_IF_MINOR(dev->if_version),
		 bytes >> 20, id->capacity, id->lba_size, dev->nr_ioq,
		 dev->io_qsize - 1, id->max_xfer >> 10, dev->max_segs,
		 id->flags & VC_ID_F_VWC ? "volatile" : "none",
		 id->flags & VC_ID_F_FUA ? " + FUA" : "");
}

/*
 * Everything probe set up, in reverse order; every step copes with what was
 * not set up.  The card is disabled first (vcd_dev_disable), so nothing it
 * could still DMA into is freed while it runs.
 */
static void vcd_teardown(struct vcd_dev *dev, bool shutdown)
{
	struct pci_dev *pdev = dev->pdev;

	if (dev->regs) {
		mutex_lock(&dev->ctrl_lock);
		vcd_dev_disable(dev, shutdown, VCD_HOST_DEAD);
		vcd_blk_unquiesce(dev);
		mutex_unlock(&dev->ctrl_lock);
	}
	if (atomic_read(&dev->leaked_bufs))
		dev_err(&pdev->dev,
			"%s: %d admin buffers stay allocated: the card never confirmed it stopped\n",
			dev->name, atomic_read(&dev->leaked_bufs));
	/* interrupts (they look up requests) go before the tag set */
	vcd_free_io_queues(dev);
	vcd_space_release(dev);	/* region disks go before the tag set */
	vcd_blk_free(dev);
	dma_pool_destroy(dev->sgl_pool);
	if (test_and_clear_bit(VCD_Q_IRQ, &dev->aq.flags))
		pci_free_irq(pdev, 0, dev);
	vcd_queue_free(dev, &dev->aq);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	if (dev->bar2)
		pci_iounmap(pdev, dev->bar2);
	if (dev->bar0)
		pci_iounmap(pdev, dev->bar0);
	if (dev->instance >= 0)
		ida_free(&vcd_instance_ida, dev->instance);
	pci_set_drvdata(pdev, NULL);
	vcd_stack_put_dev(dev);	/* freed with the last handle */
	pci_release_mem_regions(pdev);
	pci_disable_device(pdev);
}

/* Bring-up after the registers are mapped; on error the caller tears down. */
static int vcd_bring_up(struct vcd_dev *dev)
{
	struct pci_dev *pdev = dev->pdev;
	int ret;

	pci_set_master(pdev);	/* or the card's interrupts never arrive */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret) {
		dev_err(&pdev->dev, "no usable 64-bit DMA: %d\n", ret);
		return ret;
	}

	/* A previous driver instance may have left it enabled. */
	if (vcd_ctrl_disable(dev))
		return -ENODEV;

	/* MSI-X on before the card can raise anything. */
	ret = vcd_setup_irqs(dev);
	if (ret)
		return ret;

	ret = vcd_queue_alloc(dev, &dev->aq, VC_ADMIN_QID,
			      min_t(u32, VCD_ADMIN_DEPTH, dev->cap_mqes));
	if (ret)
		return ret;
	ret = pci_request_irq(pdev, 0, vcd_admin_irq, NULL, dev,
			      "vcache-admin@%s", pci_name(pdev));
	if (ret)
		return ret;
	set_bit(VCD_Q_IRQ, &dev->aq.flags);

	vcd_admin_start(dev);
	if (vcd_ctrl_enable(dev)) {
		dev_err(&pdev->dev, "card did not come up: refusing it\n");
		return -ENODEV;
	}
	ret = vcd_identify(dev, &dev->id);
	if (ret) {
		dev_err(&pdev->dev, "identify failed: %d\n", ret);
		return ret;
	}
	/*
	 * Only a card that came up gets a vflashN name, so a broken card
	 * does not take a number.
	 */
	ret = ida_alloc_max(&vcd_instance_ida, (MINORMASK + 1) / VCD_MINORS - 1,
			    GFP_KERNEL);
	if (ret < 0)
		return ret;
	dev->instance = ret;
	snprintf(dev->name, sizeof(dev->name), VCD_DISK_NAME "%d",
		 dev->instance);
	vcd_size_io(dev);
	dma_set_max_seg_size(&pdev->dev, dev->id.max_xfer);

	if (dev->max_segs > 1) {
		dev->sgl_pool = dma_pool_create("vcache-sgl", &pdev->dev,
						dev->max_segs *
						sizeof(struct vc_sgl_desc),
						sizeof(struct vc_sgl_desc), 0);
		if (!dev->sgl_pool)
			return -ENOMEM;
	}
	ret = vcd_alloc_io_queues(dev);
	if (ret)
		return ret;
	ret = vcd_create_io_queues(dev);
	if (ret)
		return ret;
	ret = vcd_blk_init_tagset(dev);
	if (ret)
		return ret;
	ret = vcd_blk_alloc_disk(dev);
	if (ret)
		return ret;

	dev->last_heartbeat = readl(&dev->regs->heartbeat);
	dev->heartbeat_stamp = jiffies;
	vcd_set_state(dev, VCD_STATE_NEW, VCD_STATE_LIVE);
	/* the card-space table sizes the raw disk before anyone sees it */
	ret = vcd_space_load(dev);
	if (!ret)
		ret = vcd_blk_add_disk(dev);
	if (ret) {
		/* I/O during add_disk may have started a reset */
		vcd_set_state(dev, VCD_STATE_LIVE, VCD_STATE_DELETING);
		vcd_set_state(dev, VCD_STATE_RESETTING, VCD_STATE_DELETING);
		cancel_work_sync(&dev->reset_work);
	}
	return ret;
}

static int vcd_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct vcd_dev *dev;
	u32 version;
	int ret;

	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;
	ret = pci_request_mem_regions(pdev, VCD_DRV_NAME);
	if (ret) {
		dev_err(&pdev->dev, "BARs busy: %d\n", ret);
		goto out_disable_dev;
	}
	ret = vcd_check_card(pdev, &version);
	if (ret)
		goto out_release;

	ret = -ENOMEM;
	dev = kzalloc_node(sizeof(*dev), GFP_KERNEL, dev_to_node(&pdev->dev));
	if (!dev)
		goto out_release;
	dev->pdev = pdev;
	dev->if_version = version;
	dev->state = VCD_STATE_NEW;
	spin_lock_init(&dev->state_lock);
	mutex_init(&dev->ctrl_lock);
	mutex_init(&dev->health_lock);
	vcd_stack_init_dev(dev);
	INIT_WORK(&dev->reset_work, vcd_reset_work);
	INIT_DELAYED_WORK(&dev->watchdog, vcd_watchdog_work);
	vcd_admin_init(dev);
	pci_set_drvdata(pdev, dev);
	dev->instance = -1;	/* named once it works: see vcd_bring_up */
	strscpy(dev->name, pci_name(pdev), sizeof(dev->name));

	ret = vcd_map_card(dev);
	if (!ret)
		ret = vcd_bring_up(dev);
	if (ret) {
		vcd_teardown(dev, false);
		return ret;
	}
	vcd_log_summary(dev);
	vcd_debugfs_add(dev);
	vcd_stack_add(dev);
	queue_delayed_work(vcd_wq, &dev->watchdog,
			   msecs_to_jiffies(VCD_WATCHDOG_MS));
	return 0;

out_release:
	pci_release_mem_regions(pdev);
out_disable_dev:
	pci_disable_device(pdev);
	return ret;
}

/* Stop resets and the watchdog; the card is being let go. */
static void vcd_begin_delete(struct vcd_dev *dev)
{
	unsigned long flags;

	spin_lock_irqsave(&dev->state_lock, flags);
	if (dev->state != VCD_STATE_DEAD)
		WRITE_ONCE(dev->state, VCD_STATE_DELETING);
	spin_unlock_irqrestore(&dev->state_lock, flags);
	cancel_delayed_work_sync(&dev->watchdog);
	flush_work(&dev->reset_work);
}

static void vcd_remove(struct pci_dev *pdev)
{
	struct vcd_dev *dev = pci_get_drvdata(pdev);
	bool shutdown;

	dev_info(&pdev->dev, "%s: removing card %s (state %s)\n", dev->name,
		 dev->id.serial, vcd_state_name(vcd_state(dev)));
	vcd_debugfs_remove(dev);
	vcd_stack_going(dev);	/* its users stop and let go first */
	vcd_begin_delete(dev);
	if (!pci_device_is_present(pdev))
		vcd_kill(dev, "device gone");
	else if (vcd_state(dev) != VCD_STATE_DEAD && !vcd_fw_alive(dev))
		vcd_kill(dev, "firmware not running");

	/* Writes back, then waits for every request (timeouts kill). */
	vcd_blk_remove_disk(dev);
	/*
	 * Then the region disks a user left open, and the table's: removing
	 * the last queue but one of the tag set freezes the other, which
	 * must not wait on a stuck command of a live raw disk.
	 */
	vcd_space_remove(dev);
	cancel_work_sync(&dev->reset_work);

	/* A card killed for a stuck command whose firmware runs: shut down. */
	mutex_lock(&dev->ctrl_lock);
	if (vcd_state(dev) != VCD_STATE_DEAD)
		vcd_delete_io_queues(dev);
	mutex_unlock(&dev->ctrl_lock);
	shutdown = pci_device_is_present(pdev) &&
		(vcd_state(dev) != VCD_STATE_DEAD || vcd_fw_alive(dev));
	vcd_teardown(dev, shutdown);
}

/*
 * Reboot, power-off, kexec (and the debugfs hook): write buffer durable,
 * card disabled, every request ended.  The device stays bound.
 */
void vcd_pci_shutdown_dev(struct vcd_dev *dev)
{
	vcd_begin_delete(dev);
	mutex_lock(&dev->ctrl_lock);
	vcd_shutdown_locked(dev);
	mutex_unlock(&dev->ctrl_lock);
	dev_info(&dev->pdev->dev, "%s: shut down, card disabled\n", dev->name);
}

static void vcd_shutdown(struct pci_dev *pdev)
{
	vcd_pci_shutdown_dev(pci_get_drvdata(pdev));
}

static const struct pci_device_id vcd_pci_ids[] = {
	{ PCI_DEVICE(VC_PCI_VENDOR_ID, VC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vcd_pci_ids);

static struct pci_driver vcd_pci_driver = {
	.name		= VCD_DRV_NAME,
	.id_table	= vcd_pci_ids,
	.probe		= vcd_probe,
	.remove		= vcd_remove,
	.shutdown	= vcd_shutdown,
	.dev_groups	= vcd_dev_groups,
};

static int vcd_check_params(void)
{
	if (!vcd_io_timeout || vcd_io_timeout > 3600) {
		pr_err("io_timeout=%u: must be 1..3600 seconds\n",
		       vcd_io_timeout);
		return -EINVAL;
	}
	if (!vcd_admin_timeout || vcd_admin_timeout > 600) {
		pr_err("admin_timeout=%u: must be 1..600 seconds\n",
		       vcd_admin_timeout);
		return -EINVAL;
	}
	if (vcd_max_queues > VC_MAX_IOQ) {
		pr_err("max_queues=%u: at most %u\n", vcd_max_queues,
		       VC_MAX_IOQ);
		return -EINVAL;
	}
	if (vcd_queue_depth == 1 || vcd_queue_depth >= VCD_MAX_QSIZE) {
		pr_err("queue_depth=%u: must be 2..%u (0: the card's)\n",
		       vcd_queue_depth, VCD_MAX_QSIZE - 1);
		return -EINVAL;
	}
	return 0;
}

int vcd_pci_init(void)
{
	int ret;

	ret = vcd_check_params();
	if (ret)
		return ret;
	vcd_wq = alloc_workqueue("vcache", WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	if (!vcd_wq)
		return -ENOMEM;
	vcd_debugfs_init();
	ret = vcd_blk_register();
	if (ret)
		goto out_wq;
	ret = pci_register_driver(&vcd_pci_driver);
	if (ret)
		goto out_blk;
	return 0;
out_blk:
	vcd_blk_unregister();
out_wq:
	vcd_debugfs_exit();
	destroy_workqueue(vcd_wq);
	return ret;
}

void vcd_pci_exit(void)
{
	pci_unregister_driver(&vcd_pci_driver);
	vcd_blk_unregister();
	vcd_debugfs_exit();
	destroy_workqueue(vcd_wq);
	ida_destroy(&vcd_instance_ida);
}
