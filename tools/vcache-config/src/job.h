/* SPDX-License-Identifier: GPL-2.0 */
/*
 * job.h - run one step in a child process and wait for it with a limit.
 *
 * hotplug --all offers every block device of the system in turn; a disk
 * that does not answer (a dead SAN path, a suspended device-mapper table)
 * blocks the process that reads it, in the kernel, beyond any signal.
 * Each device's step runs in a child instead: the loop waits for it a
 * while, then goes on with the other devices and collects the slow one at
 * its end.  Nothing is given up: a slow disk's cache still loads when it
 * answers.
 */
#ifndef VCC_JOB_H
#define VCC_JOB_H

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"

struct vcc_job {
	pid_t pid;		/* 0: ran in this process (no fork) */
	int fd;			/* the child's result, -1 once read */
	int r;			/* the step's return value, once done */
	int code;		/* its vcc_err_code if r < 0 */
	char msg[sizeof(vcc_errbuf)];	/* its vcc_errbuf if r < 0 */
	bool late;		/* waited for once without an answer */
	char what[300];		/* for messages: the device */
	int tag;		/* the caller's */
};

/*
 * Start @fn(@arg) in a child (its stdout and stderr are this process's,
 * flushed first; @fn returns < 0 with vcc_errbuf set on failure).  If
 * fork fails the step runs here, now, and is done at once.
 */
void vcc_job_start(struct vcc_job *j, int (*fn)(void *arg), void *arg);

/*
 * Wait up to @ms milliseconds (-1: for ever) for @j: 1 done (j->r, and
 * j->code/j->msg for a failure; a child that ended without a result is a
 * failure), 0 still running.
 */
int vcc_job_wait(struct vcc_job *j, int ms);

#endif
