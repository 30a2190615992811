/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util.h - error buffer, exit codes, string helpers of vcache-config.
 */
#ifndef VCC_UTIL_H
#define VCC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The last error, set by the parsers (which never print) and printed by
 * main as "vcache-config: <message>"; its exit code is vcc_err_code.
 */
extern char vcc_errbuf[1024];
extern int vcc_err_code;

/* Set the error message and code; returns -1. */
int vcc_fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same with VCACHE_EXIT_USAGE. */
int vcc_usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exit code for a positive errno from the kernel (VCACHE_EXIT_*). */
int vcc_errno_exit(int err);

/* Copy with truncation, always NUL-terminated. */
void vcc_strlcpy(char *dst, const char *src, size_t size);

/*
 * Human size, binary units: "512 B", "4.0 KiB", "1.5 GiB".  Returns buf.
 */
char *vcc_human(u64 bytes, char *buf, size_t len);

#endif
