/* SPDX-License-Identifier: GPL-2.0 */
/*
 * size.h - sizes, percentages and durations on the command line.
 *
 * Size: a decimal number with an optional binary unit: k, m, g, t, p, e
 * (any case, optionally followed by "iB" or "B"), k = 1024.  A fraction is
 * allowed when the result is a whole number of bytes ("1.5G", not "1.5").
 * A plain number is bytes; "B" alone is bytes too.
 */
#ifndef VCC_SIZE_H
#define VCC_SIZE_H

#include "util.h"

/* 0, or -1 with a usage error naming @what (e.g. "--size"). */
int vcc_parse_size(const char *what, const char *s, u64 *out);

/*
 * --dirty-high / --dirty-low: "60%" or a plain integer up to 100 is a
 * percentage (*is_pct = true); a size with a unit ("8G", "512MiB",
 * "4096B") is bytes (*is_pct = false, > 0).  A plain number above 100 is
 * refused as ambiguous.
 */
int vcc_parse_pct_or_size(const char *what, const char *s, bool *is_pct,
			  u64 *out);

/*
 * A duration: a number with an optional unit ms, s, m or h (no unit:
 * seconds); "off" is 0.  Result in milliseconds, whole.
 */
int vcc_parse_duration_ms(const char *what, const char *s, u64 *ms);

/* Unsigned decimal (or 0x hex) integer, whole string; 0 or -1 (no message). */
int vcc_parse_u64(const char *s, u64 *out);

#endif
