// SPDX-License-Identifier: GPL-2.0
/*
 * vcache-config - create, change and inspect vcache caches over the
 * generic netlink family "vcache".  See vcache-config(8).
 *
 * main.c: the command table, help, and the order every command follows:
 * parse and check everything (args.c), then open netlink, then act.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"

#ifndef VCC_VERSION
#define VCC_VERSION "unknown"
#endif

struct command {
	enum vcc_cmd cmd;
	vcc_handler fn;
	bool needs_nl;
	const char *usage;
	const char *help;
};

static const struct command commands[] = {
	{ VCC_CREATE, vcc_cmd_create, true,
	  "create NAME --cache DEV [--size SIZE] --backing DEV [--mode wb|wt|wa|pt]\n"
	  "       [--block-size SIZE] [--policy lru|fifo|s3fifo|tinylfu] [--admit on|off]\n"
	  "       [--flush-period SEC] [--dirty-high PCT|SIZE] [--dirty-low PCT|SIZE]\n"
	  "       [--seq-cutoff SIZE|off] [--ident STRING] [--devname NAME] [--force]",
	  "Create cache NAME on DEV (a vcache card /dev/vflashN: a region of\n"
	  "SIZE, default all free space; or any block device) caching the backing\n"
	  "device; its cached device is /dev/vcache/NAME." },
	{ VCC_ATTACH, vcc_cmd_attach, true,
	  "attach NAME --backing DEV [--ident STRING] [--devname NAME]",
	  "Cache one more backing device on cache NAME (/dev/vcache/NAME-<id>)." },
	{ VCC_DETACH, vcc_cmd_detach, true,
	  "detach NAME [--backing DEV] [--flush | --keep-dirty]",
	  "Stop caching the backing device of cached device NAME (or of cache\n"
	  "NAME's --backing DEV).  Refused while it has dirty data unless\n"
	  "--flush (write it back first) or --keep-dirty (leave it on the cache)." },
	{ VCC_DELETE, vcc_cmd_delete, true,
	  "delete NAME [--flush | --discard-dirty]",
	  "Delete cache NAME and its cached devices.  Refused while dirty unless\n"
	  "--flush or --discard-dirty (dirty data is lost)." },
	{ VCC_FLUSH, vcc_cmd_flush, true,
	  "flush NAME [--background] [--backing DEV]",
	  "Write back the dirty data of cache NAME (or of one backing device) and\n"
	  "wait, showing progress; Ctrl-C cancels the flush (exit 5)." },
	{ VCC_SET, vcc_cmd_set, true,
	  "set NAME KEY=VALUE...",
	  "Change settings online, all in one message (all or nothing).  Keys:\n"
	  "mode, policy, admit, flush-period, dirty-high, dirty-low, seq-cutoff\n"
	  "and every parameter by its name (see vcache-config(8))." },
	{ VCC_PID, vcc_cmd_pid, true,
	  "pid NAME allow|deny add|del PID...\n"
	  "       pid NAME allow|deny clear\n"
	  "       pid NAME cgroup-allow|cgroup-deny add|del DIR...\n"
	  "       pid NAME cgroup-allow|cgroup-deny del id:N\n"
	  "       pid NAME cgroup-allow|cgroup-deny clear\n"
	  "       pid NAME list [--json]\n"
	  "       pid NAME clear\n"
	  "       pid NAME default cache-all|cache-none",
	  "The PID and cgroup lists: whose I/O cache NAME caches.  PIDs classify\n"
	  "what a process submits itself (reads, direct I/O); cgroups (v2\n"
	  "directories) also its buffered writes, written back later by the\n"
	  "kernel's flusher threads." },
	{ VCC_LIST, vcc_cmd_list, true, "list [--json]",
	  "Every cache, one line each." },
	{ VCC_SHOW, vcc_cmd_show, true, "show NAME [--all] [--json]",
	  "Cache NAME: settings, a summary (hit ratios, dirty data, write-back\n"
	  "rate, errors) and its backing devices; --all adds every parameter and\n"
	  "counter.  --json always prints everything." },
	{ VCC_RESET_STATS, vcc_cmd_reset_stats, true, "reset-stats NAME",
	  "Zero the statistics of cache NAME." },
	{ VCC_HOTPLUG, vcc_cmd_hotplug, true, "hotplug DEV [--ident STRING] | hotplug --all",
	  "For udev: attach DEV to the cache waiting for its identity, if any." },
	{ VCC_CARDS, vcc_cmd_cards, false, "cards [--json]",
	  "Every vcache card: serial, model, firmware, capacity, the card-space\n"
	  "table and its cache regions, health (percent used, media errors, unsafe\n"
	  "shutdowns, power cycles, temperature), from sysfs." },
	{ VCC_REPAIR_TABLE, vcc_cmd_repair_table, true, "repair-table CARD [--force]",
	  "Rewrite the damaged card-space table of CARD (/dev/vflashN; `cards`\n"
	  "says \"damaged\") as a valid empty one: the raw disk becomes writable\n"
	  "again.  Refused (exit 4) while a damaged copy still lists caches;\n"
	  "--force forgets them: their data stays on the card but no cache can\n"
	  "be loaded from it, and the raw disk may overwrite it." },
	{ VCC_SALVAGE, vcc_cmd_salvage, true, "salvage NAME | salvage DEV",
	  "Load a cache whose metadata does not verify (refused at boot and at\n"
	  "hotplug, with the reason in the kernel log): NAME, a card cache listed\n"
	  "as failed; DEV, a block device holding a cache.  Everything that\n"
	  "verifies is loaded, the rest skipped and counted, the metadata\n"
	  "rewritten.  Dirty blocks a damaged record still names read as errors;\n"
	  "those it no longer names read as the backing device's older data: only\n"
	  "the administrator takes that risk, never an automatic load." },
	{ VCC_IDENT, vcc_cmd_ident, false, "ident DEV",
	  "Print the identity by which vcache recognises DEV across reboots." },
};

static const struct command *find(enum vcc_cmd cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (commands[i].cmd == cmd)
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: vcache-config COMMAND [ARGS]\n\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  vcache-config %s\n", commands[i].usage);
	fprintf(f, "\n  vcache-config help COMMAND | --help | --version\n"
		"\nSizes: 4096, 4k, 512M, 1.5G, 2TiB (k = 1024).  Exit status: 0 ok, 1 failed,\n"
		"2 bad arguments, 3 no such cache or device, 4 busy or dirty, 5 interrupted,\n"
		"6 vcache.ko not loaded, 7 needs root.  See vcache-config(8).\n");
}

static int help(const char *name)
{
	int cmd = vcc_cmd_by_name(name);
	const struct command *c = cmd >= 0 ? find((enum vcc_cmd)cmd) : NULL;

	if (!c) {
		fprintf(stderr, "vcache-config: help: unknown command '%s'\n", name);
		return VCACHE_EXIT_USAGE;
	}
	printf("usage: vcache-config %s\n\n%s\n", c->usage, c->help);
	return 0;
}

/* hotplug from udev: quiet when there is nothing vcache could want */
static bool hotplug_nothing_to_do(const struct vcc_args *a)
{
	return !a->all && (!a->backing.ident[0] || a->backing.is_card ||
			   a->backing.is_cached);
}

int main(int argc, char **argv)
{
	const struct command *c;
	struct vcc_nl *nl = NULL;
	struct vcc_args a;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return VCACHE_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help"))
		return argc > 2 ? help(argv[2]) : (usage(stdout), 0);

	if (vcc_parse_args(argc, argv, &a)) {
		if (a.cmd == VCC_HOTPLUG && vcc_err_code != VCACHE_EXIT_USAGE)
			return 0;	/* gone already, not in sysfs: nothing */
		fprintf(stderr, "vcache-config: %s\n", vcc_errbuf);
		return vcc_err_code;
	}
	if (a.help)
		return a.help_cmd ? help(a.help_cmd) : (usage(stdout), 0);
	if (a.version) {
		printf("vcache-config %s (netlink family %s version %d)\n",
		       VCC_VERSION, VCACHE_GENL_NAME, VCACHE_GENL_VERSION);
		return 0;
	}
	c = find(a.cmd);
	if (a.cmd == VCC_HOTPLUG && hotplug_nothing_to_do(&a))
		return 0;
	if (c->needs_nl && vcc_nl_open(&nl)) {
		vcc_nl_close(nl);
		if (a.cmd == VCC_HOTPLUG && vcc_err_code == VCACHE_EXIT_NOMOD)
			return 0;
		fprintf(stderr, "vcache-config: %s\n", vcc_errbuf);
		return vcc_err_code;
	}
	rc = c->fn(nl, &a);
	vcc_nl_close(nl);
	free(a.pids);
	if (rc) {
		fprintf(stderr, "vcache-config: %s\n", vcc_errbuf);
		return vcc_err_code ? vcc_err_code : VCACHE_EXIT_FAIL;
	}
	return 0;
}
