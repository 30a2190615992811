/* SPDX-License-Identifier: GPL-2.0 */
/*
 * names.h - the ABI's enums as words (command line, text and JSON output).
 */
#ifndef VCC_NAMES_H
#define VCC_NAMES_H

struct vcc_name {
	const char *name;
	int val;
};

/* Tables end with { NULL, 0 }; the first entry of a value is its name. */
extern const struct vcc_name vcc_modes[];
extern const struct vcc_name vcc_policies[];
extern const struct vcc_name vcc_states[];
extern const struct vcc_name vcc_bstates[];
extern const struct vcc_name vcc_pid_defaults[];
extern const struct vcc_name vcc_pid_lists[];

/* The value of @s in @t, or -1. */
int vcc_name_lookup(const struct vcc_name *t, const char *s);
/* The name of @val in @t; "unknown-N" (in a static buffer) if none. */
const char *vcc_name_of(const struct vcc_name *t, int val);
/* "a, b, c": the primary names of @t, for messages (static buffer). */
const char *vcc_name_list(const struct vcc_name *t);

#endif
