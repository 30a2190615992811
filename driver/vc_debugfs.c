// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs test hooks of a vcache card: /sys/kernel/debug/vcache/<pci>/.
 *
 *   shutdown   write 1: run the PCI shutdown path (what reboot, power-off
 *              and kexec run) on a live card, so that tests can see what
 *              it leaves behind; the card stays bound and is removed later
 *
 * and /sys/kernel/debug/vcache/, users of the stacking API (vc_stack.c):
 *   stack_test  write "SERIAL BAD_LBA": run vcd_stack_test(); the write
 *               fails unless every step passed (details in the kernel log)
 *   stack_hold  write "SERIAL": get and claim the card, as a cache would,
 *               and listen to the notifier (on VCD_CARD_GOING it releases
 *               the claim); "read LBA": one fail-fast read of a block in
 *               the background; "0": let go.  Read: what it holds and saw,
 *               and how the last read ended (ok, medium, offline, ioerr,
 *               other, pending)
 */
#include <linux/bio.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vcache_pci.h"
#include "vcache_stack.h"

static struct dentry *vcd_debugfs_root;

static int vcd_dbg_shutdown_set(void *data, u64 val)
{
	struct vcd_dev *dev = data;

	if (val != 1)
		return -EINVAL;
	vcd_pci_shutdown_dev(dev);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(vcd_dbg_shutdown_fops, NULL, vcd_dbg_shutdown_set,
			 "%llu\n");

/* Copy a short user write into @buf (NUL-terminated, newline dropped). */
static int vcd_dbg_get_line(char *buf, size_t size, const char __user *ubuf,
			    size_t count)
{
	if (!count || count >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	strim(buf);
	return 0;
}

static ssize_t vcd_dbg_stack_test_write(struct file *file,
					const char __user *ubuf, size_t count,
					loff_t *ppos)
{
	char buf[96], serial[sizeof_field(struct vcd_ident, serial)];
	unsigned long long lba;
	int ret;

	ret = vcd_dbg_get_line(buf, sizeof(buf), ubuf, count);
	if (ret)
		return ret;
	if (sscanf(buf, "%20s %llu", serial, &lba) != 2)
		return -EINVAL;
	ret = vcd_stack_test(serial, lba);
	return ret ? ret : count;
}

static const struct file_operations vcd_dbg_stack_test_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vcd_dbg_stack_test_write,
	.llseek = noop_llseek,
};

/* stack_hold: one card held by a stand-in user. */
static struct {
	struct mutex lock;	/* everything here */
	struct vcd_card *card;
	struct block_device *bdev;
	bool claimed;
	bool listening;
	unsigned int going, dead;
	int read_status;	/* blk_status_t of the last read, -1: pending */
	char serial[sizeof_field(struct vcd_ident, serial)];
} vcd_hold;

static void vcd_hold_read_end(struct bio *bio)
{
	WRITE_ONCE(vcd_hold.read_status, (__force int)bio->bi_status);
	__free_page(bio_first_page_all(bio));
	bio_put(bio);
}

/* vcd_hold.lock held: a fail-fast read of one block, as a cache would. */
static int vcd_hold_read(u64 lba)
{
	struct vcd_card_info info;
	struct page *page;
	struct bio *bio;

	if (!vcd_hold.claimed || vcd_card_info(vcd_hold.card, &info))
		return -ENODEV;
	if (READ_ONCE(vcd_hold.read_status) < 0)
		return -EBUSY;
	page = alloc_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	bio = bio_alloc(vcd_hold.bdev, 1, REQ_OP_READ | REQ_FAILFAST_DEV,
			GFP_KERNEL);
	bio->bi_iter.bi_sector = lba * (info.lba_size >> SECTOR_SHIFT);
	__bio_add_page(bio, page, info.lba_size, 0);
	bio->bi_end_io = vcd_hold_read_end;
	WRITE_ONCE(vcd_hold.read_status, -1);
	submit_bio(bio);
	return 0;
}

static int vcd_hold_notify(struct notifier_block *nb, unsigned long event,
			   void *data)
{
	mutex_lock(&vcd_hold.lock);
	if (data == vcd_hold.card) {
		if (event == VCD_CARD_DEAD)
			vcd_hold.dead++;
		if (event == VCD_CARD_GOING) {
			vcd_hold.going++;
			if (vcd_hold.claimed)
				vcd_card_release(vcd_hold.card, &vcd_hold);
			vcd_hold.claimed = false;
		}
	}
	mutex_unlock(&vcd_hold.lock);
	return NOTIFY_OK;
}

static struct notifier_block vcd_hold_nb = {
	.notifier_call = vcd_hold_notify,
};

/* vcd_hold.lock held */
static void vcd_hold_drop(void)
{
	if (vcd_hold.claimed)
		vcd_card_release(vcd_hold.card, &vcd_hold);
	vcd_hold.claimed = false;
	vcd_card_put(vcd_hold.card);
	vcd_hold.card = NULL;
}

static ssize_t vcd_dbg_stack_hold_write(struct file *file,
					const char __user *ubuf, size_t count,
					loff_t *ppos)
{
	char buf[64];
	int ret;

	ret = vcd_dbg_get_line(buf, sizeof(buf), ubuf, count);
	if (ret)
		return ret;
	mutex_lock(&vcd_hold.lock);
	if (!strcmp(buf, "0")) {
		vcd_hold_drop();
		goto out;
	}
	if (!strncmp(buf, "read ", 5)) {
		unsigned long long lba;

		ret = kstrtoull(buf + 5, 0, &lba);
		if (!ret)
			ret = vcd_hold_read(lba);
		goto out;
	}
	ret = -EBUSY;
	if (vcd_hold.card)
		goto out;
	ret = -ENODEV;
	vcd_hold.card = vcd_card_get(buf);
	if (!vcd_hold.card)
		goto out;
	ret = vcd_card_claim(vcd_hold.card, &vcd_hold, &vcd_hold.bdev);
	if (ret) {
		vcd_hold_drop();
		goto out;
	}
	vcd_hold.claimed = true;
	vcd_hold.going = 0;
	vcd_hold.dead = 0;
	vcd_hold.read_status = 0;
	strscpy(vcd_hold.serial, buf, sizeof(vcd_hold.serial));
out:
	mutex_unlock(&vcd_hold.lock);
	return ret ? ret : count;
}

static const char *vcd_hold_status_name(int sts)
{
	if (sts < 0)
		return "pending";
	switch ((__force blk_status_t)sts) {
	case BLK_STS_OK:
		return "ok";
	case BLK_STS_MEDIUM:
		return "medium";
	case BLK_STS_OFFLINE:
		return "offline";
	case BLK_STS_IOERR:
		return "ioerr";
	default:
		return "other";
	}
}

static ssize_t vcd_dbg_stack_hold_read(struct file *file, char __user *ubuf,
				       size_t count, loff_t *ppos)
{
	struct vcd_card_info info;
	char buf[160];
	int n, live = -1;

	mutex_lock(&vcd_hold.lock);
	if (vcd_hold.card && !vcd_card_info(vcd_hold.card, &info))
		live = info.live;
	n = scnprintf(buf, sizeof(buf),
		      "card %s claimed %d live %d going %u dead %u read %s\n",
		      vcd_hold.card ? vcd_hold.serial : "-", vcd_hold.claimed,
		      live, vcd_hold.going, vcd_hold.dead,
		      vcd_hold_status_name(READ_ONCE(vcd_hold.read_status)));
	mutex_unlock(&vcd_hold.lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, n);
}

static const struct file_operations vcd_dbg_stack_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = vcd_dbg_stack_hold_read,
	.write = vcd_dbg_stack_hold_write,
	.llseek = noop_llseek,
};

void vcd_debugfs_add(struct vcd_dev *dev)
{
	dev->debugfs = debugfs_create_dir(pci_name(dev->pdev),
					  vcd_debugfs_root);
	debugfs_create_file_unsafe("shutdown", 0200, dev->debugfs, dev,
				   &vcd_dbg_shutdown_fops);
}

void vcd_debugfs_remove(struct vcd_dev *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
}

void vcd_debugfs_init(void)
{
	mutex_init(&vcd_hold.lock);
	vcd_debugfs_root = debugfs_create_dir(VCD_DRV_NAME, NULL);
	debugfs_create_file("stack_test", 0200, vcd_debugfs_root, NULL,
			    &vcd_dbg_stack_test_fops);
	debugfs_create_file("stack_hold", 0600, vcd_debugfs_root, NULL,
			    &vcd_dbg_stack_hold_fops);
	vcd_hold.listening = !vcd_card_register_notifier(&vcd_hold_nb);
}

/* Module exit: every card is gone, so a held card has been released. */
void vcd_debugfs_exit(void)
{
	debugfs_remove_recursive(vcd_debugfs_root);
	vcd_debugfs_root = NULL;
	if (vcd_hold.listening)
		vcd_card_unregister_notifier(&vcd_hold_nb);
	vcd_hold.listening = false;
	mutex_lock(&vcd_hold.lock);
	if (vcd_hold.card)
		vcd_hold_drop();
	mutex_unlock(&vcd_hold.lock);
}
