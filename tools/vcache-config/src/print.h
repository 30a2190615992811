/* SPDX-License-Identifier: GPL-2.0 */
/*
 * print.h - one printer per output format: text (print_text.c) and JSON
 * (print_json.c, schema in vcache-config(8)).  They only read the parsed
 * structures of info.h.
 */
#ifndef VCC_PRINT_H
#define VCC_PRINT_H

#include <stdio.h>

#include "info.h"

struct vcc_printer {
	void (*list)(FILE *f, const struct vcc_cache_info *c, unsigned int n);
	/* @all: text with every parameter and counter (show --all) */
	void (*show)(FILE *f, const struct vcc_cache_info *c, bool all);
	void (*pids)(FILE *f, const struct vcc_pid_info *p);
};

extern const struct vcc_printer vcc_print_text;
extern const struct vcc_printer vcc_print_json;

#endif
