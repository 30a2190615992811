// SPDX-License-Identifier: GPL-2.0
/*
 * nl_dump.c - a request decoded on one line, for VCACHE_NL_DRYRUN (nl.h):
 * "SET name=db mode=1 params={dirty_high_pct=50 dirty_high_bytes=0}".
 * Devices print as major:minor; other integers in decimal.
 */
#include <ctype.h>
#include <string.h>
#include <netlink/msg.h>

#include "info.h"
#include "nl.h"
#include "params.h"

enum kind { K_STR = 1, K_INT, K_DEV, K_NEST };

struct field {
	const char *name;
	enum kind kind;
	const struct field *nest;	/* K_NEST: names of the inner types */
	int nest_max;
};

static const struct field backing_fields[VCACHE_B_MAX + 1] = {
	[VCACHE_B_DEV] = { "dev", K_DEV, NULL, 0 },
	[VCACHE_B_IDENT] = { "ident", K_STR, NULL, 0 },
	[VCACHE_B_DEVNAME] = { "devname", K_STR, NULL, 0 },
	[VCACHE_B_DISK] = { "disk", K_STR, NULL, 0 },
	[VCACHE_B_ID] = { "id", K_INT, NULL, 0 },
	[VCACHE_B_STATE] = { "state", K_INT, NULL, 0 },
	[VCACHE_B_SIZE] = { "size", K_INT, NULL, 0 },
	[VCACHE_B_DIRTY_BYTES] = { "dirty_bytes", K_INT, NULL, 0 },
	[VCACHE_B_BACKING_DISK] = { "backing_disk", K_STR, NULL, 0 },
};

static const struct field pid_fields[VCACHE_A_MAX + 1] = {
	[VCACHE_A_PID] = { "pid", K_INT, NULL, 0 },
};

static const struct field top_fields[VCACHE_A_MAX + 1] = {
	[VCACHE_A_NAME] = { "name", K_STR, NULL, 0 },
	[VCACHE_A_CACHE_DEV] = { "cache_dev", K_DEV, NULL, 0 },
	[VCACHE_A_CACHE_SIZE] = { "cache_size", K_INT, NULL, 0 },
	[VCACHE_A_BLOCK_SIZE] = { "block_size", K_INT, NULL, 0 },
	[VCACHE_A_MODE] = { "mode", K_INT, NULL, 0 },
	[VCACHE_A_POLICY] = { "policy", K_INT, NULL, 0 },
	[VCACHE_A_PARAMS] = { "params", K_NEST, NULL, -1 },	/* ABI names */
	[VCACHE_A_FLAGS] = { "flags", K_INT, NULL, 0 },
	[VCACHE_A_BACKING] = { "backing", K_NEST, backing_fields, VCACHE_B_MAX },
	[VCACHE_A_STATS] = { "stats", K_NEST, NULL, -2 },
	[VCACHE_A_PID_LIST] = { "pid_list", K_INT, NULL, 0 },
	[VCACHE_A_PID_OP] = { "pid_op", K_INT, NULL, 0 },
	[VCACHE_A_PIDS] = { "pids", K_NEST, pid_fields, VCACHE_A_MAX },
	[VCACHE_A_PID_DEFAULT] = { "pid_default", K_INT, NULL, 0 },
	[VCACHE_A_CGROUP_FD] = { "cgroup_fd", K_INT, NULL, 0 },
	[VCACHE_A_CGROUP_ID] = { "cgroup_id", K_INT, NULL, 0 },
};

static const char *const cmd_names[] = {
	[VCACHE_CMD_CREATE] = "CREATE", [VCACHE_CMD_DELETE] = "DELETE",
	[VCACHE_CMD_ATTACH] = "ATTACH", [VCACHE_CMD_DETACH] = "DETACH",
	[VCACHE_CMD_FLUSH] = "FLUSH", [VCACHE_CMD_FLUSH_CANCEL] = "FLUSH_CANCEL",
	[VCACHE_CMD_SET] = "SET", [VCACHE_CMD_GET] = "GET",
	[VCACHE_CMD_PID_SET] = "PID_SET", [VCACHE_CMD_PID_GET] = "PID_GET",
	[VCACHE_CMD_HOTPLUG] = "HOTPLUG",
	[VCACHE_CMD_RESET_STATS] = "RESET_STATS",
	[VCACHE_CMD_LAT_GET] = "LAT_GET",
	[VCACHE_CMD_REPAIR_TABLE] = "REPAIR_TABLE",
	[VCACHE_CMD_SALVAGE] = "SALVAGE",
};

static void print_attrs(FILE *f, struct nlattr *attrs, int len,
			const struct field *t, int max)
{
	struct nlattr *a;
	char dev[32];
	int rem, first = 1;
	u64 v = 0;

	nla_for_each_attr(a, attrs, len, rem) {
		int type = nla_type(a);
		const struct field *fd = t && type >= 0 && type <= max ?
					 &t[type] : NULL;
		const char *name = fd ? fd->name : NULL;

		fprintf(f, "%s", first ? "" : " ");
		first = 0;
		if (max < 0) {	/* params, stats: names from the ABI, u64 */
			name = max == -1 ? vcc_param_name(type) :
					   vcc_stat_name(type);
			memcpy(&v, nla_data(a), nla_len(a) == 8 ? 8 : 0);
			fprintf(f, "%s=%llu", name ? name : "?",
				(unsigned long long)v);
			continue;
		}
		if (!name) {
			fprintf(f, "attr%d(len %d)", type, nla_len(a));
			continue;
		}
		switch (fd->kind) {
		case K_STR:
			fprintf(f, "%s=%.*s", name, nla_len(a), (char *)nla_data(a));
			break;
		case K_NEST:
			fprintf(f, "%s={", name);
			print_attrs(f, nla_data(a), nla_len(a), fd->nest,
				    fd->nest_max);
			fprintf(f, "}");
			break;
		default:
			v = 0;
			if (nla_len(a) == 1)
				v = nla_get_u8(a);
			else if (nla_len(a) == 4)
				v = nla_get_u32(a);
			else if (nla_len(a) == 8)
				v = nla_get_u64(a);
			if (fd->kind == K_DEV)
				fprintf(f, "%s=%s", name, vcc_devstr(v, dev, sizeof(dev)));
			else
				fprintf(f, "%s=%llu/u%d", name,
					(unsigned long long)v, nla_len(a) * 8);
		}
	}
}

void vcc_nl_print_msg(FILE *f, struct nl_msg *msg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *g = nlmsg_data(nlh);
	int cmd = g->cmd;

	fprintf(f, "%s", cmd > 0 && cmd < (int)ARRAY_SIZE(cmd_names) &&
		cmd_names[cmd] ? cmd_names[cmd] : "?");
	if (genlmsg_attrlen(g, 0) > 0) {
		fprintf(f, " ");
		print_attrs(f, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0),
			    top_fields, VCACHE_A_MAX);
	}
	fprintf(f, "\n");
	fflush(f);
}
