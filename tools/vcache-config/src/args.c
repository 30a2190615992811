// SPDX-License-Identifier: GPL-2.0
/*
 * args.c - every command's arguments, checked before any netlink (args.h).
 */
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "names.h"
#include "size.h"

static const struct vcc_name cmd_names[] = {
	{ "create", VCC_CREATE }, { "attach", VCC_ATTACH },
	{ "detach", VCC_DETACH }, { "delete", VCC_DELETE },
	{ "flush", VCC_FLUSH }, { "set", VCC_SET }, { "pid", VCC_PID },
	{ "list", VCC_LIST }, { "show", VCC_SHOW }, { "hotplug", VCC_HOTPLUG },
	{ "ident", VCC_IDENT }, { "reset-stats", VCC_RESET_STATS },
	{ "cards", VCC_CARDS }, { "repair-table", VCC_REPAIR_TABLE },
	{ "salvage", VCC_SALVAGE },
	/* aliases */
	{ "destroy", VCC_DELETE }, { "remove", VCC_DELETE },
	{ "ls", VCC_LIST }, { "info", VCC_SHOW }, { "status", VCC_SHOW },
	{ NULL, 0 }
};

int vcc_cmd_by_name(const char *name)
{
	return vcc_name_lookup(cmd_names, name);
}

const char *vcc_cmd_name(enum vcc_cmd cmd)
{
	return vcc_name_of(cmd_names, cmd);
}

int vcc_check_name(const char *what, const char *name)
{
	size_t n = strlen(name), i;

	if (!n || n >= VCACHE_NAME_MAX)
		return vcc_usage_err("%s '%s': 1 to %d characters", what, name,
				     VCACHE_NAME_MAX - 1);
	if (name[0] == '.' || name[0] == '-')
		return vcc_usage_err("%s '%s' may not start with '%c'", what, name,
				     name[0]);
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return vcc_usage_err("%s '%s': only letters, digits, '_', '.' and '-'",
					     what, name);
	return 0;
}

/* ------------------------------------------------------------ options */
enum {
	O_CACHE, O_SIZE, O_BACKING, O_MODE, O_BLOCK_SIZE, O_POLICY, O_ADMIT,
	O_FLUSH_PERIOD, O_DIRTY_HIGH, O_DIRTY_LOW, O_SEQ_CUTOFF, O_IDENT,
	O_DEVNAME, O_FLUSH, O_KEEP_DIRTY, O_DISCARD_DIRTY, O_BACKGROUND, O_JSON,
	O_ALL, O_FORCE,
};

/*
 * One getopt_long table for every command (and vcache-monitor's parser
 * is getopt_long too): --opt VALUE and --opt=VALUE, options before or
 * after the command and its arguments; which options a command takes is
 * checked afterwards (cmd_opts).
 */
#define O_BASE 256	/* long options' values, above any short option */
static const struct option all_opts[] = {
	{ "cache", required_argument, NULL, O_BASE + O_CACHE },
	{ "size", required_argument, NULL, O_BASE + O_SIZE },
	{ "backing", required_argument, NULL, O_BASE + O_BACKING },
	{ "mode", required_argument, NULL, O_BASE + O_MODE },
	{ "block-size", required_argument, NULL, O_BASE + O_BLOCK_SIZE },
	{ "policy", required_argument, NULL, O_BASE + O_POLICY },
	{ "admit", required_argument, NULL, O_BASE + O_ADMIT },
	{ "flush-period", required_argument, NULL, O_BASE + O_FLUSH_PERIOD },
	{ "dirty-high", required_argument, NULL, O_BASE + O_DIRTY_HIGH },
	{ "dirty-low", required_argument, NULL, O_BASE + O_DIRTY_LOW },
	{ "seq-cutoff", required_argument, NULL, O_BASE + O_SEQ_CUTOFF },
	{ "ident", required_argument, NULL, O_BASE + O_IDENT },
	{ "devname", required_argument, NULL, O_BASE + O_DEVNAME },
	{ "flush", no_argument, NULL, O_BASE + O_FLUSH },
	{ "keep-dirty", no_argument, NULL, O_BASE + O_KEEP_DIRTY },
	{ "discard-dirty", no_argument, NULL, O_BASE + O_DISCARD_DIRTY },
	{ "background", no_argument, NULL, O_BASE + O_BACKGROUND },
	{ "json", no_argument, NULL, O_BASE + O_JSON },
	{ "all", no_argument, NULL, O_BASE + O_ALL },
	{ "force", no_argument, NULL, O_BASE + O_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};
#define NR_OPTS (O_FORCE + 1)

static const char *opt_name(int id)
{
	return all_opts[id].name;
}

/* Options each command takes (bit per O_*). */
#define B(o) (1u << (o))
static const unsigned int cmd_opts[VCC_NR_CMDS] = {
	[VCC_CREATE] = B(O_CACHE) | B(O_SIZE) | B(O_BACKING) | B(O_MODE) |
		       B(O_BLOCK_SIZE) | B(O_POLICY) | B(O_ADMIT) |
		       B(O_FLUSH_PERIOD) | B(O_DIRTY_HIGH) | B(O_DIRTY_LOW) |
		       B(O_SEQ_CUTOFF) | B(O_IDENT) | B(O_DEVNAME) | B(O_FORCE),
	[VCC_ATTACH] = B(O_BACKING) | B(O_IDENT) | B(O_DEVNAME),
	[VCC_DETACH] = B(O_BACKING) | B(O_FLUSH) | B(O_KEEP_DIRTY),
	[VCC_DELETE] = B(O_FLUSH) | B(O_DISCARD_DIRTY),
	[VCC_FLUSH] = B(O_BACKGROUND) | B(O_BACKING),
	[VCC_PID] = B(O_JSON),
	[VCC_LIST] = B(O_JSON),
	[VCC_CARDS] = B(O_JSON),
	[VCC_SHOW] = B(O_JSON) | B(O_ALL),
	[VCC_HOTPLUG] = B(O_IDENT) | B(O_ALL),
	[VCC_REPAIR_TABLE] = B(O_FORCE),
};

/* Settings options of create, as the keys of set. */
static const char *const opt_key[] = {
	[O_MODE] = "mode", [O_POLICY] = "policy", [O_ADMIT] = "admit",
	[O_FLUSH_PERIOD] = "flush-period", [O_DIRTY_HIGH] = "dirty-high",
	[O_DIRTY_LOW] = "dirty-low", [O_SEQ_CUTOFF] = "seq-cutoff",
};

struct parsed {
	const char *pos[4096];		/* positional arguments */
	int npos;
	const char *val[NR_OPTS];
	bool given[NR_OPTS];
	bool help, version;
};

/* The option @arg (as given, "--name=value" shortened to "--name"). */
static int unknown_opt(const char *c, const char *arg)
{
	const char *eq = strchr(arg, '=');
	int n = eq ? (int)(eq - arg) : (int)strlen(arg);

	if (arg[0] == '-' && arg[1] != '-')
		return vcc_usage_err("%s: unknown option '%s' (options are long: see 'vcache-config help %s')",
				     c, arg, c);
	return vcc_usage_err("%s: unknown option '%.*s' (see 'vcache-config help %s')",
			     c, n, arg, c);
}

/*
 * @argv[0] is the program; the other arguments that are not options go
 * to @p->pos in order (the command first, see take_cmd()).
 */
static int parse_opts(int argc, char **argv, struct parsed *p)
{
	const char *c = "vcache-config";
	int ch, i, id;

	opterr = 0;
	optind = 0;		/* glibc: start afresh (the tests parse many times) */
	while ((ch = getopt_long(argc, argv, ":hV", all_opts, NULL)) != -1) {
		const char *arg = argv[optind - 1];

		switch (ch) {
		case 'h':
			p->help = true;
			continue;
		case 'V':
			p->version = true;
			continue;
		case ':':
			id = optopt - O_BASE;
			return vcc_usage_err("%s: --%s needs a value", c,
					     id >= 0 && id < NR_OPTS ? opt_name(id) : "?");
		case '?':
			id = optopt - O_BASE;
			if (optopt >= O_BASE && id < NR_OPTS)
				return vcc_usage_err("%s: --%s takes no value", c,
						     opt_name(id));
			if (optopt && optopt < O_BASE) {	/* -x */
				char o[3] = { '-', (char)optopt, 0 };

				return unknown_opt(c, o);
			}
			return unknown_opt(c, arg);
		default:
			id = ch - O_BASE;
			if (p->given[id])
				return vcc_usage_err("%s: --%s is given twice", c,
						     opt_name(id));
			p->given[id] = true;
			p->val[id] = optarg;
		}
	}
	for (i = optind; i < argc; i++) {
		if (p->npos >= (int)ARRAY_SIZE(p->pos))
			return vcc_usage_err("%s: too many arguments", c);
		p->pos[p->npos++] = argv[i];
	}
	return 0;
}

/* The command: the first positional argument; its options checked. */
static int take_cmd(struct vcc_args *a, struct parsed *p)
{
	int cmd, o;

	if (p->npos < 1)
		return vcc_usage_err("no command given (vcache-config --help lists them)");
	cmd = vcc_cmd_by_name(p->pos[0]);
	if (cmd < 0)
		return vcc_usage_err("unknown command '%s' (vcache-config --help lists them)",
				     p->pos[0]);
	a->cmd = (enum vcc_cmd)cmd;
	a->cmd_name = vcc_cmd_name(a->cmd);
	for (o = 0; o < NR_OPTS; o++)
		if (p->given[o] && !(cmd_opts[a->cmd] & B(o)))
			return vcc_usage_err("%s: unknown option '--%s' (see 'vcache-config help %s')",
					     a->cmd_name, opt_name(o), a->cmd_name);
	/* the command's own arguments from here on */
	memmove(p->pos, p->pos + 1, (size_t)(p->npos - 1) * sizeof(p->pos[0]));
	p->npos--;
	return 0;
}

/* The NAME argument (first positional), checked. */
static int take_name(struct vcc_args *a, struct parsed *p, const char *what)
{
	if (p->npos < 1)
		return vcc_usage_err("%s: %s is missing (see 'vcache-config help %s')",
				     a->cmd_name, what, a->cmd_name);
	a->name = p->pos[0];
	return vcc_check_name(what, a->name);
}

static int no_more(struct vcc_args *a, struct parsed *p, int used)
{
	if (p->npos > used)
		return vcc_usage_err("%s: unexpected argument '%s'", a->cmd_name,
				     p->pos[used]);
	return 0;
}

static int check_ident_override(const char *s)
{
	size_t i, n = strlen(s);

	if (!n || n >= VCACHE_IDENT_MAX)
		return vcc_usage_err("--ident '%s': 1 to %d characters", s,
				     VCACHE_IDENT_MAX - 1);
	for (i = 0; i < n; i++)
		if (!isgraph((unsigned char)s[i]))
			return vcc_usage_err("--ident '%s': printable characters without spaces",
					     s);
	return 0;
}

/* A backing device for create/attach: identity and refusals. */
static int take_backing(struct vcc_args *a, struct parsed *p)
{
	struct vcc_dev *b = &a->backing;

	if (!p->given[O_BACKING])
		return vcc_usage_err("%s: --backing DEV is required (the slow disk to cache)",
				     a->cmd_name);
	if (vcc_dev_open(p->val[O_BACKING], b))
		return -1;
	a->has_backing = true;
	if (b->is_card)
		return vcc_usage_err("%s (%s) is a vcache card: a card can be the cache (--cache), not a backing device",
				     b->path, b->name);
	if (b->is_cached)
		return vcc_usage_err("%s (%s) is a vcache cached device: give the disk underneath as --backing",
				     b->path, b->name);
	if (p->given[O_IDENT]) {
		if (check_ident_override(p->val[O_IDENT]))
			return -1;
		vcc_strlcpy(b->ident, p->val[O_IDENT], sizeof(b->ident));
	} else if (!b->ident[0]) {
		return vcc_usage_err("%s (%s) has no stable identity (no WWN, serial, DM/MD uuid or partition uuid in %s/dev/block/%u:%u): after a reboot it could be mistaken for another disk, and dirty data written to the wrong one; give one with --ident STRING if you are sure it is unique and stable",
				     b->path, b->name, vcc_sysfs_root(),
				     b->major, b->minor);
	}
	if (p->given[O_DEVNAME]) {
		a->devname = p->val[O_DEVNAME];
		if (vcc_check_name("--devname", a->devname))
			return -1;
	}
	return 0;
}

static int parse_create(struct vcc_args *a, struct parsed *p)
{
	struct vcc_dev *c = &a->cache, *b = &a->backing;
	size_t o;
	u64 v;

	if (take_name(a, p, "cache NAME") || no_more(a, p, 1))
		return -1;
	if (!p->given[O_CACHE])
		return vcc_usage_err("create: --cache DEV is required (the flash: /dev/vflash0, or any block device)");
	a->force = p->given[O_FORCE];
	/* every option is checked before the devices are looked at */
	for (o = 0; o < ARRAY_SIZE(opt_key); o++)
		if (opt_key[o] && p->given[o] &&
		    vcc_settings_set(&a->set, opt_key[o], p->val[o]))
			return -1;
	if (vcc_settings_check(&a->set))
		return -1;
	if (p->given[O_BLOCK_SIZE]) {
		if (vcc_parse_size("--block-size", p->val[O_BLOCK_SIZE], &v))
			return -1;
		if (v < 4096 || v > 65536 || (v & (v - 1)))
			return vcc_usage_err("--block-size %s: a power of two from 4k to 64k",
					     p->val[O_BLOCK_SIZE]);
		a->block_size = (u32)v;
	}
	if (p->given[O_SIZE]) {
		if (vcc_parse_size("--size", p->val[O_SIZE], &a->cache_size))
			return -1;
		v = a->block_size ? a->block_size : 4096;
		if (!a->cache_size || a->cache_size % v)
			return vcc_usage_err("--size %s: a non-zero multiple of the block size (%llu bytes)",
					     p->val[O_SIZE], (unsigned long long)v);
	}
	if (vcc_dev_open(p->val[O_CACHE], c))
		return -1;
	a->has_cache = true;
	if (c->is_cached)
		return vcc_usage_err("%s (%s) is a vcache cached device: it cannot be a cache",
				     c->path, c->name);
	if (take_backing(a, p))
		return -1;
	if (c->major == b->major && c->minor == b->minor)
		return vcc_usage_err("%s and %s are the same device (%s): the cache and the backing device must differ",
				     c->path, b->path, c->name);
	if (b->partition && b->pmajor == c->major && b->pminor == c->minor)
		return vcc_usage_err("backing device %s (%s) is a partition of the cache device %s (%s)",
				     b->path, b->name, c->path, c->name);
	if (c->partition && c->pmajor == b->major && c->pminor == b->minor)
		return vcc_usage_err("cache device %s (%s) is a partition of the backing device %s (%s)",
				     c->path, c->name, b->path, b->name);
	return 0;
}

static int parse_pids(struct vcc_args *a, struct parsed *p, int from)
{
	int i;
	unsigned int j;
	u64 v;

	a->nr_pids = (unsigned int)(p->npos - from);
	if (!a->nr_pids)
		return vcc_usage_err("pid: give at least one PID");
	a->pids = calloc(a->nr_pids, sizeof(*a->pids));
	if (!a->pids)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	for (i = from; i < p->npos; i++) {
		if (vcc_parse_u64(p->pos[i], &v) || !v || v > 4194304)
			return vcc_usage_err("pid: bad PID '%s': a number from 1 to 4194304",
					     p->pos[i]);
		for (j = 0; j < (unsigned int)(i - from); j++)
			if (a->pids[j] == v)
				return vcc_usage_err("pid: PID %s is given twice",
						     p->pos[i]);
		a->pids[i - from] = (u32)v;
	}
	return 0;
}

/* cgroup v2 directories (opened when sent), or id:N for a delete */
static int parse_cgroups(struct vcc_args *a, struct parsed *p, int from)
{
	int i;
	u64 v;

	a->nr_cgroups = (unsigned int)(p->npos - from);
	if (!a->nr_cgroups)
		return vcc_usage_err("pid: give at least one cgroup directory (/sys/fs/cgroup/...)");
	a->cgroups = calloc(a->nr_cgroups, sizeof(*a->cgroups));
	if (!a->cgroups)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	for (i = from; i < p->npos; i++) {
		const char *s = p->pos[i];

		if (!strncmp(s, "id:", 3) &&
		    (a->pid_op != VCACHE_PID_DEL || vcc_parse_u64(s + 3, &v) || !v))
			return vcc_usage_err("pid: '%s': id:N names a cgroup to delete (N from 'pid NAME list')",
					     s);
		if (!*s)
			return vcc_usage_err("pid: an empty cgroup path");
		a->cgroups[i - from] = s;
	}
	return 0;
}

static int parse_pid(struct vcc_args *a, struct parsed *p)
{
	const char *w;

	if (take_name(a, p, "cache NAME"))
		return -1;
	if (p->npos < 2)
		return vcc_usage_err("pid: what to do is missing: allow|deny add|del|clear PID..., cgroup-allow|cgroup-deny add|del|clear DIR..., list, clear or default cache-all|cache-none");
	w = p->pos[1];
	if (p->given[O_JSON] && strcmp(w, "list"))
		return vcc_usage_err("pid: --json goes with 'list' only");
	if (!strcmp(w, "list")) {
		a->pid_cmd = VCC_PID_LIST_CMD;
		a->json = p->given[O_JSON];
		return no_more(a, p, 2);
	}
	if (!strcmp(w, "clear")) {
		a->pid_cmd = VCC_PID_CLEAR_ALL;
		return no_more(a, p, 2);
	}
	if (!strcmp(w, "default")) {
		a->pid_cmd = VCC_PID_DEFAULT_CMD;
		if (p->npos < 3)
			return vcc_usage_err("pid default: cache-all or cache-none");
		a->pid_default = vcc_name_lookup(vcc_pid_defaults, p->pos[2]);
		if (a->pid_default < 0)
			return vcc_usage_err("pid default: '%s' is not cache-all or cache-none",
					     p->pos[2]);
		return no_more(a, p, 3);
	}
	a->pid_list = vcc_name_lookup(vcc_pid_lists, w);
	if (a->pid_list < 0)
		return vcc_usage_err("pid: '%s' is not allow, deny, cgroup-allow, cgroup-deny, list, clear or default",
				     w);
	a->pid_cmd = VCC_PID_CHANGE;
	if (p->npos < 3)
		return vcc_usage_err("pid %s: add, del or clear", w);
	if (!strcmp(p->pos[2], "add"))
		a->pid_op = VCACHE_PID_ADD;
	else if (!strcmp(p->pos[2], "del") || !strcmp(p->pos[2], "delete"))
		a->pid_op = VCACHE_PID_DEL;
	else if (!strcmp(p->pos[2], "clear"))
		a->pid_op = VCACHE_PID_CLEAR;
	else
		return vcc_usage_err("pid %s: '%s' is not add, del or clear", w,
				     p->pos[2]);
	if (a->pid_op == VCACHE_PID_CLEAR)
		return no_more(a, p, 3);
	if (a->pid_list == VCACHE_PID_CG_ALLOW ||
	    a->pid_list == VCACHE_PID_CG_DENY)
		return parse_cgroups(a, p, 3);
	return parse_pids(a, p, 3);
}

/* flush, detach: --backing DEV names a device that is there now */
static int take_backing_dev(struct vcc_args *a, struct parsed *p)
{
	if (!p->given[O_BACKING])
		return 0;
	a->has_backing = true;
	return vcc_dev_open(p->val[O_BACKING], &a->backing);
}

static int parse_cmd(struct vcc_args *a, struct parsed *p)
{
	int i;

	switch (a->cmd) {
	case VCC_CREATE:
		return parse_create(a, p);
	case VCC_ATTACH:
		if (take_name(a, p, "cache NAME") || no_more(a, p, 1))
			return -1;
		return take_backing(a, p);
	case VCC_DETACH:
		if (take_name(a, p, "NAME") || no_more(a, p, 1))
			return -1;
		if (p->given[O_FLUSH] && p->given[O_KEEP_DIRTY])
			return vcc_usage_err("detach: --flush (write dirty data back first) and --keep-dirty (leave it on the cache) exclude each other");
		a->flags = (p->given[O_FLUSH] ? VCACHE_F_FLUSH : 0) |
			   (p->given[O_KEEP_DIRTY] ? VCACHE_F_KEEP_DIRTY : 0);
		return take_backing_dev(a, p);
	case VCC_DELETE:
		if (take_name(a, p, "cache NAME") || no_more(a, p, 1))
			return -1;
		if (p->given[O_FLUSH] && p->given[O_DISCARD_DIRTY])
			return vcc_usage_err("delete: --flush (write dirty data back first) and --discard-dirty (throw it away) exclude each other");
		a->flags = (p->given[O_FLUSH] ? VCACHE_F_FLUSH : 0) |
			   (p->given[O_DISCARD_DIRTY] ? VCACHE_F_DISCARD_DIRTY : 0);
		return 0;
	case VCC_FLUSH:
		if (take_name(a, p, "cache NAME") || no_more(a, p, 1))
			return -1;
		a->background = p->given[O_BACKGROUND];
		return take_backing_dev(a, p);
	case VCC_SET:
		if (take_name(a, p, "cache NAME"))
			return -1;
		if (p->npos < 2)
			return vcc_usage_err("set: give at least one KEY=VALUE (see 'vcache-config help set')");
		for (i = 1; i < p->npos; i++)
			if (vcc_settings_parse_kv(&a->set, p->pos[i]))
				return -1;
		return vcc_settings_check(&a->set);
	case VCC_PID:
		return parse_pid(a, p);
	case VCC_LIST:
	case VCC_CARDS:
		a->json = p->given[O_JSON];
		return no_more(a, p, 0);
	case VCC_SHOW:
	case VCC_RESET_STATS:
		a->json = p->given[O_JSON];
		a->all = p->given[O_ALL];
		if (take_name(a, p, "cache NAME"))
			return -1;
		return no_more(a, p, 1);
	case VCC_REPAIR_TABLE:
		if (p->npos < 1)
			return vcc_usage_err("repair-table: CARD is missing (its raw disk, /dev/vflashN)");
		if (no_more(a, p, 1) || vcc_dev_open(p->pos[0], &a->cache))
			return -1;
		if (!a->cache.is_card || a->cache.partition ||
		    strncmp(a->cache.name, "vflash", 6))
			return vcc_usage_err("repair-table: %s (%s) is not the raw disk of a vcache card (/dev/vflashN)",
					     p->pos[0], a->cache.name);
		a->has_cache = true;
		a->force = p->given[O_FORCE];
		return 0;
	case VCC_SALVAGE:
		if (p->npos < 1)
			return vcc_usage_err("salvage: NAME (a card cache that failed to load) or DEV (a block device holding a cache) is missing");
		if (no_more(a, p, 1))
			return -1;
		if (!strchr(p->pos[0], '/'))
			return take_name(a, p, "cache NAME");
		if (vcc_dev_open(p->pos[0], &a->cache))
			return -1;
		if (a->cache.is_card)
			return vcc_usage_err("salvage: %s is a card: name its cache instead (vcache-config list)",
					     p->pos[0]);
		a->has_cache = true;
		return 0;
	case VCC_HOTPLUG:
	case VCC_IDENT:
		if (a->cmd == VCC_HOTPLUG && p->given[O_ALL]) {
			if (p->given[O_IDENT])
				return vcc_usage_err("hotplug: --all and --ident exclude each other");
			a->all = true;
			return no_more(a, p, 0);
		}
		if (p->npos < 1)
			return vcc_usage_err("%s: DEV is missing", a->cmd_name);
		if (no_more(a, p, 1) || vcc_dev_open(p->pos[0], &a->backing))
			return -1;
		a->has_backing = true;
		if (p->given[O_IDENT]) {
			if (check_ident_override(p->val[O_IDENT]))
				return -1;
			vcc_strlcpy(a->backing.ident, p->val[O_IDENT],
				    sizeof(a->backing.ident));
		}
		return 0;
	default:
		return vcc_usage_err("unknown command");
	}
}

int vcc_parse_args(int argc, char **argv, struct vcc_args *a)
{
	struct parsed *p;
	int rc;

	memset(a, 0, sizeof(*a));
	a->pid_default = -1;
	a->pid_list = -1;
	a->pid_op = -1;
	p = calloc(1, sizeof(*p));
	if (!p)
		return vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
	rc = parse_opts(argc, argv, p);
	if (!rc && (p->help || p->version)) {
		a->help = p->help;
		a->version = p->version;
		if (p->npos)
			a->help_cmd = p->pos[0];
		free(p);
		return 0;
	}
	if (!rc)
		rc = take_cmd(a, p);
	if (!rc)
		rc = parse_cmd(a, p);
	free(p);
	return rc;
}
