// SPDX-License-Identifier: GPL-2.0
/*
 * params.c - KEY=VALUE settings into a struct vcc_settings (params.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "params.h"
#include "size.h"

#define P_NAME_(e, n) [VCACHE_P_##e] = #n,
static const char *const param_names[VCC_NR_P] = {
	VCACHE_PARAMS(P_NAME_)
};
#undef P_NAME_

/*
 * The engine's ranges (cache/vc_cache.c); the kernel checks them again,
 * this only gives an early, clear message.  A parameter appended to the
 * ABI without an entry here is accepted as any u64.
 */
static const struct {
	u64 min, max;
} param_range[VCC_NR_P] = {
	[VCACHE_P_DIRTY_HIGH_PCT]	= { 0, 100 },
	[VCACHE_P_DIRTY_LOW_PCT]	= { 0, 100 },
	[VCACHE_P_DIRTY_HIGH_BYTES]	= { 0, UINT64_MAX },
	[VCACHE_P_DIRTY_LOW_BYTES]	= { 0, UINT64_MAX },
	[VCACHE_P_MAX_DIRTY_AGE_MS]	= { 0, 86400000 },
	[VCACHE_P_IDLE_MS]		= { 0, 86400000 },
	[VCACHE_P_WB_MAX_INFLIGHT]	= { 1, 1024 },
	[VCACHE_P_WB_MAX_IO_KIB]	= { 4, 4096 },
	[VCACHE_P_CLEAN_INTERVAL_MS]	= { 1, 3600000 },
	[VCACHE_P_SEQ_ENABLE]		= { 0, 1 },
	[VCACHE_P_SEQ_THRESHOLD_KIB]	= { 1, 4ULL << 30 },
	[VCACHE_P_ADMISSION]		= { 0, 1 },
	[VCACHE_P_ADMIT_FULL_PCT]	= { 0, 100 },
	[VCACHE_P_PID_MODE]		= { 0, 1 },
	[VCACHE_P_COMMIT_MS]		= { 0, 10000 },
};

const char *vcc_param_name(int attr)
{
	return attr > 0 && attr < VCC_NR_P ? param_names[attr] : NULL;
}

/* @a equals @b, '-' and '_' alike. */
static bool key_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;

		if (x != y)
			return false;
	}
	return !*a && !*b;
}

int vcc_param_by_name(const char *name)
{
	int i;

	for (i = 1; i < VCC_NR_P; i++)
		if (param_names[i] && key_eq(name, param_names[i]))
			return i;
	return -1;
}

void vcc_param_range(int attr, u64 *min, u64 *max)
{
	*min = 0;
	*max = UINT64_MAX;
	if (attr > 0 && attr < VCC_NR_P && param_range[attr].max) {
		*min = param_range[attr].min;
		*max = param_range[attr].max;
	}
}

const char *vcc_param_names(void)
{
	static char buf[512];
	size_t n = 0;
	int i;

	for (i = 1; i < VCC_NR_P && n < sizeof(buf); i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", i > 1 ? ", " : "",
			      param_names[i]);
	return buf;
}

/* Store one parameter set by @key, refusing a second setter. */
static int put(struct vcc_settings *s, const char *key, int p, u64 v)
{
	u64 min, max;

	if (s->has[p]) {
		if (!strcmp(s->by[p], key))
			return vcc_usage_err("%s is given twice", key);
		return vcc_usage_err("%s and %s both set %s: give one", s->by[p],
				     key, param_names[p]);
	}
	vcc_param_range(p, &min, &max);
	if (v < min || v > max)
		return vcc_usage_err("%s=%llu is out of range: %s is %llu..%llu",
				     key, (unsigned long long)v, param_names[p],
				     (unsigned long long)min,
				     (unsigned long long)max);
	s->has[p] = true;
	s->v[p] = v;
	s->by[p] = key;
	return 0;
}

static int set_enum(const char *key, const char *value,
		    const struct vcc_name *t, bool *has, u8 *dst,
		    const char **by)
{
	int v = vcc_name_lookup(t, value);

	if (*has && !strcmp(*by, key))
		return vcc_usage_err("%s is given twice", key);
	if (*has)
		return vcc_usage_err("%s and %s both set the %s: give one", *by,
				     key, key);
	if (v < 0)
		return vcc_usage_err("bad %s '%s': one of %s", key, value,
				     vcc_name_list(t));
	*has = true;
	*dst = (u8)v;
	*by = key;
	return 0;
}

/* dirty-high / dirty-low: a percentage, or bytes (then pct is unused). */
static int set_dirty(struct vcc_settings *s, const char *key,
		     const char *value, int pct_p, int bytes_p)
{
	bool is_pct;
	u64 v;

	if (vcc_parse_pct_or_size(key, value, &is_pct, &v))
		return -1;
	if (is_pct)
		return put(s, key, pct_p, v) || put(s, key, bytes_p, 0) ? -1 : 0;
	return put(s, key, bytes_p, v);
}

static int set_seq_cutoff(struct vcc_settings *s, const char *key,
			  const char *value)
{
	u64 v;

	if (!strcmp(value, "off"))
		return put(s, key, VCACHE_P_SEQ_ENABLE, 0);
	if (vcc_parse_size(key, value, &v))
		return -1;
	if (!v || v % 1024)
		return vcc_usage_err("%s %s: a whole number of KiB, at least 1k (or off)",
				     key, value);
	if (put(s, key, VCACHE_P_SEQ_ENABLE, 1))
		return -1;
	return put(s, key, VCACHE_P_SEQ_THRESHOLD_KIB, v / 1024);
}

static int set_raw(struct vcc_settings *s, const char *key, const char *value,
		   int p)
{
	size_t n = strlen(param_names[p]);
	u64 v;

	/* byte counts take a size ("8G"), everything else a plain integer */
	if (n > 6 && !strcmp(param_names[p] + n - 6, "_bytes")) {
		if (vcc_parse_size(key, value, &v))
			return -1;
	} else if (vcc_parse_u64(value, &v)) {
		return vcc_usage_err("bad value '%s' for %s: a whole number", value,
				     key);
	}
	return put(s, key, p, v);
}

int vcc_settings_set(struct vcc_settings *s, const char *key,
		     const char *value)
{
	u64 v;
	int p;

	if (!*value)
		return vcc_usage_err("%s= needs a value", key);
	if (key_eq(key, "mode"))
		return set_enum("mode", value, vcc_modes, &s->has_mode, &s->mode,
				&s->mode_by);
	if (key_eq(key, "policy"))
		return set_enum("policy", value, vcc_policies, &s->has_policy,
				&s->policy, &s->policy_by);
	if (key_eq(key, "admit")) {
		if (strcmp(value, "on") && strcmp(value, "off"))
			return vcc_usage_err("bad %s '%s': on (cache a read miss only on its second miss when nearly full) or off (cache every miss)",
					     key, value);
		return put(s, key, VCACHE_P_ADMISSION, !strcmp(value, "on"));
	}
	if (key_eq(key, "flush-period")) {
		if (vcc_parse_duration_ms(key, value, &v))
			return -1;
		return put(s, key, VCACHE_P_MAX_DIRTY_AGE_MS, v);
	}
	if (key_eq(key, "dirty-high"))
		return set_dirty(s, key, value, VCACHE_P_DIRTY_HIGH_PCT,
				 VCACHE_P_DIRTY_HIGH_BYTES);
	if (key_eq(key, "dirty-low"))
		return set_dirty(s, key, value, VCACHE_P_DIRTY_LOW_PCT,
				 VCACHE_P_DIRTY_LOW_BYTES);
	if (key_eq(key, "seq-cutoff"))
		return set_seq_cutoff(s, key, value);
	p = vcc_param_by_name(key);
	if (p < 0)
		return vcc_usage_err("unknown key '%s': mode, policy, admit, flush-period, dirty-high, dirty-low, seq-cutoff or a parameter (%s)",
				     key, vcc_param_names());
	return set_raw(s, key, value, p);
}

int vcc_settings_parse_kv(struct vcc_settings *s, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char *key;

	if (!eq || eq == kv)
		return vcc_usage_err("'%s' is not KEY=VALUE", kv);
	/* the key lives as long as the settings name it (a short-lived tool) */
	key = strndup(kv, (size_t)(eq - kv));
	if (!key)
		return vcc_fail(1, "out of memory");
	return vcc_settings_set(s, key, eq + 1);
}

int vcc_settings_check(const struct vcc_settings *s)
{
	const int hp = VCACHE_P_DIRTY_HIGH_PCT, lp = VCACHE_P_DIRTY_LOW_PCT;
	const int hb = VCACHE_P_DIRTY_HIGH_BYTES, lb = VCACHE_P_DIRTY_LOW_BYTES;

	if (s->has[hp] && s->has[lp] && s->v[lp] > s->v[hp])
		return vcc_usage_err("the low dirty watermark (%s: %llu%%) is above the high one (%s: %llu%%)",
				     s->by[lp], (unsigned long long)s->v[lp],
				     s->by[hp], (unsigned long long)s->v[hp]);
	if (s->has[hb] && s->has[lb] && s->v[hb] && s->v[lb] > s->v[hb])
		return vcc_usage_err("the low dirty watermark (%s: %llu bytes) is above the high one (%s: %llu bytes)",
				     s->by[lb], (unsigned long long)s->v[lb],
				     s->by[hb], (unsigned long long)s->v[hb]);
	return 0;
}

bool vcc_settings_any(const struct vcc_settings *s)
{
	int i;

	if (s->has_mode || s->has_policy)
		return true;
	for (i = 1; i < VCC_NR_P; i++)
		if (s->has[i])
			return true;
	return false;
}
