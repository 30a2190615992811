// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs test hooks of a vcache card: /sys/kernel/debug/vcache/<pci>/.
 *
 *   shutdown   write 1: run the PCI shutdown path (what reboot, power-off
 *              and kexec run) on a live card, so that tests can see what
 *              it leaves behind; the card stays bound and is removed later
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>

#include "vcache_pci.h"

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
	vcd_debugfs_root = debugfs_create_dir(VCD_DRV_NAME, NULL);
}

void vcd_debugfs_exit(void)
{
	debugfs_remove_recursive(vcd_debugfs_root);
	vcd_debugfs_root = NULL;
}
