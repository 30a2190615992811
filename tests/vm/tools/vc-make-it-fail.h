/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Under `make check-debug FAULTS=1` ($VC_FAULTS, tests/vm/guest/init.sh) a
 * test program whose own calls are the module's path under test marks
 * itself for failslab's task filter once it is set up: its own requests
 * meet the failures, not the shell around it, nor its own start (the
 * dynamic loader's mappings fail under failslab too).
 */
#ifndef VC_MAKE_IT_FAIL_H
#define VC_MAKE_IT_FAIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void vc_make_it_fail(const char *who)
{
	const char *f = getenv("VC_FAULTS");
	int fd;

	if (!f || !*f)
		return;
	fd = open("/proc/self/make-it-fail", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		fprintf(stderr, "%s: /proc/self/make-it-fail: %m\n", who);
	if (fd >= 0)
		close(fd);
}

#endif
