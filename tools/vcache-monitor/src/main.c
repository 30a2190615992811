// SPDX-License-Identifier: GPL-2.0
/*
 * vcache-monitor - watch vcache caches: a table, a live view, JSON, CSV,
 * Prometheus text, the netlink events, and resetting the counters.
 * See vcache-monitor(8).
 *
 * main.c: options, then one of: a reading printed once; --watch (a
 * reading every SEC, figures over the interval); --events; --reset-stats.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "mon.h"
#include "names.h"

#ifndef VCM_VERSION
#define VCM_VERSION "unknown"
#endif

enum fmt { F_TEXT, F_JSON, F_CSV, F_PROM };

struct args {
	enum fmt fmt;
	bool watch, events, reset, detail, help, version;
	double interval;
	long count;		/* readings in --watch; 0: until q/Ctrl-C */
	const char *name;
};

static volatile int stop;
static struct termios saved_tio;
static bool tio_saved;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void restore_tty(void)
{
	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	tio_saved = false;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vcache-monitor [NAME] [--json | --csv]\n"
		"       vcache-monitor --watch [SEC] [--count N] [NAME] [--json | --csv]\n"
		"       vcache-monitor --detail NAME [--watch [SEC]] [--json | --csv]\n"
		"       vcache-monitor --prometheus [NAME]\n"
		"       vcache-monitor --events [--json]\n"
		"       vcache-monitor --reset-stats NAME\n"
		"       vcache-monitor --help | --version\n"
		"\n"
		"Without --watch: one reading, figures since the cache was loaded or its\n"
		"counters reset.  With --watch: a reading every SEC seconds (default 1),\n"
		"figures over the interval; q or Ctrl-C quits.  Exit status: 0 ok,\n"
		"1 failed, 2 bad arguments, 3 no such cache, 6 vcache.ko not loaded,\n"
		"7 needs root.  See vcache-monitor(8).\n");
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "vcache-monitor: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see vcache-monitor --help)\n");
	return VCACHE_EXIT_USAGE;
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= VCACHE_NAME_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.-", s[i]))
			return false;
	return true;
}

static int set_fmt(struct args *a, enum fmt f, const char *opt)
{
	if (a->fmt != F_TEXT && a->fmt != f)
		return bad("%s: only one of --json, --csv, --prometheus", opt);
	a->fmt = f;
	return 0;
}

static int set_name(struct args *a, const char *opt, const char *name)
{
	if (a->name && strcmp(a->name, name))
		return bad("%s: only one cache name", opt);
	a->name = name;
	return 0;
}

/*
 * getopt_long, as vcache-config: --opt VALUE or --opt=VALUE, options
 * before or after the cache name.  --watch takes an optional interval:
 * --watch=SEC, or --watch SEC when the next argument is a number.
 */
enum { O_JSON = 256, O_CSV, O_PROM, O_COUNT, O_DETAIL, O_RESET, O_EVENTS };

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, O_JSON },
	{ "csv", no_argument, NULL, O_CSV },
	{ "prometheus", no_argument, NULL, O_PROM },
	{ "watch", optional_argument, NULL, 'w' },
	{ "count", required_argument, NULL, O_COUNT },
	{ "detail", required_argument, NULL, O_DETAIL },
	{ "reset-stats", required_argument, NULL, O_RESET },
	{ "events", no_argument, NULL, O_EVENTS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static const char *long_name(int val)
{
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

static int parse(int argc, char **argv, struct args *a)
{
	const char *iv;
	char *end, o[3];
	int ch, rc;

	memset(a, 0, sizeof(*a));
	a->interval = 1.0;
	opterr = 0;
	optind = 0;
	while ((ch = getopt_long(argc, argv, ":w::hV", long_opts, NULL)) != -1) {
		rc = 0;
		switch (ch) {
		case O_JSON:
			rc = set_fmt(a, F_JSON, "--json");
			break;
		case O_CSV:
			rc = set_fmt(a, F_CSV, "--csv");
			break;
		case O_PROM:
			rc = set_fmt(a, F_PROM, "--prometheus");
			break;
		case 'w':
			a->watch = true;
			iv = optarg;
			if (!iv && optind < argc && argv[optind][0] != '-' &&
			    strspn(argv[optind], "0123456789.") == strlen(argv[optind]))
				iv = argv[optind++];
			if (iv) {
				a->interval = strtod(iv, &end);
				if (!*iv || *end || !(a->interval >= 0.1 && a->interval <= 3600))
					return bad("--watch %s: the interval is 0.1 to 3600 seconds",
						   iv);
			}
			break;
		case O_COUNT:
			errno = 0;
			a->count = strtol(optarg, &end, 10);
			if (errno || *end || a->count < 1 || a->count > 100000000)
				return bad("--count %s: a number of readings, at least 1",
					   optarg);
			break;
		case O_DETAIL:
		case O_RESET:
			if (optarg[0] == '-')
				return bad("--%s needs a cache name", long_name(ch));
			rc = set_name(a, ch == O_DETAIL ? "--detail" : "--reset-stats",
				      optarg);
			if (ch == O_DETAIL)
				a->detail = true;
			else
				a->reset = true;
			break;
		case O_EVENTS:
			a->events = true;
			break;
		case 'h':
			a->help = true;
			break;
		case 'V':
			a->version = true;
			break;
		case ':':
			if (optopt == O_DETAIL || optopt == O_RESET)
				return bad("--%s needs a cache name", long_name(optopt));
			return bad("--%s needs a number", long_name(optopt));
		default:	/* '?' */
			if (optopt >= O_JSON)
				return bad("--%s takes no value", long_name(optopt));
			if (optopt) {
				o[0] = '-';
				o[1] = (char)optopt;
				o[2] = 0;
				return bad("unknown option %s", o);
			}
			return bad("unknown option %s", argv[optind - 1]);
		}
		if (rc)
			return rc;
	}
	for (; optind < argc; optind++) {
		rc = set_name(a, argv[optind], argv[optind]);
		if (rc)
			return rc;
	}
	if (a->help || a->version)
		return 0;
	if (a->name && !valid_name(a->name))
		return bad("'%s' is not a cache name ([A-Za-z0-9_.-], at most 31)",
			   a->name);
	if (a->reset && (a->watch || a->events || a->detail || a->fmt != F_TEXT))
		return bad("%s: --reset-stats goes alone", "--reset-stats");
	if (a->events && (a->watch || a->detail || a->name ||
			  (a->fmt != F_TEXT && a->fmt != F_JSON)))
		return bad("%s: --events takes only --json", "--events");
	if (a->count && !a->watch)
		return bad("%s: --count needs --watch", "--count");
	return 0;
}

/* ------------------------------------------------------------ readings */
static void print(const struct args *a, const struct mon_opts *o,
		  const struct mon_snap *s, const struct mon_snap *prev,
		  bool first)
{
	switch (a->fmt) {
	case F_JSON:
		mon_print_json(stdout, s, prev, o);
		break;
	case F_CSV:
		if (first)
			mon_print_csv_header(stdout);
		mon_print_csv(stdout, s, prev);
		break;
	case F_PROM:
		mon_print_prometheus(stdout, s);
		break;
	default:
		if (o->tty)
			fputs("\033[H\033[2J", stdout);	/* home, clear */
		else if (o->watch && !first)
			fputc('\n', stdout);
		mon_print_text(stdout, s, prev, o);
		fflush(stdout);
	}
}

/* Wait @sec seconds; true if q was typed (tty) or a signal came. */
static bool wait_or_quit(double sec, bool tty)
{
	struct timespec t0, t;
	double left = sec;
	char ch;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop && left > 0) {
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		int r = poll(&p, tty ? 1 : 0, (int)ceil(left * 1000));

		if (r > 0 && read(STDIN_FILENO, &ch, 1) == 1 &&
		    (ch == 'q' || ch == 'Q'))
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = sec - ((double)(t.tv_sec - t0.tv_sec) +
			      (double)(t.tv_nsec - t0.tv_nsec) / 1e9);
	}
	return stop;
}

static int watch(struct vcc_nl *nl, const struct args *a, struct mon_opts *o)
{
	struct mon_snap prev, cur;
	long n = 0;

	o->tty = a->fmt == F_TEXT && isatty(STDOUT_FILENO) &&
		 isatty(STDIN_FILENO);
	if (o->tty && !tcgetattr(STDIN_FILENO, &saved_tio)) {
		struct termios raw = saved_tio;

		tio_saved = true;
		atexit(restore_tty);
		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		fputs("\033[H\033[2Jvcache-monitor: first reading...\n", stdout);
		fflush(stdout);
	}
	if (mon_snap_take(nl, a->name, &prev))
		return -1;
	while (!wait_or_quit(a->interval, o->tty)) {
		if (mon_snap_take(nl, a->name, &cur)) {
			mon_snap_free(&prev);
			return -1;
		}
		print(a, o, &cur, &prev, n == 0);
		mon_snap_free(&prev);
		prev = cur;
		if (a->count && ++n >= a->count)
			break;
		if (!a->count)
			n++;
	}
	mon_snap_free(&prev);
	restore_tty();
	return 0;
}

/* -------------------------------------------------------------- events */
static const char *const event_names[] = {
	[VCACHE_EV_CREATED] = "created", [VCACHE_EV_DELETED] = "deleted",
	[VCACHE_EV_LOADED] = "loaded", [VCACHE_EV_STATE] = "state",
	[VCACHE_EV_ATTACHED] = "attached", [VCACHE_EV_DETACHED] = "detached",
	[VCACHE_EV_SET] = "set", [VCACHE_EV_FLUSH_PROGRESS] = "flush_progress",
	[VCACHE_EV_FLUSH_DONE] = "flush_done", [VCACHE_EV_ERROR] = "error",
};

struct ev {
	int ev;
	u32 err;
	char msg[256];
};

static void scan_event(struct nlattr *attrs, int len, struct ev *e)
{
	struct nlattr *x;
	int rem;

	memset(e, 0, sizeof(*e));
	e->ev = -1;
	nla_for_each_attr(x, attrs, len, rem) {
		if (nla_type(x) == VCACHE_A_EVENT && nla_len(x) == 1)
			e->ev = nla_get_u8(x);
		else if (nla_type(x) == VCACHE_A_ERRNO && nla_len(x) == 4)
			e->err = nla_get_u32(x);
		else if (nla_type(x) == VCACHE_A_MESSAGE)
			snprintf(e->msg, sizeof(e->msg), "%.*s", nla_len(x),
				 (char *)nla_data(x));
	}
}

static int on_event(struct nlattr *attrs, int len, void *arg)
{
	const struct args *a = arg;
	struct vcc_cache_info *c = calloc(1, sizeof(*c));
	const char *name;
	struct timespec ts;
	struct ev e;

	if (!c)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	vcc_parse_cache(attrs, len, c);
	scan_event(attrs, len, &e);
	name = e.ev > 0 && e.ev < (int)ARRAY_SIZE(event_names) &&
	       event_names[e.ev] ? event_names[e.ev] : "unknown";
	if (a->fmt == F_JSON) {
		json_object *o = json_object_new_object(), *b;

		json_object_object_add(o, "time_ns", json_object_new_uint64(
			(u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec));
		json_object_object_add(o, "event", json_object_new_string(name));
		json_object_object_add(o, "cache", json_object_new_string(c->name));
		json_object_object_add(o, "state", json_object_new_string(
			vcc_name_of(vcc_states, c->state)));
		if (c->nr_backing) {
			b = json_object_new_object();
			json_object_object_add(b, "devname",
				json_object_new_string(c->backing[0].devname));
			json_object_object_add(b, "state", json_object_new_string(
				vcc_name_of(vcc_bstates, c->backing[0].state)));
			json_object_object_add(o, "backing", b);
		}
		if (VCC_HAS(c, VCACHE_A_FLUSH)) {
			b = json_object_new_object();
			json_object_object_add(b, "running",
				json_object_new_boolean(c->flush.running));
			json_object_object_add(b, "target_blocks",
				json_object_new_uint64(c->flush.target));
			json_object_object_add(b, "done_blocks",
				json_object_new_uint64(c->flush.done));
			json_object_object_add(b, "remaining_blocks",
				json_object_new_uint64(c->flush.remaining));
			json_object_object_add(b, "last_result_errno",
				json_object_new_uint64(c->flush.result));
			json_object_object_add(o, "flush", b);
		}
		if (e.err)
			json_object_object_add(o, "errno", json_object_new_uint64(e.err));
		if (e.msg[0])
			json_object_object_add(o, "message", json_object_new_string(e.msg));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		char t[32];
		struct tm tm;
		time_t sec = ts.tv_sec;

		localtime_r(&sec, &tm);
		strftime(t, sizeof(t), "%H:%M:%S", &tm);
		printf("%s %s %s state=%s", t, c->name, name,
		       vcc_name_of(vcc_states, c->state));
		if (c->nr_backing)
			printf(" device=%s (%s)", c->backing[0].devname,
			       vcc_name_of(vcc_bstates, c->backing[0].state));
		if (VCC_HAS(c, VCACHE_A_FLUSH))
			printf(" flush=%llu/%llu remaining=%llu%s",
			       (unsigned long long)c->flush.done,
			       (unsigned long long)c->flush.target,
			       (unsigned long long)c->flush.remaining,
			       c->flush.running ? "" : " (done)");
		if (e.err)
			printf(" error=%s", strerror((int)e.err));
		if (e.msg[0])
			printf(" \"%s\"", e.msg);
		printf("\n");
	}
	fflush(stdout);
	free(c);
	return 0;
}

/* ---------------------------------------------------------------- main */
int main(int argc, char **argv)
{
	struct mon_opts o = { 0 };
	struct vcc_nl *nl = NULL;
	struct sigaction sa;
	struct args a;
	int rc;

	rc = parse(argc, argv, &a);
	if (rc)
		return rc;
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.version) {
		printf("vcache-monitor %s (netlink family %s version %d)\n",
		       VCM_VERSION, VCACHE_GENL_NAME, VCACHE_GENL_VERSION);
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: poll() returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (vcc_nl_open(&nl))
		goto fail;
	if (a.reset) {
		struct nl_msg *msg = vcc_nl_msg(nl, VCACHE_CMD_RESET_STATS, 0);
		char what[64];

		snprintf(what, sizeof(what), "reset-stats %s", a.name);
		if (!msg || nla_put_string(msg, VCACHE_A_NAME, a.name)) {
			vcc_fail(VCACHE_EXIT_FAIL, "out of memory");
			goto fail;
		}
		if (vcc_nl_do(nl, msg, what, NULL))
			goto fail;
	} else if (a.events) {
		if (vcc_nl_listen(nl, on_event, &a, &stop))
			goto fail;
	} else if (a.watch) {
		o.watch = true;
		o.detail = a.detail;
		o.interval = a.interval;
		if (watch(nl, &a, &o))
			goto fail;
	} else {
		struct mon_snap s;

		o.detail = a.detail;
		if (mon_snap_take(nl, a.name, &s))
			goto fail;
		print(&a, &o, &s, NULL, true);
		mon_snap_free(&s);
	}
	vcc_nl_close(nl);
	return 0;
fail:
	restore_tty();
	vcc_nl_close(nl);
	fprintf(stderr, "vcache-monitor: %s\n", vcc_errbuf);
	return vcc_err_code ? vcc_err_code : VCACHE_EXIT_FAIL;
}
