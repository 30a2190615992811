// SPDX-License-Identifier: GPL-2.0
/* util.c - number and size parsing, human-readable formatting. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

int vs_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || *end || *v < min || *v > max)
		return -1;
	return 0;
}

/*
 * One size parser for every tool: vcache-config's (tools/vcache-config/
 * src/size.c, compiled in here), its message dropped: the callers say
 * which option was wrong.
 */
int vcc_parse_size(const char *what, const char *s, uint64_t *out);

int vs_parse_size(const char *s, uint64_t *bytes)
{
	return vcc_parse_size("size", s, bytes) ? -1 : 0;
}

const char *vs_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTP";
	double v = (double)bytes;
	int u = -1;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	else if (v == floor(v))
		snprintf(buf, len, "%.0f%c", v, units[u]);
	else
		snprintf(buf, len, "%.*f%c", v < 10 ? 2 : 1, v, units[u]);
	return buf;
}

const char *vs_fmt_ns(uint64_t ns, char *buf, size_t len)
{
	double s = (double)ns / 1e9;

	if (s < 1)
		snprintf(buf, len, "%.0fms", s * 1e3);
	else if (s < 600)
		snprintf(buf, len, "%.1fs", s);
	else if (s < 36000)
		snprintf(buf, len, "%.1fm", s / 60);
	else
		snprintf(buf, len, "%.1fh", s / 3600);
	return buf;
}
