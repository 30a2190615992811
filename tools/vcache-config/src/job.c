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

void vcc_job_start(struct vcc_job *j, int (*fn)(void *arg), void *arg)
{
	struct job_result res;
	int p[2];

	j->pid = 0;
	j->fd = -1;
	j->r = 0;
	j->code = 0;
	j->msg[0] = '\0';
	j->late = false;
	fflush(stdout);
	fflush(stderr);
	if (pipe2(p, O_CLOEXEC) == 0) {
		j->pid = fork();
		if (j->pid > 0) {
			close(p[1]);
			j->fd = p[0];
			return;
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
		close(p[0]);
		close(p[1]);
		j->pid = 0;
	}
	/* no child: this process takes the wait itself */
	job_done(j, fn(arg));
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int vcc_job_wait(struct vcc_job *j, int ms)
{
	long long end = ms < 0 ? 0 : now_ms() + ms;
	struct job_result res;
	struct pollfd pfd;
	ssize_t n;

	if (j->fd < 0)
		return 1;
	pfd.fd = j->fd;
	pfd.events = POLLIN;
	for (;;) {
		int left = ms < 0 ? -1 : (int)(end - now_ms());
		int rc;

		if (ms >= 0 && left < 0)
			left = 0;
		rc = poll(&pfd, 1, left);
		if (rc > 0)
			break;
		if (rc == 0)
			return 0;
		if (errno != EINTR) {
			vcc_fail(VCACHE_EXIT_FAIL, "%s: cannot wait for its worker: %s",
				 j->what, strerror(errno));
			job_done(j, -1);
			goto out;
		}
	}
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
out:
	close(j->fd);
	j->fd = -1;
	while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 1;
}
