/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flush.h - start a flush and wait for it, with progress; Ctrl-C cancels.
 */
#ifndef VCC_FLUSH_H
#define VCC_FLUSH_H

#include "nl.h"

struct vcc_flush_req {
	const char *name;		/* cache */
	const char *devname;		/* one backing device by name, or */
	u64 dev;			/* by device number (0: all) */
	const char *label;		/* for messages: "/dev/sdb" */
	bool background;
};

/*
 * 0 when every block dirty at the start is clean (or, in the background,
 * when the kernel accepted the flush); -1 with the error and its exit
 * code: VCACHE_EXIT_INTR after Ctrl-C (the flush is cancelled),
 * VCACHE_EXIT_FAIL if the flush ended with an error.
 */
int vcc_flush_run(struct vcc_nl *nl, const struct vcc_flush_req *r);

#endif
