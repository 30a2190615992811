/* SPDX-License-Identifier: GPL-2.0 */
/*
 * params.h - the settings a create or set sends: mode, policy and the
 * engine parameters (VCACHE_PARAMS in vcache_nl.h), parsed from KEY=VALUE
 * and from create's options.  No netlink here.
 */
#ifndef VCC_PARAMS_H
#define VCC_PARAMS_H

#include <vcache/vcache_nl.h>

#include "util.h"

#define VCC_NR_P (VCACHE_P_MAX + 1)	/* indexed by VCACHE_P_* */

struct vcc_settings {
	bool has_mode, has_policy;
	u8 mode, policy;
	const char *mode_by, *policy_by;	/* the key that set it */
	bool has[VCC_NR_P];
	u64 v[VCC_NR_P];
	const char *by[VCC_NR_P];
};

/* "dirty_high_pct" for VCACHE_P_DIRTY_HIGH_PCT; NULL if out of range. */
const char *vcc_param_name(int attr);
/* VCACHE_P_* of a name ('-' and '_' alike), or -1. */
int vcc_param_by_name(const char *name);
/* The range the engine accepts (the kernel checks it again). */
void vcc_param_range(int attr, u64 *min, u64 *max);

/*
 * One setting: @key is a parameter name or a friendly key (mode, policy,
 * admit, flush-period, dirty-high, dirty-low, seq-cutoff).  A value set
 * twice, by the same key or two keys, is refused.  0 or -1 (usage error).
 */
int vcc_settings_set(struct vcc_settings *s, const char *key,
		     const char *value);
/* "KEY=VALUE" */
int vcc_settings_parse_kv(struct vcc_settings *s, const char *kv);
/* Checks between values (watermarks); 0 or -1. */
int vcc_settings_check(const struct vcc_settings *s);
/* True if anything is set. */
bool vcc_settings_any(const struct vcc_settings *s);

/* For messages: "dirty_high_pct, dirty_low_pct, ..." (static buffer). */
const char *vcc_param_names(void);

#endif
