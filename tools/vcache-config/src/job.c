// SPDX-License-Identifier: GPL-2.0
/*
 * job.c - one step in a child process, waited for with a limit (job.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vcache/vcache_nl.h>

#include "job.h"

/* What a child sends back: its return value, and its error if any. */
struct job_result {
	int r;
	int code;
	char msg[sizeof(vcc_errbuf)];
};

static void job_done(struct vcc_job *j, int r)
{
	j->r = r;
	if (r < 0) {
		j->code = vcc_err_code;
		vcc_strlcpy(j->msg, vcc_errbuf, sizeof(j->msg));
	}
}

int vcc_job_start(struct vcc_job *j, int (*fn)(void *arg), void *arg)
{
	struct job_result res;
	int p[2], e;

	j->fd = -1;
	j->r = 0;
	j->code = 0;
	j->msg[0] = '\0';
	j->late = false;
	j->start_ms = vcc_now_ms();
	fflush(stdout);
	fflush(stderr);
	if (pipe2(p, O_CLOEXEC))
		return -1;
	j->pid = fork();
	if (j->pid < 0) {
		e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (j->pid == 0) {
		ssize_t n;

		close(p[0]);
		memset(&res, 0, sizeof(res));
		res.r = fn(arg);
		if (res.r < 0) {
			res.code = vcc_err_code;
			vcc_strlcpy(res.msg, vcc_errbuf, sizeof(res.msg));
		}
		fflush(stdout);
		fflush(stderr);
		/* smaller than PIPE_BUF: one write, read in one */
		n = write(p[1], &res, sizeof(res));
		_exit(n == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(p[1]);
	j->fd = p[0];
	return 0;
}

long long vcc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* @j's child has answered (or ended): its result, then reap it. */
static void job_collect(struct vcc_job *j)
{
	struct job_result res;
	ssize_t n;

	do
		n = read(j->fd, &res, sizeof(res));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(res)) {
		j->r = res.r;
		j->code = res.code;
		res.msg[sizeof(res.msg) - 1] = '\0';
		vcc_strlcpy(j->msg, res.msg, sizeof(j->msg));
	} else {
		j->r = -1;
		j->code = VCACHE_EXIT_FAIL;
		snprintf(j->msg, sizeof(j->msg),
			 "%s: its worker ended without a result", j->what);
	}
	close(j->fd);
	j->fd = -1;
	while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int vcc_job_wait_any(struct vcc_job *jobs, unsigned int n, int ms)
{
	long long end = ms < 0 ? 0 : vcc_now_ms() + ms;
	struct pollfd pfd[64];
	unsigned int i, k;

	for (;;) {
		int left = ms < 0 ? -1 : (int)(end - vcc_now_ms());
		int rc;

		if (ms >= 0 && left < 0)
			left = 0;
		for (i = k = 0; i < n && k < ARRAY_SIZE(pfd); i++) {
			if (jobs[i].fd < 0)
				return (int)i;	/* done already */
			pfd[k].fd = jobs[i].fd;
			pfd[k].events = POLLIN;
			k++;
		}
		if (!k)
			return -1;
		rc = poll(pfd, k, left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			/* cannot happen with valid fds: the first one fails,
			 * its child let be (reaped at exit) */
			vcc_fail(VCACHE_EXIT_FAIL, "%s: cannot wait for its worker: %s",
				 jobs[0].what, strerror(errno));
			job_done(&jobs[0], -1);
			close(jobs[0].fd);
			jobs[0].fd = -1;
			waitpid(jobs[0].pid, NULL, WNOHANG);
			return 0;
		}
		if (rc == 0)
			return -1;
		for (i = 0; i < k; i++)
			if (pfd[i].revents) {
				job_collect(&jobs[i]);
				return (int)i;
			}
	}
}

int vcc_job_wait(struct vcc_job *j, int ms)
{
	return vcc_job_wait_any(j, 1, ms) == 0;	/* done already: 0 too */
}
