/* SPDX-License-Identifier: GPL-2.0 */
/* util.h - number and size parsing, human-readable formatting. */
#ifndef VS_UTIL_H
#define VS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "4096", "4K", "1.5G", "64KiB", "2TB" (binary units); 0 or -1. */
int vs_parse_size(const char *s, uint64_t *bytes);
/* A plain unsigned decimal integer in [min, max]; 0 or -1. */
int vs_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *v);
/* "1.5G" style; buf of at least 16 bytes. */
const char *vs_fmt_size(uint64_t bytes, char *buf, size_t len);
/* Seconds with a unit suitable for ages: "0.25s", "31.0s", "2.1h". */
const char *vs_fmt_ns(uint64_t ns, char *buf, size_t len);

#endif
