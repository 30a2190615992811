// SPDX-License-Identifier: GPL-2.0
/*
 * firmware-sim: command line, `format`, `info` and `ctl` subcommands.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fw.h"

static const char usage_text[] =
"NAME\n"
"    firmware-sim - firmware of the simulated vcache PCIe flash card\n"
"\n"
"SYNOPSIS\n"
"    firmware-sim [run] --socket PATH --media FILE --guest-mem PATH [OPTIONS]\n"
"    firmware-sim format --media FILE --capacity SIZE [--lba-size 512|4096]\n"
"                        [--serial S] [--force]\n"
"    firmware-sim info --media FILE [--json]\n"
"    firmware-sim ctl --ctl PATH COMMAND [ARGS...]     (also: vcfw-ctl)\n"
"\n"
"DESCRIPTION\n"
"    Plays the firmware of the vcache flash card (host interface in\n"
"    include/vcache/vc_card.h, described in docs/card-interface.md).  QEMU\n"
"    shows the card to a guest as an ivshmem-doorbell PCI function:\n"
"\n"
"        -object memory-backend-file,id=m,size=1G,mem-path=/dev/shm/G,share=on\n"
"        -machine memory-backend=m\n"
"        -chardev socket,path=SOCKET,id=c\n"
"        -device ivshmem-doorbell,chardev=c,vectors=QUEUES+1\n"
"\n"
"    firmware-sim is the ivshmem server on SOCKET and itself peer 0.  It\n"
"    must be listening before QEMU starts.  The guest's RAM file (GUEST-MEM)\n"
"    is where the card does its DMA; it may not exist yet when the firmware\n"
"    starts and is mapped when the guest connects.  The card's data lives in\n"
"    the media FILE, so it persists across firmware restarts (power cycles).\n"
"    When QEMU disconnects, or on SIGTERM/SIGINT, the firmware destages its\n"
"    write buffer, marks the media clean and exits 0.  SIGKILL (or the ctl\n"
"    command `powercut`) is a power cut: buffered, unflushed writes are lost\n"
"    and the next start counts an unsafe shutdown.\n"
"\n"
"RUN OPTIONS\n"
"    -s, --socket PATH     ivshmem server UNIX socket (required)\n"
"    -m, --media FILE      media file made by `format` (required)\n"
"    -g, --guest-mem PATH  guest RAM file (QEMU memory-backend-file mem-path);\n"
"                          DMA address = file offset (required)\n"
"    -c, --ctl PATH        control socket for fault injection and counters\n"
"    -q, --queues N        I/O queue pairs, 1..255 (default 2); QEMU's\n"
"                          ivshmem vectors= must be N+1\n"
"        --qdepth N        max entries per queue, cap_mqes (default 1024)\n"
"    -j, --threads N       worker threads (default 4)\n"
"    -w, --wbuf SIZE       volatile write buffer size (default 64M, min 1M)\n"
"    -t, --timing MODEL    flash (default): flash-like latencies;\n"
"                          nodelay: complete as fast as possible\n"
"        --channels N      flash channels (default 8)\n"
"        --dies N          dies per channel (default 4)\n"
"        --serial S        identify serial (default: the media's, from format)\n"
"        --model M         identify model string\n"
"        --bad-magic       present a wrong card magic (driver must refuse it)\n"
"        --bad-version     present an unsupported interface major version\n"
"        --refuse          never become ready at enable (like ctl `refuse`)\n"
"        --stay            keep running when QEMU disconnects and serve the\n"
"                          next connection (a new peer id each time)\n"
"        --shm-size SIZE   card memory (BAR2) size, power of two (default 64K)\n"
"        --coalesce on|off interrupt coalescing: completions are posted in\n"
"                          batches by one thread and each vector is raised\n"
"                          once per batch (default off; timed completions of\n"
"                          --timing flash are always batched)\n"
"    -v, --verbose         trace every command to stderr\n"
"    -h, --help            this text;  -V, --version  print the version\n"
"\n"
"FORMAT OPTIONS\n"
"    --media FILE          file to create (refused if it exists without\n"
"                          --force); sparse, 4 KiB header + data\n"
"    --capacity SIZE       data capacity, e.g. 1G, 512M (multiple of LBA size)\n"
"    --lba-size 512|4096   logical block size (default 512)\n"
"    --serial S            serial number (default: generated)\n"
"\n"
"CTL COMMANDS (firmware-sim ctl --ctl PATH CMD ..., or vcfw-ctl --ctl PATH CMD)\n"
"    stats [--json]            counters (--json: one object of raw integers)\n"
"    read-error SLBA NLB       reads touching the range fail: READ_ERROR\n"
"    write-error SLBA NLB      writes/write-zeroes touching it: WRITE_FAULT\n"
"    hang [COUNT [SLBA NLB]]   the next COUNT (default 1) I/O commands\n"
"                              (touching the range) never complete; they can\n"
"                              be aborted (VC_ADM_ABORT) or dropped by reset\n"
"    hang-flush [COUNT]        the next COUNT (default 1) FLUSH commands\n"
"                              never complete (FUA data with no FLUSH after it)\n"
"    hang-admin [COUNT [abort]] the next COUNT (default 1) admin commands\n"
"                              (aborts only) are fetched, never completed\n"
"    stall MS [admin|io]       at the next (admin/I/O) command it fetches the\n"
"                              card freezes for MS ms: no doorbells, cc or\n"
"                              heartbeat; then it finishes that command (its\n"
"                              data moves) before it notices anything else\n"
"    ident FIELD VALUE         identify reports FIELD (max_xfer,\n"
"                              discard_gran, capacity) as VALUE (the\n"
"                              driver must refuse nonsense) until `clear`\n"
"    ready-delay MS            every enable takes MS ms to set CSTS.RDY\n"
"                              (0: at once); cc.EN cleared first cancels it\n"
"    refuse [cfs]              do not become ready at the next enable (with\n"
"                              cfs: set CSTS.CFS instead) until `clear`\n"
"    clear                     remove every injected fault\n"
"    faults                    list injected faults and hung commands\n"
"    flush                     destage the write buffer now\n"
"    powercut                  drop the write buffer and exit at once (0)\n"
"\n"
"SIZES\n"
"    Bytes, or with a K, M, G or T suffix (powers of 1024).\n"
"\n"
"TIMING MODEL (flash)\n"
"    Channels x dies (default 8 x 4 = 32 dies), LBA space striped over dies\n"
"    in 64 KiB units.  A read costs 50-80 us of die time plus 1.25 us/KiB of\n"
"    channel transfer; a program costs 200-500 us per 16 KiB flash page plus\n"
"    transfer, charged when the write buffer is destaged (FLUSH, FUA,\n"
"    background destage).  A buffered write costs 5 us + 0.25 us/KiB.  Dies\n"
"    work in parallel; operations on one die queue behind each other.\n"
"\n"
"EXIT STATUS\n"
"    0 clean exit (or powercut); 1 runtime error; 2 bad usage or media file.\n";

static void usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "firmware-sim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'firmware-sim --help' for more information.\n");
	exit(2);
}

/*
 * One size parser for every tool: vcache-config's (tools/vcache-config/
 * src/size.c, compiled in by the Makefile); its message is dropped, the
 * callers name the option.
 */
int vcc_parse_size(const char *what, const char *s, uint64_t *out);

static int parse_size(const char *s, uint64_t *out)
{
	return vcc_parse_size("size", s, out) ? -1 : 0;
}

static unsigned parse_uint(const char *opt, const char *s, unsigned lo,
			   unsigned hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		usage_err("%s must be an integer in %u..%u, not '%s'", opt, lo,
			  hi, s);
	return (unsigned)v;
}

/* ------------------------------------------------------------ ctl */
int ctl_client(const char *path, int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[1024] = "", *buf = NULL, *last;
	size_t len = 0, cap = 0, ll = 0;
	int fd;

	if (!path)
		usage_err("ctl: --ctl PATH is required");
	if (!argc)
		usage_err("ctl: missing command (try: ctl --ctl PATH help)");
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (ll + l + 2 > sizeof(line))
			usage_err("ctl: command too long");
		memcpy(line + ll, argv[i], l);
		ll += l;
		line[ll++] = i + 1 < argc ? ' ' : '\n';
	}
	if (strlen(path) >= sizeof(sa.sun_path))
		usage_err("ctl: socket path too long");
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "firmware-sim ctl: cannot connect to %s: %s\n",
			path, strerror(errno));
		return 1;
	}
	if (write(fd, line, ll) != (ssize_t)ll) {
		fprintf(stderr, "firmware-sim ctl: write: %s\n", strerror(errno));
		return 1;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n;

		if (len + 4096 > cap) {
			cap = cap * 2 + 8192;
			buf = realloc(buf, cap);
			if (!buf)
				return 1;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	if (!buf || !len) {
		fprintf(stderr, "firmware-sim ctl: no answer from %s\n", path);
		free(buf);
		return 1;
	}
	buf[len] = 0;
	while (len && buf[len - 1] == '\n')
		buf[--len] = 0;
	last = strrchr(buf, '\n');
	last = last ? last + 1 : buf;
	if (!strcmp(last, "ok")) {
		*last = 0;
		fputs(buf, stdout);
		free(buf);
		return 0;
	}
	/* the lines before the error, then the error itself */
	fwrite(buf, 1, (size_t)(last - buf), stdout);
	fprintf(stderr, "firmware-sim ctl: %s\n", last);
	free(buf);
	return 1;
}

static int cmd_ctl(int argc, char **argv)
{
	const char *path = getenv("VCFW_CTL");
	int i = 1;

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--ctl") || !strcmp(argv[i], "-c")) {
			if (++i >= argc)
				usage_err("ctl: --ctl needs a PATH");
			path = argv[i];
		} else if (!strncmp(argv[i], "--ctl=", 6)) {
			path = argv[i] + 6;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else {
			break;
		}
	}
	return ctl_client(path, argc - i, argv + i);
}

/* ------------------------------------------------------- format/info */
static int cmd_format(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "media", required_argument, NULL, 'm' },
		{ "capacity", required_argument, NULL, 'C' },
		{ "lba-size", required_argument, NULL, 'l' },
		{ "serial", required_argument, NULL, 'S' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *media = NULL, *serial = NULL;
	uint64_t cap = 0;
	unsigned lba = 512;
	int force = 0, c;
	char err[512];

	while ((c = getopt_long(argc, argv, "m:C:l:S:fh", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			media = optarg;
			break;
		case 'C':
			if (parse_size(optarg, &cap) || !cap)
				usage_err("format: bad --capacity '%s'", optarg);
			break;
		case 'l':
			lba = parse_uint("--lba-size", optarg, 512, 4096);
			if (lba != 512 && lba != 4096)
				usage_err("format: --lba-size must be 512 or 4096");
			break;
		case 'S':
			if (strlen(optarg) > 20 || !*optarg)
				usage_err("format: --serial must be 1..20 characters");
			serial = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			usage_err("format: bad option");
		}
	}
	if (optind < argc)
		usage_err("format: unexpected argument '%s'", argv[optind]);
	if (!media || !cap)
		usage_err("format: --media FILE and --capacity SIZE are required");
	if (media_format(media, cap, lba, serial, force, err, sizeof(err))) {
		fprintf(stderr, "firmware-sim: format: %s\n", err);
		return 2;
	}
	printf("formatted %s: %" PRIu64 " blocks of %u bytes\n", media,
	       cap / lba, lba);
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	struct media_hdr h;
	const char *media = NULL;
	int json = 0;
	FILE *f;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--media") && i + 1 < argc)
			media = argv[++i];
		else if (!strncmp(argv[i], "--media=", 8))
			media = argv[i] + 8;
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			usage_err("info: bad argument '%s'", argv[i]);
	}
	if (!media)
		usage_err("info: --media FILE is required");
	f = fopen(media, "rb");
	if (!f || fread(&h, sizeof(h), 1, f) != 1 ||
	    memcmp(h.magic, MEDIA_MAGIC, 8)) {
		fprintf(stderr, "firmware-sim: info: %s is not a vcache media file\n",
			media);
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	if (json) {
		printf("{\"capacity_blocks\": %" PRIu64 ", \"lba_size\": %u, \"clean\": %u, "
		       "\"power_cycles\": %" PRIu64 ", \"unsafe_shutdowns\": %" PRIu64
		       ", \"media_errors\": %" PRIu64 ", \"bytes_read\": %" PRIu64
		       ", \"bytes_written\": %" PRIu64 ", \"flush_cmds\": %" PRIu64
		       ", \"flash_bytes_programmed\": %" PRIu64 "}\n",
		       h.capacity, h.lba_size, h.clean, h.power_cycles,
		       h.unsafe_shutdowns, h.media_errors, h.bytes_read,
		       h.bytes_written, h.flush_cmds, h.flash_bytes_programmed);
	} else {
		printf("media %s\nserial %.20s\ncapacity_blocks %" PRIu64 "\nlba_size %u\n"
		       "clean %u\npower_cycles %" PRIu64 "\nunsafe_shutdowns %" PRIu64
		       "\nmedia_errors %" PRIu64 "\nbytes_read %" PRIu64
		       "\nbytes_written %" PRIu64 "\nflush_cmds %" PRIu64
		       "\nflash_bytes_programmed %" PRIu64 "\n",
		       media, h.serial, h.capacity, h.lba_size, h.clean,
		       h.power_cycles, h.unsafe_shutdowns, h.media_errors,
		       h.bytes_read, h.bytes_written, h.flush_cmds,
		       h.flash_bytes_programmed);
	}
	return 0;
}

/* ------------------------------------------------------------- run */
static int cmd_run(int argc, char **argv)
{
	enum { O_QDEPTH = 256, O_CHANNELS, O_DIES, O_SERIAL, O_MODEL,
	       O_BADMAGIC, O_BADVER, O_REFUSE, O_STAY, O_SHM, O_COALESCE };
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "media", required_argument, NULL, 'm' },
		{ "guest-mem", required_argument, NULL, 'g' },
		{ "ctl", required_argument, NULL, 'c' },
		{ "queues", required_argument, NULL, 'q' },
		{ "qdepth", required_argument, NULL, O_QDEPTH },
		{ "threads", required_argument, NULL, 'j' },
		{ "wbuf", required_argument, NULL, 'w' },
		{ "timing", required_argument, NULL, 't' },
		{ "channels", required_argument, NULL, O_CHANNELS },
		{ "dies", required_argument, NULL, O_DIES },
		{ "serial", required_argument, NULL, O_SERIAL },
		{ "model", required_argument, NULL, O_MODEL },
		{ "bad-magic", no_argument, NULL, O_BADMAGIC },
		{ "bad-version", no_argument, NULL, O_BADVER },
		{ "refuse", no_argument, NULL, O_REFUSE },
		{ "stay", no_argument, NULL, O_STAY },
		{ "shm-size", required_argument, NULL, O_SHM },
		{ "coalesce", required_argument, NULL, O_COALESCE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct fw_opts o = {
		.queues = 2, .qdepth = 1024, .threads = 4,
		.wbuf_bytes = 64u << 20, .shm_size = 64u << 10,
	};
	struct media m;
	char err[512];
	uint64_t v;
	int c;

	timing_defaults(&o.tm, 0);
	while ((c = getopt_long(argc, argv, "s:m:g:c:q:j:w:t:vhV", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o.socket_path = optarg;
			break;
		case 'm':
			o.media_path = optarg;
			break;
		case 'g':
			o.guest_mem = optarg;
			break;
		case 'c':
			o.ctl_path = optarg;
			break;
		case 'q':
			o.queues = parse_uint("--queues", optarg, 1, VC_MAX_IOQ);
			break;
		case O_QDEPTH:
			o.qdepth = parse_uint("--qdepth", optarg, 2, 65535);
			break;
		case 'j':
			o.threads = parse_uint("--threads", optarg, 1, 256);
			break;
		case 'w':
			if (parse_size(optarg, &v) || v < (1u << 20) || v > (64ULL << 30))
				usage_err("--wbuf must be a size from 1M to 64G, not '%s'",
					  optarg);
			o.wbuf_bytes = v;
			break;
		case 't':
			if (!strcmp(optarg, "nodelay") || !strcmp(optarg, "none"))
				o.nodelay = 1;
			else if (!strcmp(optarg, "flash"))
				o.nodelay = 0;
			else
				usage_err("--timing must be 'flash' or 'nodelay', not '%s'",
					  optarg);
			break;
		case O_CHANNELS:
			o.tm.channels = parse_uint("--channels", optarg, 1, 64);
			break;
		case O_DIES:
			o.tm.dies = parse_uint("--dies", optarg, 1, 64);
			break;
		case O_SERIAL:
			if (!*optarg || strlen(optarg) > 20)
				usage_err("--serial must be 1..20 characters");
			o.serial = optarg;
			break;
		case O_MODEL:
			if (!*optarg || strlen(optarg) > 40)
				usage_err("--model must be 1..40 characters");
			o.model = optarg;
			break;
		case O_BADMAGIC:
			o.bad_magic = 1;
			break;
		case O_BADVER:
			o.bad_version = 1;
			break;
		case O_REFUSE:
			o.refuse = 1;
			break;
		case O_STAY:
			o.stay = 1;
			break;
		case O_SHM:
			if (parse_size(optarg, &v) || v < 8192 || v > (1u << 30) ||
			    (v & (v - 1)))
				usage_err("--shm-size must be a power of two from 8K to 1G");
			o.shm_size = v;
			break;
		case O_COALESCE:
			if (!strcmp(optarg, "on"))
				o.coalesce = 1;
			else if (!strcmp(optarg, "off"))
				o.coalesce = 0;
			else
				usage_err("--coalesce must be 'on' or 'off'");
			break;
		case 'v':
			fw_verbose = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("firmware-sim %s (interface %u.%u)\n", FW_REV,
			       VC_IF_VERSION_MAJOR, VC_IF_VERSION_MINOR);
			return 0;
		default:
			usage_err("bad option");
		}
	}
	if (optind < argc)
		usage_err("unexpected argument '%s'", argv[optind]);
	if (!o.socket_path)
		usage_err("--socket PATH is required");
	if (!o.media_path)
		usage_err("--media FILE is required");
	if (!o.guest_mem)
		usage_err("--guest-mem PATH is required");
	if (o.wbuf_bytes < (1u << 20))
		usage_err("--wbuf must be at least 1M");
	o.tm.nodelay = o.nodelay;
	if (VC_PAGE_SIZE + (o.queues + 1) * sizeof(struct vc_doorbell) > o.shm_size)
		usage_err("--shm-size too small for %u queues", o.queues);

	if (media_open(&m, o.media_path, o.wbuf_bytes, err, sizeof(err))) {
		fprintf(stderr, "firmware-sim: %s\n", err);
		return 2;
	}
	m.tm = o.tm;
	return card_run(&o, &m);
}

int main(int argc, char **argv)
{
	const char *prog = basename(argv[0]);

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a file size limit must give EFBIG (a media error), not kill us */
	signal(SIGXFSZ, SIG_IGN);
	if (!strcmp(prog, "vcfw-ctl")) {
		if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			fputs(usage_text, stdout);
			return 0;
		}
		return cmd_ctl(argc, argv);
	}
	if (argc > 1) {
		if (!strcmp(argv[1], "format"))
			return cmd_format(argc - 1, argv + 1);
		if (!strcmp(argv[1], "ctl"))
			return cmd_ctl(argc - 1, argv + 1);
		if (!strcmp(argv[1], "info"))
			return cmd_info(argc - 1, argv + 1);
		if (!strcmp(argv[1], "run"))
			return cmd_run(argc - 1, argv + 1);
	}
	return cmd_run(argc, argv);
}
