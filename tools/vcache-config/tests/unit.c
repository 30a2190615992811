// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of vcache-config's parts that need no kernel: sizes,
 * percentages, durations, settings (every key), identities on a fake sysfs
 * tree, argument checks, the detach/delete guard, SHA-256.  Prints
 * "unit: N passed, N failed".
 *
 * "unit --json DIR" writes the JSON printers' output for canned caches
 * to DIR/{show,list,pids}.json (tests/run.sh checks them with python3).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "guard.h"
#include "job.h"
#include "names.h"
#include "print.h"
#include "sha256.h"
#include "size.h"

/*
 * cmocka runs the tests (one per t_* function: isolation, crashes caught,
 * its report); inside a test, CHECK is an expectation that reports and
 * carries on, so one run shows every failing case of a table, and the
 * test fails at its end if any did.
 */
static int failures;

#define CHECK(c) do {							\
		if (!(c)) {						\
			print_error("  %s:%d: CHECK(%s) failed%s%s\n",	\
				    __FILE__, __LINE__, #c,		\
				    vcc_errbuf[0] ? ": last error: " : "", \
				    vcc_errbuf);			\
			failures++;					\
		}							\
	} while (0)

struct unit_test {
	void (*fn)(void);
};

static void run(void **state)
{
	const struct unit_test *t = *state;

	failures = 0;
	vcc_errbuf[0] = '\0';
	t->fn();
	if (failures)
		fail_msg("%d check(s) failed", failures);
}

/* ---------------------------------------------------------------- sizes */
static u64 size_of(const char *s)
{
	u64 v = 12345;

	return vcc_parse_size("--size", s, &v) ? ~0ULL : v;
}

static void t_size_good(void)
{
	CHECK(size_of("4096") == 4096);
	CHECK(size_of("0") == 0);
	CHECK(size_of("4k") == 4096);
	CHECK(size_of("4K") == 4096);
	CHECK(size_of("4KiB") == 4096);
	CHECK(size_of("4kB") == 4096);
	CHECK(size_of("512B") == 512);
	CHECK(size_of("512b") == 512);
	CHECK(size_of("1.5G") == 1536ULL << 20);
	CHECK(size_of("1.5k") == 1536);
	CHECK(size_of("0.5k") == 512);
	CHECK(size_of("2TiB") == 2ULL << 40);
	CHECK(size_of("3m") == 3ULL << 20);
	CHECK(size_of("1P") == 1ULL << 50);
	CHECK(size_of("15E") == 15ULL << 60);
	CHECK(size_of("18446744073709551615") == UINT64_MAX);
}

static void t_size_bad(void)
{
	static const char *const bad[] = {
		"", "abc", "4X", "4kk", "4KiBB", "1.5", "0.3k", "-1", "+4",
		"1.", ".5k", "4 k", " 4k", "16E", "18446744073709551616",
		"1.0000000001G", "k", "4iB", "0x10",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		u64 v;

		vcc_err_code = 0;
		if (!vcc_parse_size("--size", bad[i], &v)) {
			fprintf(stderr, "  '%s' accepted as %llu\n", bad[i],
				(unsigned long long)v);
			failures++;
		}
		CHECK(vcc_err_code == VCACHE_EXIT_USAGE);
		CHECK(strstr(vcc_errbuf, "--size"));
	}
}

static void t_pct_or_size(void)
{
	bool pct;
	u64 v;

	CHECK(!vcc_parse_pct_or_size("x", "60%", &pct, &v) && pct && v == 60);
	CHECK(!vcc_parse_pct_or_size("x", "0%", &pct, &v) && pct && v == 0);
	CHECK(!vcc_parse_pct_or_size("x", "100%", &pct, &v) && pct && v == 100);
	CHECK(!vcc_parse_pct_or_size("x", "60", &pct, &v) && pct && v == 60);
	CHECK(!vcc_parse_pct_or_size("x", "8G", &pct, &v) && !pct && v == 8ULL << 30);
	CHECK(!vcc_parse_pct_or_size("x", "4096B", &pct, &v) && !pct && v == 4096);
	CHECK(!vcc_parse_pct_or_size("x", "1.5M", &pct, &v) && !pct &&
	      v == 3ULL << 19);
	CHECK(vcc_parse_pct_or_size("x", "101", &pct, &v));
	CHECK(strstr(vcc_errbuf, "ambiguous"));
	CHECK(vcc_parse_pct_or_size("x", "101%", &pct, &v));
	CHECK(vcc_parse_pct_or_size("x", "%", &pct, &v));
	CHECK(vcc_parse_pct_or_size("x", "-5%", &pct, &v));
	CHECK(vcc_parse_pct_or_size("x", "5.5%", &pct, &v));
	CHECK(vcc_parse_pct_or_size("x", "0B", &pct, &v));
	CHECK(strstr(vcc_errbuf, "percentage"));
	CHECK(vcc_parse_pct_or_size("x", "8Q", &pct, &v));
}

static void t_duration(void)
{
	u64 ms;

	CHECK(!vcc_parse_duration_ms("d", "30", &ms) && ms == 30000);
	CHECK(!vcc_parse_duration_ms("d", "30s", &ms) && ms == 30000);
	CHECK(!vcc_parse_duration_ms("d", "500ms", &ms) && ms == 500);
	CHECK(!vcc_parse_duration_ms("d", "2m", &ms) && ms == 120000);
	CHECK(!vcc_parse_duration_ms("d", "1h", &ms) && ms == 3600000);
	CHECK(!vcc_parse_duration_ms("d", "0.5", &ms) && ms == 500);
	CHECK(!vcc_parse_duration_ms("d", "off", &ms) && ms == 0);
	CHECK(!vcc_parse_duration_ms("d", "0", &ms) && ms == 0);
	CHECK(vcc_parse_duration_ms("d", "", &ms));
	CHECK(vcc_parse_duration_ms("d", "1x", &ms));
	CHECK(vcc_parse_duration_ms("d", "0.0005", &ms));
	CHECK(vcc_parse_duration_ms("d", "-1", &ms));
	CHECK(vcc_parse_duration_ms("d", "s", &ms));
}

/* ------------------------------------------------------------- settings */
static int set1(struct vcc_settings *s, const char *kv)
{
	memset(s, 0, sizeof(*s));
	return vcc_settings_parse_kv(s, kv);
}

static void t_every_param_key(void)
{
	struct vcc_settings s;
	char kv[128];
	int i, n = 0;

	for (i = 1; i <= VCACHE_P_MAX; i++) {
		const char *name = vcc_param_name(i);
		u64 min, max;

		CHECK(name != NULL);
		if (!name)
			continue;
		CHECK(vcc_param_by_name(name) == i);
		vcc_param_range(i, &min, &max);
		/* the largest value allowed, and the smallest */
		snprintf(kv, sizeof(kv), "%s=%llu", name, (unsigned long long)max);
		CHECK(!set1(&s, kv) && s.has[i] && s.v[i] == max);
		snprintf(kv, sizeof(kv), "%s=%llu", name, (unsigned long long)min);
		CHECK(!set1(&s, kv) && s.has[i] && s.v[i] == min);
		/* only that key */
		CHECK(!s.has_mode && !s.has_policy);
		for (int j = 1; j <= VCACHE_P_MAX; j++)
			CHECK(s.has[j] == (j == i));
		/* out of range */
		if (max < UINT64_MAX) {
			snprintf(kv, sizeof(kv), "%s=%llu", name,
				 (unsigned long long)max + 1);
			CHECK(set1(&s, kv) && strstr(vcc_errbuf, "out of range"));
		}
		if (min > 0) {
			snprintf(kv, sizeof(kv), "%s=%llu", name,
				 (unsigned long long)min - 1);
			CHECK(set1(&s, kv) && strstr(vcc_errbuf, "out of range"));
		}
		snprintf(kv, sizeof(kv), "%s=abc", name);
		CHECK(set1(&s, kv));
		n++;
	}
	CHECK(n == VCACHE_P_MAX);
	/* dashes for underscores, sizes for byte counts */
	CHECK(!set1(&s, "wb-max-inflight=8") && s.v[VCACHE_P_WB_MAX_INFLIGHT] == 8);
	CHECK(!set1(&s, "dirty_high_bytes=8G") &&
	      s.v[VCACHE_P_DIRTY_HIGH_BYTES] == 8ULL << 30);
	CHECK(set1(&s, "wb_max_inflight=1k"));
	CHECK(!set1(&s, "idle_ms=0x10") && s.v[VCACHE_P_IDLE_MS] == 16);
}

static void t_friendly_keys(void)
{
	struct vcc_settings s;

	CHECK(!set1(&s, "mode=wt") && s.has_mode && s.mode == VCACHE_MODE_WT);
	CHECK(!set1(&s, "mode=pass-through") && s.mode == VCACHE_MODE_PT);
	CHECK(!set1(&s, "mode=wa") && s.mode == VCACHE_MODE_WA);
	CHECK(!set1(&s, "mode=wb") && s.mode == VCACHE_MODE_WB);
	CHECK(set1(&s, "mode=rw") && strstr(vcc_errbuf, "wb, wt, wa, pt"));
	CHECK(!set1(&s, "policy=fifo") && s.has_policy &&
	      s.policy == VCACHE_POLICY_FIFO);
	CHECK(!set1(&s, "policy=lru") && s.policy == VCACHE_POLICY_LRU);
	CHECK(!set1(&s, "policy=s3fifo") && s.policy == VCACHE_POLICY_S3FIFO);
	CHECK(!set1(&s, "policy=tinylfu") &&
	      s.policy == VCACHE_POLICY_TINYLFU);
	CHECK(set1(&s, "policy=mru"));
	CHECK(!set1(&s, "admit=on") && s.v[VCACHE_P_ADMISSION] == 1);
	CHECK(!set1(&s, "admit=off") && s.has[VCACHE_P_ADMISSION] &&
	      s.v[VCACHE_P_ADMISSION] == 0);
	CHECK(set1(&s, "admit=maybe"));
	CHECK(!set1(&s, "flush-period=30") && s.v[VCACHE_P_MAX_DIRTY_AGE_MS] == 30000);
	CHECK(!set1(&s, "flush_period=off") && s.has[VCACHE_P_MAX_DIRTY_AGE_MS] &&
	      s.v[VCACHE_P_MAX_DIRTY_AGE_MS] == 0);
	CHECK(set1(&s, "flush-period=2d"));
	CHECK(set1(&s, "flush-period=25h") && strstr(vcc_errbuf, "out of range"));
	CHECK(!set1(&s, "dirty-high=70%") && s.v[VCACHE_P_DIRTY_HIGH_PCT] == 70 &&
	      s.has[VCACHE_P_DIRTY_HIGH_BYTES] && !s.v[VCACHE_P_DIRTY_HIGH_BYTES]);
	CHECK(!set1(&s, "dirty-high=2G") && !s.has[VCACHE_P_DIRTY_HIGH_PCT] &&
	      s.v[VCACHE_P_DIRTY_HIGH_BYTES] == 2ULL << 30);
	CHECK(!set1(&s, "dirty-low=30") && s.v[VCACHE_P_DIRTY_LOW_PCT] == 30 &&
	      s.has[VCACHE_P_DIRTY_LOW_BYTES]);
	CHECK(!set1(&s, "dirty-low=1G") && s.v[VCACHE_P_DIRTY_LOW_BYTES] == 1ULL << 30);
	CHECK(!set1(&s, "seq-cutoff=4M") && s.v[VCACHE_P_SEQ_ENABLE] == 1 &&
	      s.v[VCACHE_P_SEQ_THRESHOLD_KIB] == 4096);
	CHECK(!set1(&s, "seq-cutoff=off") && s.has[VCACHE_P_SEQ_ENABLE] &&
	      !s.v[VCACHE_P_SEQ_ENABLE] && !s.has[VCACHE_P_SEQ_THRESHOLD_KIB]);
	CHECK(set1(&s, "seq-cutoff=1500") && strstr(vcc_errbuf, "KiB"));
	CHECK(set1(&s, "seq-cutoff=0"));
	CHECK(set1(&s, "bogus=1") && strstr(vcc_errbuf, "unknown key 'bogus'") &&
	      strstr(vcc_errbuf, "commit_ms"));
	CHECK(set1(&s, "mode") && strstr(vcc_errbuf, "KEY=VALUE"));
	CHECK(set1(&s, "=1"));
	CHECK(set1(&s, "mode="));
}

static void t_settings_conflicts(void)
{
	struct vcc_settings s;

	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "mode=wt"));
	CHECK(vcc_settings_parse_kv(&s, "mode=wb"));
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-high=50%"));
	CHECK(vcc_settings_parse_kv(&s, "dirty_high_pct=40") &&
	      strstr(vcc_errbuf, "both set dirty_high_pct"));
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "idle_ms=5"));
	CHECK(vcc_settings_parse_kv(&s, "idle-ms=6") && strstr(vcc_errbuf, "both set"));
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "admit=on"));
	CHECK(vcc_settings_parse_kv(&s, "admission=0"));
	/* watermarks in order */
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-high=40"));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-low=60"));
	CHECK(vcc_settings_check(&s) && strstr(vcc_errbuf, "above the high"));
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-high=1G"));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-low=2G"));
	CHECK(vcc_settings_check(&s));
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-high=60%"));
	CHECK(!vcc_settings_parse_kv(&s, "dirty-low=40%"));
	CHECK(!vcc_settings_check(&s));
	CHECK(vcc_settings_any(&s));
	memset(&s, 0, sizeof(s));
	CHECK(!vcc_settings_any(&s));
}

/* ------------------------------------------------------------- identity */
static char root[PATH_MAX];

static void put_file(const char *rel, const char *content)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX * 2 + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd))
		failures++;
	f = fopen(path, "w");
	if (!f) {
		failures++;
		return;
	}
	fputs(content, f);
	fclose(f);
}

/* a disk or partition at devices/.../block/REL with dev file M:m */
static void put_dev(const char *rel, unsigned int ma, unsigned int mi)
{
	char buf[64], link[PATH_MAX + 64], target[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "%u:%u\n", ma, mi);
	snprintf(target, sizeof(target), "devices/virtual/block/%s/dev", rel);
	put_file(target, buf);
	snprintf(link, sizeof(link), "%s/dev", root);
	mkdir(link, 0755);
	snprintf(link, sizeof(link), "%s/dev/block", root);
	mkdir(link, 0755);
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", root, ma, mi);
	snprintf(target, sizeof(target), "../../devices/virtual/block/%s", rel);
	if (symlink(target, link) && errno != EEXIST)
		failures++;
}

static const char *ident_of(unsigned int ma, unsigned int mi, struct vcc_dev *d)
{
	memset(d, 0, sizeof(*d));
	if (vcc_dev_sysfs(ma, mi, d))
		return "(error)";
	return d->ident;
}

/* The fake sysfs: a device (devices/virtual/block/REL), its number and
 * up to three attributes "FILE=CONTENT". */
static const struct {
	const char *rel;
	unsigned int ma, mi;
	const char *attr[3];
} fakes[] = {
	{ "sda", 8, 0, { "device/wwid=naa.5000c500a1b2c3d4\n",
			 "device/serial=IGNORED\n" } },
	{ "sda/sda1", 8, 1, { "partition=1\n",
			      "uevent=DEVTYPE=partition\nPARTUUID=0a1b2c3d-01\n" } },
	{ "vdb", 254, 16, { "serial=vcache-hdd\n" } },
	{ "vdc", 254, 32, { "serial=  QM 0001\t \n" } },
	{ "dm-0", 253, 0, { "dm/uuid=LVM-abcdef\n", "dm/name=vg-lv\n" } },
	{ "dm-1", 253, 1, { "dm/uuid=\n", "dm/name=plain\n",
			    "serial=NOT-FOR-DM\n" } },
	{ "md0", 9, 0, { "md/uuid=1c2d3e4f:5a6b7c8d:9e0f1a2b:3c4d5e6f\n" } },
	{ "loop0", 7, 0, { NULL } },
	{ "loop0/loop0p2", 259, 0, { "partition=2\n", "uevent=PARTUUID=feedbeef-02\n" } },
	{ "loop0/loop0p3", 259, 1, { "partition=3\n" } },
	{ "nvme0n1", 259, 5, { "wwid=nvme.8086-50484b533735313530303552383030-494e54454c205353445045444d443430304734-00000001\n" } },
	{ "vflash0", 250, 0, { "device/serial=CARD0001\n" } },
	{ "vflash0/vflash0p1", 250, 1, { "partition=1\n" } },
	{ "xdisk", 251, 0, { "serial=X1\n", "device/model=card\n" } },
	{ "vcache0", 252, 0, { "serial=S\n" } },
};

static void fake_sysfs(void)
{
	char rel[256];
	size_t i, j;

	snprintf(root, sizeof(root), "/tmp/vcc-unit-%d", (int)getpid());
	mkdir(root, 0755);
	setenv("VCACHE_SYSFS_ROOT", root, 1);
	for (i = 0; i < ARRAY_SIZE(fakes); i++) {
		put_dev(fakes[i].rel, fakes[i].ma, fakes[i].mi);
		for (j = 0; j < 3 && fakes[i].attr[j]; j++) {
			const char *eq = strchr(fakes[i].attr[j], '=');

			snprintf(rel, sizeof(rel), "devices/virtual/block/%s/%.*s",
				 fakes[i].rel, (int)(eq - fakes[i].attr[j]),
				 fakes[i].attr[j]);
			put_file(rel, eq + 1);
		}
	}
	put_file("bus/pci/drivers/vcache/.keep", "");
	{
		char l[PATH_MAX + 64];

		snprintf(l, sizeof(l), "%s/devices/virtual/block/xdisk/device/driver", root);
		if (symlink("../../../../../bus/pci/drivers/vcache", l))
			failures++;
	}
}

static void t_ident(void)
{
	struct vcc_dev d;
	char want[VCACHE_IDENT_MAX];
	const char *nv = "wwid:nvme.8086-50484b533735313530303552383030-494e54454c205353445045444d443430304734-00000001";

	CHECK(!strcmp(ident_of(8, 0, &d), "wwid:naa.5000c500a1b2c3d4"));
	CHECK(!d.partition && !d.is_card && !d.is_cached && !strcmp(d.name, "sda"));
	CHECK(!strcmp(ident_of(8, 1, &d), "wwid:naa.5000c500a1b2c3d4-part1"));
	CHECK(d.partition && d.partno == 1 && d.pmajor == 8 && d.pminor == 0 &&
	      !strcmp(d.pname, "sda"));
	CHECK(!strcmp(ident_of(254, 16, &d), "serial:vcache-hdd"));
	CHECK(!strcmp(ident_of(254, 32, &d), "serial:QM_0001"));
	CHECK(!strcmp(ident_of(253, 0, &d), "dm:LVM-abcdef"));
	CHECK(!strcmp(ident_of(253, 1, &d), ""));	/* dm without uuid: none */
	CHECK(!strcmp(ident_of(9, 0, &d), "md:1c2d3e4f:5a6b7c8d:9e0f1a2b:3c4d5e6f"));
	CHECK(!strcmp(ident_of(7, 0, &d), ""));		/* no identity */
	CHECK(!strcmp(ident_of(259, 0, &d), "partuuid:feedbeef-02"));
	CHECK(!strcmp(ident_of(259, 1, &d), ""));
	/* too long: kind + hash of the whole string */
	vcc_ident_fit(nv, want);
	CHECK(!strcmp(ident_of(259, 5, &d), want));
	CHECK(strlen(d.ident) < VCACHE_IDENT_MAX);
	CHECK(!strncmp(d.ident, "wwid:sha256=", 12) && strlen(d.ident) == 12 + 32);
	/* cards and cached devices */
	ident_of(250, 0, &d);
	CHECK(d.is_card);
	ident_of(250, 1, &d);
	CHECK(d.is_card && d.partition);
	ident_of(251, 0, &d);
	CHECK(d.is_card);
	ident_of(252, 0, &d);
	CHECK(d.is_cached && !d.is_card);
	/* not in sysfs */
	CHECK(vcc_dev_sysfs(1, 99, &d) && vcc_err_code == VCACHE_EXIT_NOENT);
}

static void t_ident_fit(void)
{
	char out[VCACHE_IDENT_MAX], s[200];

	vcc_ident_fit("serial:short", out);
	CHECK(!strcmp(out, "serial:short"));
	memset(s, 'x', sizeof(s));
	memcpy(s, "serial:", 7);
	s[47] = '\0';			/* exactly 47: kept */
	vcc_ident_fit(s, out);
	CHECK(!strcmp(out, s));
	s[47] = 'x';
	s[48] = '\0';			/* 48: hashed */
	vcc_ident_fit(s, out);
	CHECK(!strncmp(out, "serial:sha256=", 14) && strlen(out) == 46);
	s[10] = 'y';			/* another string, another hash */
	{
		char out2[VCACHE_IDENT_MAX];

		vcc_ident_fit(s, out2);
		CHECK(strcmp(out, out2));
	}
}

static void t_sha256(void)
{
	static const struct {
		const char *in, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	size_t i;
	int j;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		uint8_t h[32];
		char hex[65];

		vcc_sha256(v[i].in, strlen(v[i].in), h);
		for (j = 0; j < 32; j++)
			sprintf(hex + 2 * j, "%02x", h[j]);
		CHECK(!strcmp(hex, v[i].hex));
	}
}

/* ------------------------------------------------------------ arguments */
static int parse(const char *line, struct vcc_args *a)
{
	static char buf[4096];
	char *argv[64];
	int argc = 0;
	char *tok;

	snprintf(buf, sizeof(buf), "vcache-config %s", line);
	for (tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	vcc_err_code = 0;
	return vcc_parse_args(argc, argv, a);
}

/* must be refused with exit 2 and @want in the message */
static void refused(const char *line, const char *want)
{
	struct vcc_args a;

	if (!parse(line, &a) || vcc_err_code != VCACHE_EXIT_USAGE ||
	    !strstr(vcc_errbuf, want)) {
		fprintf(stderr, "  '%s': exit %d, '%s' (want '%s')\n", line,
			vcc_err_code, vcc_errbuf, want);
		failures++;
	}
	free(a.pids);
	free(a.cgroups);
}

static void t_args_refused(void)
{
	refused("frobnicate", "unknown command 'frobnicate'");
	refused("create", "cache NAME is missing");
	refused("create -db --cache x --backing y", "unknown option '-d'");
	refused("create .db --cache x --backing y", "may not start with '.'");
	refused("create d/b --cache x --backing y", "only letters");
	refused("create abcdefghijabcdefghijabcdefghijab --cache x", "1 to 31");
	refused("create db --backing y", "--cache DEV is required");
	refused("create db --cache x --backing y --mode xx", "bad mode 'xx'");
	refused("create db --cache x --backing y --policy mru", "bad policy");
	refused("create db --cache x --backing y --admit yes", "bad admit");
	refused("create db --cache x --backing y --size 12Q", "bad size '12Q'");
	refused("create db --cache x --backing y --size 1000", "multiple of the block size");
	refused("create db --cache x --backing y --block-size 2k", "power of two");
	refused("create db --cache x --backing y --block-size 96k", "power of two");
	refused("create db --cache x --backing y --block-size 128k", "power of two");
	refused("create db --cache x --backing y --dirty-high 150", "ambiguous");
	refused("create db --cache x --backing y --dirty-high 40 --dirty-low 50", "above the high");
	refused("create db --cache x --backing y --seq-cutoff never", "bad size");
	refused("create db --cache x --backing y --flush-period soon", "bad duration");
	refused("create db --cache x --backing y --mode wb --mode wt", "given twice");
	refused("create db --cache x --backing y --flush", "unknown option '--flush'");
	refused("create db --cache", "--cache needs a value");
	refused("--cache=x create db --backing=y --mode=xx", "bad mode 'xx'");
	refused("--json create db --cache x --backing y", "create: unknown option '--json'");
	refused("list --frob", "unknown option '--frob'");
	refused("--json", "no command given");
	refused("create db extra --cache x --backing y", "unexpected argument 'extra'");
	refused("attach db", "--backing DEV is required");
	refused("detach db --flush --keep-dirty", "exclude each other");
	refused("detach db --discard-dirty", "unknown option");
	refused("delete db --flush --discard-dirty", "exclude each other");
	refused("delete db --keep-dirty", "unknown option");
	refused("delete", "cache NAME is missing");
	refused("flush db --flush", "unknown option");
	refused("flush db --background=1", "takes no value");
	refused("set db", "at least one KEY=VALUE");
	refused("set db mode", "not KEY=VALUE");
	refused("set db nope=1", "unknown key 'nope'");
	refused("set db wb_max_inflight=0", "out of range");
	refused("set db mode=wt mode=wb", "given twice");
	refused("pid db", "what to do is missing");
	refused("pid db allow", "add, del or clear");
	refused("pid db allow add", "at least one PID");
	refused("pid db allow add 0", "bad PID '0'");
	refused("pid db allow add 4194305", "bad PID");
	refused("pid db allow add x1", "bad PID");
	refused("pid db allow add 5 5", "PID 5 is given twice");
	refused("pid db maybe add 5", "not allow, deny");
	refused("pid db allow push 5", "not add, del or clear");
	refused("pid db default cache-some", "not cache-all or cache-none");
	refused("pid db clear 5", "unexpected argument");
	refused("pid db allow add 5 --json", "--json goes with 'list'");
	refused("pid db cgroup-deny add", "at least one cgroup directory");
	refused("pid db cgroup-deny add id:5", "id:N names a cgroup to delete");
	refused("pid db cgroup-deny del id:x", "id:N names a cgroup to delete");
	refused("list extra", "unexpected argument");
	refused("list --all", "unknown option");
	refused("show", "cache NAME is missing");
	refused("hotplug", "DEV is missing");
	refused("ident", "DEV is missing");
}

static void t_args_accepted(void)
{
	struct vcc_args a;

	CHECK(!parse("set db mode=wt policy=fifo admit=on flush-period=10 dirty-high=8G dirty-low=1G seq-cutoff=off commit_ms=50", &a));
	CHECK(a.set.has_mode && a.set.mode == VCACHE_MODE_WT && a.set.has_policy);
	CHECK(a.set.v[VCACHE_P_COMMIT_MS] == 50 && a.set.v[VCACHE_P_ADMISSION] == 1);
	CHECK(!parse("pid db deny add 1 2 3", &a) && a.nr_pids == 3 &&
	      a.pids[2] == 3 && a.pid_list == VCACHE_PID_DENY &&
	      a.pid_op == VCACHE_PID_ADD && a.pid_cmd == VCC_PID_CHANGE);
	free(a.pids);
	CHECK(!parse("pid db allow clear", &a) && a.pid_op == VCACHE_PID_CLEAR);
	CHECK(!parse("pid db clear", &a) && a.pid_cmd == VCC_PID_CLEAR_ALL);
	CHECK(!parse("pid db default cache-none", &a) &&
	      a.pid_default == VCACHE_PID_CACHE_NONE);
	CHECK(!parse("pid db list --json", &a) && a.json);
	CHECK(!parse("detach db --keep-dirty", &a) && a.flags == VCACHE_F_KEEP_DIRTY);
	CHECK(!parse("detach db --flush", &a) && a.flags == VCACHE_F_FLUSH);
	CHECK(!parse("delete db --discard-dirty", &a) &&
	      a.flags == VCACHE_F_DISCARD_DIRTY);
	CHECK(!parse("delete db --flush", &a) && a.flags == VCACHE_F_FLUSH);
	CHECK(!parse("delete db", &a) && a.flags == 0);
	CHECK(!parse("flush db --background", &a) && a.background);
	CHECK(!parse("list --json", &a) && a.json && a.cmd == VCC_LIST);
	/* getopt_long: options anywhere, --opt=value */
	CHECK(!parse("--json list", &a) && a.json && a.cmd == VCC_LIST);
	CHECK(!parse("--json show db", &a) && a.json && a.cmd == VCC_SHOW &&
	      !strcmp(a.name, "db"));
	CHECK(!parse("show --json db", &a) && a.json && !strcmp(a.name, "db"));
	CHECK(!parse("--background flush db", &a) && a.background &&
	      a.cmd == VCC_FLUSH);
	CHECK(!parse("--json cards", &a) && a.json && a.cmd == VCC_CARDS);
	CHECK(!parse("show db --help", &a) && a.help &&
	      !strcmp(a.help_cmd, "show"));
	CHECK(!parse("--version", &a) && a.version);
	CHECK(!parse("pid --json db list", &a) && a.json &&
	      a.pid_cmd == VCC_PID_LIST_CMD);
	CHECK(!parse("ls", &a) && a.cmd == VCC_LIST);
	CHECK(!parse("show db --json", &a) && a.json && a.cmd == VCC_SHOW);
}

/* ---------------------------------------------------------------- guard */
static void canned(struct vcc_cache_info *c)
{
	struct vcc_backing_info *b;

	memset(c, 0, sizeof(*c));
	strcpy(c->name, "db");
	c->has = 1ULL << VCACHE_A_NAME | 1ULL << VCACHE_A_STATE |
		 1ULL << VCACHE_A_MODE | 1ULL << VCACHE_A_REQ_MODE |
		 1ULL << VCACHE_A_POLICY | 1ULL << VCACHE_A_CACHE_DEV |
		 1ULL << VCACHE_A_CACHE_DISK | 1ULL << VCACHE_A_CACHE_SIZE |
		 1ULL << VCACHE_A_BLOCK_SIZE | 1ULL << VCACHE_A_FLUSH |
		 1ULL << VCACHE_A_PARAMS | 1ULL << VCACHE_A_STATS |
		 1ULL << VCACHE_A_BACKING | 1ULL << VCACHE_A_PID_DEFAULT;
	c->state = VCACHE_STATE_DEGRADED;
	c->mode = VCACHE_MODE_WT;
	c->req_mode = VCACHE_MODE_WB;
	c->policy = VCACHE_POLICY_FIFO;
	c->cache_dev = (u64)250 << 32;
	strcpy(c->cache_disk, "vflash0");
	c->cache_size = 1ULL << 30;
	c->block_size = 4096;
	c->pid_default = VCACHE_PID_CACHE_NONE;
	c->flush.has = 0x7e;
	c->flush.running = true;
	c->flush.target = 1000;
	c->flush.done = 250;
	c->flush.remaining = 750;
	c->flush.seq = 3;
	c->has_param[VCACHE_P_DIRTY_HIGH_PCT] = true;
	c->param[VCACHE_P_DIRTY_HIGH_PCT] = 60;
	c->has_param[VCACHE_P_COMMIT_MS] = true;
	c->param[VCACHE_P_COMMIT_MS] = 100;
	c->has_stat[VCACHE_S_READS] = true;
	c->stat[VCACHE_S_READS] = 12345678901ULL;
	c->has_stat[VCACHE_S_LOST_READS] = true;
	c->nr_backing = 2;
	b = &c->backing[0];
	b->has = 0x3fe;
	b->dev = (u64)254 << 32 | 16;
	strcpy(b->ident, "serial:vcache-hdd");
	strcpy(b->devname, "db");
	strcpy(b->disk, "vcache0");
	strcpy(b->backing_disk, "vdb");
	b->size = 4ULL << 30;
	b->dirty_bytes = 3 * 1048576;
	b = &c->backing[1];
	b->has = 1 << VCACHE_B_DEVNAME | 1 << VCACHE_B_STATE |
		 1 << VCACHE_B_IDENT | 1 << VCACHE_B_DIRTY_BYTES;
	strcpy(b->devname, "db-1");
	strcpy(b->ident, "wwid:naa.1");
	b->state = VCACHE_BS_WAITING;
}

static void t_guard(void)
{
	struct vcc_cache_info c;

	canned(&c);
	CHECK(vcc_guard_detach(&c, &c.backing[0], 0) == -1);
	CHECK(vcc_err_code == VCACHE_EXIT_BUSY);
	CHECK(strstr(vcc_errbuf, "3.0 MiB (3145728 bytes)"));
	CHECK(strstr(vcc_errbuf, "/dev/vdb"));
	CHECK(strstr(vcc_errbuf, "vcache-config flush db --backing /dev/vdb"));
	CHECK(strstr(vcc_errbuf, "--flush") && strstr(vcc_errbuf, "--keep-dirty"));
	CHECK(strstr(vcc_errbuf, "degraded"));
	CHECK(!vcc_guard_detach(&c, &c.backing[0], VCACHE_F_FLUSH));
	CHECK(!vcc_guard_detach(&c, &c.backing[0], VCACHE_F_KEEP_DIRTY));
	CHECK(!vcc_guard_detach(&c, &c.backing[1], 0));	/* clean */
	CHECK(vcc_guard_delete(&c, 0) == -1 && vcc_err_code == VCACHE_EXIT_BUSY);
	CHECK(strstr(vcc_errbuf, "db -> vdb (attached): 3.0 MiB (3145728 bytes)"));
	CHECK(strstr(vcc_errbuf, "--discard-dirty") && strstr(vcc_errbuf, "LOST"));
	CHECK(!strstr(vcc_errbuf, "db-1"));
	CHECK(!vcc_guard_delete(&c, VCACHE_F_FLUSH));
	CHECK(!vcc_guard_delete(&c, VCACHE_F_DISCARD_DIRTY));
	/* the statistic wins over the sum */
	c.has_stat[VCACHE_S_DIRTY_BYTES] = true;
	c.stat[VCACHE_S_DIRTY_BYTES] = 0;
	CHECK(vcc_cache_dirty(&c) == 0 && !vcc_guard_delete(&c, 0));
	c.stat[VCACHE_S_DIRTY_BYTES] = 4096;
	CHECK(vcc_guard_delete(&c, 0) && strstr(vcc_errbuf, "(4096 bytes)"));
}

static void t_names(void)
{
	CHECK(!strcmp(vcc_name_of(vcc_modes, VCACHE_MODE_PT), "pt"));
	CHECK(!strcmp(vcc_name_of(vcc_states, 99), "unknown-99"));
	CHECK(!strcmp(vcc_name_list(vcc_modes), "wb, wt, wa, pt"));
	CHECK(vcc_name_lookup(vcc_modes, "writeback") == VCACHE_MODE_WB);
	CHECK(!strcmp(vcc_stat_name(VCACHE_S_LOST_READS), "lost_reads"));
	CHECK(vcc_stat_name(VCACHE_S_PAD) == NULL);
}

/* ----------------------------------------------------------- JSON files */
static int write_json(const char *dir)
{
	struct vcc_cache_info c[2];
	struct vcc_pid_info p = { .name = "db", .has_default = true,
				  .pid_default = VCACHE_PID_CACHE_ALL };
	u32 allow[] = { 1, 42 }, deny[] = { 4194304 };
	char path[PATH_MAX + 16];
	FILE *f;

	canned(&c[0]);
	memset(&c[1], 0, sizeof(c[1]));
	strcpy(c[1].name, "empty");
	p.nr[0] = 2;
	p.pids[0] = allow;
	p.nr[1] = 1;
	p.pids[1] = deny;
	snprintf(path, sizeof(path), "%s/show.json", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	vcc_print_json.show(f, &c[0], false);
	fclose(f);
	snprintf(path, sizeof(path), "%s/list.json", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	vcc_print_json.list(f, c, 2);
	fclose(f);
	snprintf(path, sizeof(path), "%s/pids.json", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	vcc_print_json.pids(f, &p);
	fclose(f);
	/* and the text printers, for a look and a few greps */
	snprintf(path, sizeof(path), "%s/show.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	vcc_print_text.show(f, &c[0], true);
	vcc_print_text.list(f, c, 2);
	vcc_print_text.pids(f, &p);
	fclose(f);
	return 0;
}

static const struct unit_test u_size_good = { t_size_good };
static const struct unit_test u_size_bad = { t_size_bad };
static const struct unit_test u_pct_or_size = { t_pct_or_size };
/* ------------------------------------------------ a step in a child */
static int job_ret(void *arg)
{
	return *(int *)arg;
}

static int job_fails(void *arg)
{
	return vcc_fail(4, "%s: refused (%d)", (const char *)arg, 7);
}

static int job_slow(void *arg)
{
	usleep(800 * 1000);
	return *(int *)arg;
}

static int job_dies(void *arg)
{
	(void)arg;
	_exit(3);
}

static void t_job(void)
{
	struct vcc_job j, js[3];
	int v = 1, two = 2, three = 3, k;

	snprintf(j.what, sizeof(j.what), "/dev/x");
	CHECK(!vcc_job_start(&j, job_ret, &v));
	CHECK(vcc_job_wait(&j, 5000) == 1 && j.r == 1);
	CHECK(j.fd == -1);
	CHECK(vcc_job_wait(&j, 0) == 1);	/* done stays done */

	/* the child's error comes back as its message and exit code */
	vcc_errbuf[0] = '\0';
	vcc_job_start(&j, job_fails, "/dev/y");
	CHECK(vcc_job_wait(&j, 5000) == 1 && j.r == -1 && j.code == 4);
	CHECK(!strcmp(j.msg, "/dev/y: refused (7)"));
	CHECK(vcc_errbuf[0] == '\0');	/* not this process's error */

	/* a slow step: not done within 50 ms, then waited for */
	vcc_job_start(&j, job_slow, &two);
	CHECK(vcc_job_wait(&j, 50) == 0);
	CHECK(j.fd >= 0);
	CHECK(vcc_job_wait(&j, -1) == 1 && j.r == 2);

	/* a child that ends without a result is a failure, said so */
	vcc_job_start(&j, job_dies, NULL);
	CHECK(vcc_job_wait(&j, 5000) == 1 && j.r == -1);
	CHECK(strstr(j.msg, "/dev/x: its worker ended without a result"));

	/* the first of several to end: the quick one, then the slow one */
	CHECK(!vcc_job_start(&js[0], job_slow, &two));
	CHECK(!vcc_job_start(&js[1], job_ret, &three));
	CHECK(!vcc_job_start(&js[2], job_slow, &v));
	k = vcc_job_wait_any(js, 3, 5000);
	CHECK(k == 1 && js[1].r == 3);
	CHECK(vcc_job_wait_any(js, 3, 0) == 1);	/* still there, done */
	js[1] = js[2];
	CHECK(vcc_job_wait_any(js, 2, 50) == -1);	/* none within 50 ms */
	k = vcc_job_wait_any(js, 2, -1);
	CHECK(k == 0 || k == 1);
	if (k == 0 || k == 1) {
		CHECK(js[k].r == (k == 0 ? 2 : 1));
		js[k] = js[1 - k];
	}
	CHECK(vcc_job_wait_any(js, 1, -1) == 0 && js[0].fd == -1);
}

static const struct unit_test u_job = { t_job };
static const struct unit_test u_duration = { t_duration };
static const struct unit_test u_every_param_key = { t_every_param_key };
static const struct unit_test u_friendly_keys = { t_friendly_keys };
static const struct unit_test u_settings_conflicts = { t_settings_conflicts };
static const struct unit_test u_ident_fake_sysfs = { t_ident };
static const struct unit_test u_ident_fit_hash = { t_ident_fit };
static const struct unit_test u_sha256 = { t_sha256 };
static const struct unit_test u_args_refused = { t_args_refused };
static const struct unit_test u_args_accepted = { t_args_accepted };
static const struct unit_test u_guard = { t_guard };
static const struct unit_test u_names = { t_names };
#define T(n) { .name = #n, .test_func = run, .initial_state = (void *)&u_##n }
static const struct CMUnitTest tests[] = {
	T(size_good),
	T(size_bad),
	T(pct_or_size),
	T(duration),
	T(every_param_key),
	T(friendly_keys),
	T(settings_conflicts),
	T(ident_fake_sysfs),
	T(ident_fit_hash),
	T(sha256),
	T(args_refused),
	T(args_accepted),
	T(guard),
	T(names),
	T(job)
};
#undef T

int main(int argc, char **argv)
{
	char cmd[PATH_MAX + 16];

	if (argc == 3 && !strcmp(argv[1], "--json"))
		return write_json(argv[2]);
	int nfail;

	fake_sysfs();
	nfail = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", root);
	printf("unit: %d passed, %d failed\n",
	       (int)ARRAY_SIZE(tests) - nfail, nfail);
	return nfail != 0;
}
