/* SPDX-License-Identifier: GPL-2.0 */
/*
 * job.h - run steps in child processes and wait for them with a limit.
 *
 * hotplug --all offers every block device of the system; a disk that does
 * not answer (a dead SAN path, a suspended device-mapper table) blocks the
 * process that reads it, in the kernel, beyond any signal.  Each device's
 * step runs in a child instead: the caller waits for it a while, goes on
 * with the other devices, and collects the slow one at its end.
 */
#ifndef VCC_JOB_H
#define VCC_JOB_H

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

struct vcc_job {
	pid_t pid;
	int fd;			/* the child's result; -1 once read */
	long long start_ms;	/* vcc_now_ms() at its start */
	int r;			/* the step's return value, once done */
	int code;		/* its vcc_err_code if r < 0 */
	char msg[sizeof(vcc_errbuf)];	/* its vcc_errbuf if r < 0 */
	bool late;		/* for the caller: said not to answer */
	char what[300];		/* for messages: the device */
	int tag;		/* the caller's */
};

/* CLOCK_MONOTONIC in milliseconds. */
long long vcc_now_ms(void);

/*
 * Start @fn(@arg) in a child (stdout and stderr flushed first, shared;
 * @fn returns < 0 with vcc_errbuf set on failure).  0, or -1 with errno
 * set when no child could be made (nothing ran).
 */
int vcc_job_start(struct vcc_job *j, int (*fn)(void *arg), void *arg);

/*
 * Wait up to @ms milliseconds (-1: for ever) for @j: 1 done (j->r, and
 * j->code/j->msg for a failure; a child that ended without a result is a
 * failure), 0 still running.
 */
int vcc_job_wait(struct vcc_job *j, int ms);

/*
 * The same for the first of @n jobs to end: its index, or -1 if none
 * ended within @ms.
 */
int vcc_job_wait_any(struct vcc_job *jobs, unsigned int n, int ms);

#endif
