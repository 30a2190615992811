// SPDX-License-Identifier: GPL-2.0
/*
 * size.c - parsing of sizes, percentages and durations (see size.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "size.h"

int vcc_parse_u64(const char *s, u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/*
 * A decimal number "I[.F]" times @mult, exact.  *end points after it.
 * Returns 0, -1 (syntax), -2 (overflow), -3 (not whole).
 */
static int scaled(const char *s, u64 mult, u64 *out, const char **end)
{
	u64 ip = 0, fp = 0, fscale = 1;
	const char *p = s;
	int digits = 0;

	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p)) {
		u64 d = (u64)(*p++ - '0');

		if (ip > (UINT64_MAX - d) / 10)
			return -2;
		ip = ip * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p)) {
			if (++digits > 9)
				return -1;
			fp = fp * 10 + (u64)(*p++ - '0');
			fscale *= 10;
		}
	}
	*end = p;
	if (mult && ip > UINT64_MAX / mult)
		return -2;
	ip *= mult;
	if (fp) {
		/* fp * mult / fscale, exact; mult is a power of two <= 2^60 */
		unsigned __int128 f = (unsigned __int128)fp * mult;

		if (f % fscale)
			return -3;
		f /= fscale;
		if (ip > UINT64_MAX - (u64)f)
			return -2;
		ip += (u64)f;
	}
	*out = ip;
	return 0;
}

/* Multiplier of a unit suffix, or 0 if @u is not one. */
static u64 unit_mult(const char *u)
{
	static const char units[] = "kmgtpe";
	const char *k;
	u64 m = 1;

	if (!*u)
		return 1;
	if (!strcasecmp(u, "b"))
		return 1;
	k = strchr(units, tolower((unsigned char)*u));
	if (!k)
		return 0;
	m <<= 10 * (k - units + 1);
	u++;
	if (!*u || !strcasecmp(u, "b") || !strcasecmp(u, "ib"))
		return m;
	return 0;
}

int vcc_parse_size(const char *what, const char *s, u64 *out)
{
	const char *end = s, *num_end;
	u64 mult;
	int rc;

	/* find the unit: everything after the number */
	while (isdigit((unsigned char)*end) || *end == '.')
		end++;
	num_end = end;
	mult = unit_mult(end);
	if (!mult || num_end == s)
		return vcc_usage_err("bad size '%s' for %s: give bytes or a number with a binary unit (4k, 512M, 1.5G, 2TiB; k = 1024)",
				     s, what);
	rc = scaled(s, mult, out, &end);
	if (rc == -2)
		return vcc_usage_err("size '%s' for %s is too large", s, what);
	if (rc == -3)
		return vcc_usage_err("size '%s' for %s is not a whole number of bytes",
				     s, what);
	if (rc || end != num_end)
		return vcc_usage_err("bad size '%s' for %s: give bytes or a number with a binary unit (4k, 512M, 1.5G, 2TiB; k = 1024)",
				     s, what);
	return 0;
}

int vcc_parse_pct_or_size(const char *what, const char *s, bool *is_pct,
			  u64 *out)
{
	size_t n = strlen(s);
	char num[32];
	u64 v;

	if (n && s[n - 1] == '%') {
		if (n >= sizeof(num))
			goto bad_pct;
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (!isdigit((unsigned char)num[0]) || vcc_parse_u64(num, &v) ||
		    v > 100)
			goto bad_pct;
		*is_pct = true;
		*out = v;
		return 0;
	}
	if (n && strspn(s, "0123456789") == n) {
		if (vcc_parse_u64(s, &v) || v > 100)
			return vcc_usage_err("%s %s is ambiguous: a plain number is a percentage (0..100, or write 60%%); for bytes give a unit (%sB, 512M, 8G)",
					     what, s, s);
		*is_pct = true;
		*out = v;
		return 0;
	}
	if (vcc_parse_size(what, s, &v))
		return -1;
	if (!v)
		return vcc_usage_err("%s %s: a size of 0 would mean 'use the percentage'; give a percentage (0%%..100%%) instead",
				     what, s);
	*is_pct = false;
	*out = v;
	return 0;
bad_pct:
	return vcc_usage_err("bad percentage '%s' for %s: a whole number from 0%% to 100%%",
			     s, what);
}

int vcc_parse_duration_ms(const char *what, const char *s, u64 *ms)
{
	static const struct {
		const char *u;
		u64 ms;
	} units[] = { { "", 1000 }, { "s", 1000 }, { "ms", 1 },
		      { "m", 60000 }, { "min", 60000 }, { "h", 3600000 } };
	const char *end, *e2 = NULL;
	size_t i;
	int rc;

	if (!strcmp(s, "off")) {
		*ms = 0;
		return 0;
	}
	end = s;
	while (isdigit((unsigned char)*end) || *end == '.')
		end++;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].u))
			continue;
		rc = scaled(s, units[i].ms, ms, &e2);
		if (rc == -3)
			return vcc_usage_err("%s %s is not a whole number of milliseconds",
					     what, s);
		if (!rc && e2 == end)
			return 0;
		break;
	}
	return vcc_usage_err("bad duration '%s' for %s: seconds, or a number with a unit ms, s, m or h (30, 500ms, 2m), or off",
			     s, what);
}
