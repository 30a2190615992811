// SPDX-License-Identifier: GPL-2.0
/*
 * The lifetime of every disk vcache.ko adds: the cards' raw disks
 * (vc_blk.c), their regions (vc_space.c) and the cached devices
 * (cached/vcc_disk.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/wait.h>

#include "vc_disk.h"

/*
 * Disks of this module that the block layer has not released yet.  Their
 * last reference can outlive our put_disk() (a holder elsewhere, or
 * DEBUG_KOBJECT_RELEASE's 1-4 s delay), and disk_release() reads
 * disk->fops, module data: the module's exit waits here until every disk
 * it added has been released (->free_disk) before its memory goes.  The
 * release's return from vcd_free_disk() still runs module text; no module
 * can close that last window (see dm's dm-builtin.c), but the unload path
 * after our exit (free_module(): sysfs teardown, synchronize_rcu()) is far
 * longer than those few instructions.
 */
static atomic_t vcd_disks_live = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(vcd_disks_wq);

/* @disk was added (add_disk succeeded): its release will call us. */
void vcd_disk_added(struct gendisk *disk)
{
	atomic_inc(&vcd_disks_live);
}

/* ->free_disk of every disk we add: the last thing its release runs here */
void vcd_free_disk(struct gendisk *disk)
{
	if (atomic_dec_and_test(&vcd_disks_live))
		wake_up_all(&vcd_disks_wq);
}

/* Wait until every disk this module added has been released. */
void vcd_wait_disks_released(void)
{
	while (!wait_event_timeout(vcd_disks_wq,
				   !atomic_read(&vcd_disks_live), 10 * HZ))
		pr_warn("waiting for %d disk(s) to be released\n",
			atomic_read(&vcd_disks_live));
}
