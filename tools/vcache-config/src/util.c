// SPDX-License-Identifier: GPL-2.0
/*
 * util.c - error buffer, errno to exit code, string helpers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vcache/vcache_nl.h>

#include "util.h"

char vcc_errbuf[1024];
int vcc_err_code;

static int vfail(int code, const char *fmt, va_list ap)
{
	vsnprintf(vcc_errbuf, sizeof(vcc_errbuf), fmt, ap);
	vcc_err_code = code;
	return -1;
}

int vcc_fail(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(code, fmt, ap);
	va_end(ap);
	return -1;
}

int vcc_usage_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(VCACHE_EXIT_USAGE, fmt, ap);
	va_end(ap);
	return -1;
}

int vcc_errno_exit(int err)
{
	switch (err) {
	case 0:
		return VCACHE_EXIT_OK;
	case EPERM:
	case EACCES:
		return VCACHE_EXIT_PERM;
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return VCACHE_EXIT_NOENT;
	case EBUSY:
		return VCACHE_EXIT_BUSY;
	case EINVAL:
	case ERANGE:
		return VCACHE_EXIT_USAGE;
	case EINTR:
		return VCACHE_EXIT_INTR;
	default:
		return VCACHE_EXIT_FAIL;
	}
}

void vcc_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (!size)
		return;
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

char *vcc_human(u64 bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB",
					    "PiB", "EiB" };
	double v = (double)bytes;
	int i = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}
