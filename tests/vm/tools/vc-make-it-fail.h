/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Under `make check-debug FAULTS=1` ($VC_FAULTS, tests/vm/guest/init.sh) a
 * test program whose own calls are the module's path under test marks
 * itself for failslab's task filter around those calls only: its requests
 * to the module meet the failures, not the shell around it, nor its own
 * start (the dynamic loader's mappings fail under failslab too), nor its
 * own files.  Those are on the guest's 9p root: a slab failure in a 9p
 * write left every open and exec in the guest failing with EINVAL
 * (docs/debug-kernel-findings.md, 9 and 11), whichever program met it.
 *
 *   vc_make_it_fail_init(who)   once set up: opens /proc/self/make-it-fail
 *                               (nothing without $VC_FAULTS)
 *   vc_make_it_fail(1) ... vc_make_it_fail(0)
 *                               around each call under test
 */
#ifndef VC_MAKE_IT_FAIL_H
#define VC_MAKE_IT_FAIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int vc_mif_fd = -1;

static inline void vc_make_it_fail_init(const char *who)
{
	const char *f = getenv("VC_FAULTS");

	if (!f || !*f)
		return;
	vc_mif_fd = open("/proc/self/make-it-fail", O_WRONLY);
	if (vc_mif_fd < 0)
		fprintf(stderr, "%s: /proc/self/make-it-fail: %m\n", who);
}

/* Mark (1) or unmark (0) this task; errno is kept for the caller. */
static inline void vc_make_it_fail(int on)
{
	int e = errno;

	if (vc_mif_fd >= 0 && pwrite(vc_mif_fd, on ? "1" : "0", 1, 0) != 1)
		fprintf(stderr, "/proc/self/make-it-fail: %m\n");
	errno = e;
}

#endif
