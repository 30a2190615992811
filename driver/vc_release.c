// SPDX-License-Identifier: GPL-2.0
/*
 * Delayed releases of the module's objects: the disks vcache.ko adds (the
 * cards' raw disks in vc_blk.c, their regions in vc_space.c, the cached
 * devices in cached/vcc_disk.c) and the cached devices' sysfs kobjects
 * (cached/vcc_sysfs.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/wait.h>

#include "vc_release.h"

/*
 * Objects of this module not released yet.  Their last reference can
 * outlive our put (a holder elsewhere, or DEBUG_KOBJECT_RELEASE's 1-4 s
 * delay), and their release reads module data (disk_release() reads
 * disk->fops, kobject_release() the kobj_type) and runs module code (our
 * release functions): the module's exit waits here until every one has
 * been released before its memory goes.  The release's return from the
 * function that calls vcd_release_done() still runs module text; no
 * module can close that last window (see dm's dm-builtin.c), but the
 * unload path after our exit (free_module(): sysfs teardown,
 * synchronize_rcu()) is far longer than those few instructions.
 */
static atomic_t vcd_releases_due = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(vcd_releases_wq);

/* An object whose release will call vcd_release_done() now exists. */
void vcd_release_hold(void)
{
	atomic_inc(&vcd_releases_due);
}

/* The last thing such a release does. */
void vcd_release_done(void)
{
	if (atomic_dec_and_test(&vcd_releases_due))
		wake_up_all(&vcd_releases_wq);
}

/* ->free_disk of every disk we add (held once its add_disk succeeded) */
void vcd_free_disk(struct gendisk *disk)
{
	vcd_release_done();
}

/* Wait until every object held has been released. */
void vcd_wait_releases(void)
{
	while (!wait_event_timeout(vcd_releases_wq,
				   !atomic_read(&vcd_releases_due), 10 * HZ))
		pr_warn("waiting for %d object(s) to be released\n",
			atomic_read(&vcd_releases_due));
}
