/* SPDX-License-Identifier: GPL-2.0 */
/*
 * args.h - the command line of every command, parsed and checked into a
 * struct vcc_args before anything talks to the kernel.  No netlink here.
 */
#ifndef VCC_ARGS_H
#define VCC_ARGS_H

#include "ident.h"
#include "params.h"

enum vcc_cmd {
	VCC_CREATE, VCC_ATTACH, VCC_DETACH, VCC_DELETE, VCC_FLUSH, VCC_SET,
	VCC_PID, VCC_LIST, VCC_SHOW, VCC_HOTPLUG, VCC_IDENT, VCC_RESET_STATS,
	VCC_CARDS, VCC_REPAIR_TABLE, VCC_SALVAGE,
	VCC_NR_CMDS
};

/* pid sub-commands */
enum vcc_pid_cmd { VCC_PID_CHANGE, VCC_PID_CLEAR_ALL, VCC_PID_LIST_CMD,
		   VCC_PID_DEFAULT_CMD };

struct vcc_args {
	enum vcc_cmd cmd;
	const char *cmd_name;
	const char *name;		/* cache (or cached device) name */
	struct vcc_dev cache, backing;
	bool has_cache, has_backing;
	const char *devname;		/* --devname: the cached device's name */
	u64 cache_size;			/* 0: default */
	u32 block_size;			/* 0: default */
	struct vcc_settings set;
	u32 flags;			/* VCACHE_F_* */
	bool background, json;
	bool all;			/* hotplug --all; show --all */
	bool force;			/* create: over an existing cache;
					 * repair-table: forget listed caches */
	bool help, version;		/* --help [COMMAND], --version */
	const char *help_cmd;
	/* pid */
	enum vcc_pid_cmd pid_cmd;
	int pid_list, pid_op, pid_default;
	unsigned int nr_pids;
	u32 *pids;
	/* cgroup-allow|cgroup-deny: directories, or id:N to delete */
	unsigned int nr_cgroups;
	const char **cgroups;
};

/*
 * Parse a whole command line (@argv[0] the program): options anywhere
 * (getopt_long: --opt VALUE or --opt=VALUE), the first other argument is
 * the command.  0 (a->help or a->version may be set instead of a
 * command), or -1 with a usage error (vcc_errbuf, VCACHE_EXIT_USAGE) or a
 * device error.
 */
int vcc_parse_args(int argc, char **argv, struct vcc_args *a);
/* The command of a name or alias, or -1. */
int vcc_cmd_by_name(const char *name);
const char *vcc_cmd_name(enum vcc_cmd cmd);
/* A cache or cached device name the kernel accepts?  0 or -1. */
int vcc_check_name(const char *what, const char *name);

#endif
