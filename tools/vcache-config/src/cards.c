// SPDX-License-Identifier: GPL-2.0
/*
 * cards.c - `vcache-config cards [--json]`: every vcache card's identity,
 * space and health, from sysfs (/sys/class/block/vflashN/device/, see
 * vcache(4) "CARD SYSFS"), in the spirit of `nvme smart-log`.  No netlink:
 * it works whatever the caches do.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "ident.h"
#include "util.h"

#define VCC_MAX_CARDS 64

struct card_region {
	char name[64];
	u64 start, bytes, block;
	int open;
};

struct card {
	char disk[32], serial[64], model[64], fw[32], state[16], table[16];
	char damage[2][24];		/* why each copy is unusable */
	bool has_cap, has_raw, has_health;
	u64 capacity, lba, raw;
	unsigned int nregions;
	struct card_region region[16];
	/* health: -1 where the card did not answer */
	long long pct_used, media_errors, unsafe, power_cycles, temp_k;
};

/* @dir/@file's first line, without the newline; false if unreadable */
static bool attr(const char *dir, const char *file, char *out, size_t len)
{
	char path[2 * PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(out, (int)len, f)) {
		fclose(f);
		return false;
	}
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return true;
}

static bool attr_u64(const char *dir, const char *file, u64 *v)
{
	char b[64], *end;

	if (!attr(dir, file, b, sizeof(b)))
		return false;
	errno = 0;
	*v = strtoull(b, &end, 10);
	return !errno && end != b;
}

static long long health(const char *dir, const char *file)
{
	u64 v;

	return attr_u64(dir, file, &v) ? (long long)v : -1;
}

static void read_space(const char *dir, struct card *c)
{
	char path[2 * PATH_MAX], line[256];
	struct card_region *r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/space", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long raw;

		if (sscanf(line, "table %15s generation %*u regions %*u raw_bytes %llu",
			   c->table, &raw) == 2) {
			c->raw = raw;
			c->has_raw = true;
		} else if (sscanf(line, "damaged copy_a %23s copy_b %23s",
				  c->damage[0], c->damage[1]) == 2) {
			continue;
		} else if (c->nregions < 16) {
			unsigned long long s, b, bs;

			r = &c->region[c->nregions];
			if (sscanf(line, "region %63s start %llu bytes %llu block %llu open %d",
				   r->name, &s, &b, &bs, &r->open) == 5) {
				r->start = s;
				r->bytes = b;
				r->block = bs;
				c->nregions++;
			}
		}
	}
	fclose(f);
}

static int card_cmp(const void *a, const void *b)
{
	const struct card *x = a, *y = b;
	size_t lx = strlen(x->disk), ly = strlen(y->disk);

	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->disk, y->disk);
}

/* Every vflashN (not its partitions) under ROOT/class/block. */
static int read_cards(struct card *cards, unsigned int *n)
{
	char base[PATH_MAX], dir[PATH_MAX + 300], hdir[PATH_MAX + 310];
	struct dirent *e;
	DIR *d;

	*n = 0;
	snprintf(base, sizeof(base), "%s/class/block", vcc_sysfs_root());
	d = opendir(base);
	if (!d)
		return vcc_fail(VCACHE_EXIT_FAIL, "cannot read %s: %s", base, strerror(errno));
	while ((e = readdir(d)) && *n < VCC_MAX_CARDS) {
		struct card *c = &cards[*n];
		const char *p = e->d_name + 6;

		if (strncmp(e->d_name, "vflash", 6) || !*p || strspn(p, "0123456789") != strlen(p))
			continue;
		memset(c, 0, sizeof(*c));
		vcc_strlcpy(c->disk, e->d_name, sizeof(c->disk));
		snprintf(dir, sizeof(dir), "%s/%s/device", base, e->d_name);
		attr(dir, "serial", c->serial, sizeof(c->serial));
		attr(dir, "model", c->model, sizeof(c->model));
		attr(dir, "firmware_rev", c->fw, sizeof(c->fw));
		attr(dir, "state", c->state, sizeof(c->state));
		c->has_cap = attr_u64(dir, "capacity", &c->capacity);
		attr_u64(dir, "lba_size", &c->lba);
		read_space(dir, c);
		snprintf(hdir, sizeof(hdir), "%s/health", dir);
		c->pct_used = health(hdir, "percent_used");
		c->media_errors = health(hdir, "media_errors");
		c->unsafe = health(hdir, "unsafe_shutdowns");
		c->power_cycles = health(hdir, "power_cycles");
		c->temp_k = health(hdir, "temperature_k");
		c->has_health = c->pct_used >= 0;
		(*n)++;
	}
	closedir(d);
	qsort(cards, *n, sizeof(*cards), card_cmp);
	return 0;
}

static json_object *num_or_null(bool has, long long v)
{
	return has && v >= 0 ? json_object_new_int64(v) : NULL;
}

static json_object *str_or_null(const char *s)
{
	return s[0] ? json_object_new_string(s) : NULL;
}

static void print_json(const struct card *cards, unsigned int n)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		const struct card *c = &cards[i];
		json_object *j = json_object_new_object(), *rs = json_object_new_array();

		json_object_object_add(j, "disk", json_object_new_string(c->disk));
		json_object_object_add(j, "serial", str_or_null(c->serial));
		json_object_object_add(j, "model", str_or_null(c->model));
		json_object_object_add(j, "firmware", str_or_null(c->fw));
		json_object_object_add(j, "state", str_or_null(c->state));
		json_object_object_add(j, "capacity_bytes", num_or_null(c->has_cap, (long long)c->capacity));
		json_object_object_add(j, "lba_size_bytes", num_or_null(c->lba, (long long)c->lba));
		json_object_object_add(j, "table", str_or_null(c->table));
		json_object_object_add(j, "raw_size_bytes", num_or_null(c->has_raw, (long long)c->raw));
		if (c->damage[0][0]) {
			json_object *d = json_object_new_object();

			json_object_object_add(d, "copy_a", json_object_new_string(c->damage[0]));
			json_object_object_add(d, "copy_b", json_object_new_string(c->damage[1]));
			json_object_object_add(j, "table_damage", d);
		}
		for (k = 0; k < c->nregions; k++) {
			const struct card_region *r = &c->region[k];
			json_object *rj = json_object_new_object();

			json_object_object_add(rj, "name", json_object_new_string(r->name));
			json_object_object_add(rj, "start_bytes", json_object_new_int64((long long)r->start));
			json_object_object_add(rj, "size_bytes", json_object_new_int64((long long)r->bytes));
			json_object_object_add(rj, "block_size_bytes", json_object_new_int64((long long)r->block));
			json_object_object_add(rj, "open", json_object_new_boolean(r->open));
			json_object_array_add(rs, rj);
		}
		json_object_object_add(j, "regions", rs);
		json_object_object_add(j, "percent_used", num_or_null(true, c->pct_used));
		json_object_object_add(j, "media_errors", num_or_null(true, c->media_errors));
		json_object_object_add(j, "unsafe_shutdowns", num_or_null(true, c->unsafe));
		json_object_object_add(j, "power_cycles", num_or_null(true, c->power_cycles));
		json_object_object_add(j, "temperature_c",
				       num_or_null(c->temp_k >= 0, c->temp_k - 273));
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "cards", a);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
		JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static void print_text(const struct card *cards, unsigned int n)
{
	char a[32], b[32];
	unsigned int i, k;

	if (!n)
		printf("no vcache card\n");
	for (i = 0; i < n; i++) {
		const struct card *c = &cards[i];

		printf("%s  serial %s  model %s  firmware %s  %s\n", c->disk,
		       c->serial[0] ? c->serial : "-", c->model[0] ? c->model : "-",
		       c->fw[0] ? c->fw : "-", c->state[0] ? c->state : "-");
		printf("  capacity %s, raw disk %s, card-space table %s, %u region%s\n",
		       c->has_cap ? vcc_human(c->capacity, a, sizeof(a)) : "-",
		       c->has_raw ? vcc_human(c->raw, b, sizeof(b)) : "-",
		       c->table[0] ? c->table : "-", c->nregions,
		       c->nregions == 1 ? "" : "s");
		if (c->damage[0][0])
			printf("  card-space table damaged (copy A: %s, copy B: %s): the raw disk is\n"
			       "  read-only and no cache on this card can be loaded; rewrite it with\n"
			       "  vcache-config repair-table /dev/%s\n",
			       c->damage[0], c->damage[1], c->disk);
		for (k = 0; k < c->nregions; k++)
			printf("    cache %s: %s at %llu%s\n", c->region[k].name,
			       vcc_human(c->region[k].bytes, a, sizeof(a)),
			       (unsigned long long)c->region[k].start,
			       c->region[k].open ? "" : " (not open)");
		if (c->has_health)
			printf("  health: %lld%% used, %lld media errors, %lld unsafe shutdowns, %lld power cycles, %s\n",
			       c->pct_used, c->media_errors < 0 ? 0 : c->media_errors,
			       c->unsafe < 0 ? 0 : c->unsafe,
			       c->power_cycles < 0 ? 0 : c->power_cycles,
			       c->temp_k >= 0 ? (snprintf(a, sizeof(a), "%lld C", c->temp_k - 273), a) : "temperature -");
		else
			printf("  health: not available (card not live)\n");
	}
}

int vcc_cmd_cards(struct vcc_nl *nl, struct vcc_args *a)
{
	static struct card cards[VCC_MAX_CARDS];
	unsigned int n;

	(void)nl;
	if (read_cards(cards, &n))
		return -1;
	if (a->json)
		print_json(cards, n);
	else
		print_text(cards, n);
	return 0;
}
