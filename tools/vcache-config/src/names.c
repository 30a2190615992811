// SPDX-License-Identifier: GPL-2.0
/*
 * names.c - words for the ABI's enums.
 */
#include <stdio.h>
#include <string.h>

#include <vcache/vcache_nl.h>

#include "names.h"

const struct vcc_name vcc_modes[] = {
	{ "wb", VCACHE_MODE_WB }, { "wt", VCACHE_MODE_WT },
	{ "wa", VCACHE_MODE_WA }, { "pt", VCACHE_MODE_PT },
	{ "write-back", VCACHE_MODE_WB }, { "writeback", VCACHE_MODE_WB },
	{ "write-through", VCACHE_MODE_WT },
	{ "writethrough", VCACHE_MODE_WT },
	{ "write-around", VCACHE_MODE_WA },
	{ "writearound", VCACHE_MODE_WA },
	{ "pass-through", VCACHE_MODE_PT },
	{ "passthrough", VCACHE_MODE_PT },
	{ NULL, 0 }
};

const struct vcc_name vcc_policies[] = {
	{ "lru", VCACHE_POLICY_LRU }, { "fifo", VCACHE_POLICY_FIFO },
	{ "s3fifo", VCACHE_POLICY_S3FIFO }, { "tinylfu", VCACHE_POLICY_TINYLFU },
	{ NULL, 0 }
};

const struct vcc_name vcc_states[] = {
	{ "running", VCACHE_STATE_RUNNING }, { "waiting", VCACHE_STATE_WAITING },
	{ "degraded", VCACHE_STATE_DEGRADED }, { "failed", VCACHE_STATE_FAILED },
	{ "stopping", VCACHE_STATE_STOPPING },
	{ NULL, 0 }
};

const struct vcc_name vcc_bstates[] = {
	{ "attached", VCACHE_BS_ATTACHED }, { "waiting", VCACHE_BS_WAITING },
	{ "detached-dirty", VCACHE_BS_DETACHED_DIRTY },
	{ NULL, 0 }
};

const struct vcc_name vcc_pid_defaults[] = {
	{ "cache-all", VCACHE_PID_CACHE_ALL },
	{ "cache-none", VCACHE_PID_CACHE_NONE },
	{ NULL, 0 }
};

const struct vcc_name vcc_pid_lists[] = {
	{ "allow", VCACHE_PID_ALLOW }, { "deny", VCACHE_PID_DENY },
	{ "cgroup-allow", VCACHE_PID_CG_ALLOW },
	{ "cgroup-deny", VCACHE_PID_CG_DENY },
	{ NULL, 0 }
};

int vcc_name_lookup(const struct vcc_name *t, const char *s)
{
	for (; t->name; t++)
		if (!strcmp(t->name, s))
			return t->val;
	return -1;
}

const char *vcc_name_of(const struct vcc_name *t, int val)
{
	static char buf[4][24];
	static int i;

	for (; t->name; t++)
		if (t->val == val)
			return t->name;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "unknown-%d", val);
	return buf[i];
}

const char *vcc_name_list(const struct vcc_name *t)
{
	static char buf[256];
	const struct vcc_name *p;
	size_t n = 0;

	buf[0] = '\0';
	for (p = t; p->name; p++) {
		if (vcc_name_of(t, p->val) != p->name)
			continue;	/* an alias */
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "",
			      p->name);
		if (n >= sizeof(buf))
			break;
	}
	return buf;
}
