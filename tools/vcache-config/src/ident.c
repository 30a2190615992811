// SPDX-License-Identifier: GPL-2.0
/*
 * ident.c - block devices in sysfs and their identity (see ident.h).
 */
#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "ident.h"
#include "sha256.h"

const char *vcc_sysfs_root(void)
{
	const char *r = getenv("VCACHE_SYSFS_ROOT");

	return r && *r ? r : "/sys";
}

/*
 * Read @dir/@file, one line, cleaned (see ident.h).  Returns its length,
 * 0 if missing or empty.
 */
static size_t read_attr(const char *dir, const char *file, char *out,
			size_t len)
{
	char path[PATH_MAX + 32], raw[256];
	size_t n = 0, i, end;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(raw, sizeof(raw), f))
		raw[0] = '\0';
	fclose(f);
#define BLANK(c) (isspace((unsigned char)(c)) || !isprint((unsigned char)(c)))
	end = strlen(raw);
	while (end && BLANK(raw[end - 1]))
		end--;
	for (i = 0; i < end && BLANK(raw[i]); i++)
		;
	for (; i < end && n + 1 < len; i++) {
		if (!BLANK(raw[i]))
			out[n++] = raw[i];
		else if (out[n - 1] != '_')
			out[n++] = '_';
	}
#undef BLANK
	out[n] = '\0';
	return n;
}

static bool exists(const char *dir, const char *file)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

void vcc_ident_fit(const char *full, char out[VCACHE_IDENT_MAX])
{
	static const char hex[] = "0123456789abcdef";
	const char *colon = strchr(full, ':');
	size_t kind = colon ? (size_t)(colon - full) : 0;
	uint8_t h[32];
	char *p;
	int i;

	if (strlen(full) < VCACHE_IDENT_MAX) {
		strcpy(out, full);
		return;
	}
	vcc_sha256(full, strlen(full), h);
	if (kind > 8)
		kind = 8;
	memcpy(out, full, kind);
	p = out + kind;
	p += sprintf(p, ":sha256=");
	for (i = 0; i < 16; i++) {
		*p++ = hex[h[i] >> 4];
		*p++ = hex[h[i] & 15];
	}
	*p = '\0';
}

int vcc_ident_dir(const char *dir, char *out, size_t len)
{
	static const struct {
		const char *file, *kind;
	} order[] = {
		{ "dm/uuid", "dm" },
		{ "md/uuid", "md" },
		{ "wwid", "wwid" }, { "device/wwid", "wwid" },
		{ "serial", "serial" }, { "device/serial", "serial" },
	};
	bool dm = exists(dir, "dm"), md = exists(dir, "md");
	char v[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		/* a dm or md device is known by its uuid only */
		if (dm != !strncmp(order[i].file, "dm/", 3) ||
		    md != !strncmp(order[i].file, "md/", 3))
			continue;
		if (read_attr(dir, order[i].file, v, sizeof(v))) {
			snprintf(out, len, "%s:%s", order[i].kind, v);
			return 0;
		}
	}
	out[0] = '\0';
	return -1;
}

/* PARTUUID= of @dir/uevent, or "" */
static void partuuid(const char *dir, char *out, size_t len)
{
	char path[PATH_MAX + 32], line[256];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/uevent", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "PARTUUID=", 9))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (line[9])
			snprintf(out, len, "partuuid:%s", line + 9);
		break;
	}
	fclose(f);
}

static int parse_devno(const char *dir, unsigned int *ma, unsigned int *mi)
{
	char v[32];

	if (!read_attr(dir, "dev", v, sizeof(v)) ||
	    sscanf(v, "%u:%u", ma, mi) != 2)
		return -1;
	return 0;
}

/* Is the whole disk at @dir (named @name) a vcache card? */
static bool card_dir(const char *dir, const char *name)
{
	char path[PATH_MAX + 32], link[PATH_MAX];
	ssize_t n;

	if (!strncmp(name, "vflash", 6))
		return true;
	snprintf(path, sizeof(path), "%s/device/driver", dir);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return !strcmp(basename(link), "vcache");
}

int vcc_dev_sysfs(unsigned int major, unsigned int minor, struct vcc_dev *d)
{
	char link[PATH_MAX], dir[PATH_MAX], pdir[PATH_MAX], full[512], v[32];
	const char *root = vcc_sysfs_root();

	d->major = major;
	d->minor = minor;
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", root, major, minor);
	if (!realpath(link, dir))
		return vcc_fail(VCACHE_EXIT_NOENT,
				"%s (%u:%u) is not in sysfs (%s: %s)",
				d->path ? d->path : "device", major, minor, link,
				strerror(errno));
	vcc_strlcpy(d->name, basename(strcpy(link, dir)), sizeof(d->name));
	d->partition = read_attr(dir, "partition", v, sizeof(v)) > 0;
	snprintf(pdir, sizeof(pdir), "%s", dir);
	d->pmajor = major;
	d->pminor = minor;
	vcc_strlcpy(d->pname, d->name, sizeof(d->pname));
	if (d->partition) {
		d->partno = (unsigned int)strtoul(v, NULL, 10);
		snprintf(pdir, sizeof(pdir), "%s", dirname(strcpy(link, dir)));
		if (parse_devno(pdir, &d->pmajor, &d->pminor))
			return vcc_fail(VCACHE_EXIT_FAIL,
					"%s is partition %u, but its disk %s has no dev file",
					d->name, d->partno, pdir);
		vcc_strlcpy(d->pname, basename(strcpy(link, pdir)),
			    sizeof(d->pname));
	}
	d->is_card = card_dir(pdir, d->pname);
	d->is_cached = (!strncmp(d->pname, "vcache", 6) &&
			isdigit((unsigned char)d->pname[6])) ||
		       exists(pdir, "vcache");

	d->ident[0] = '\0';
	if (!vcc_ident_dir(pdir, full, sizeof(full) - 16)) {
		if (d->partition)
			snprintf(full + strlen(full), 16, "-part%u", d->partno);
	} else if (d->partition) {
		partuuid(dir, full, sizeof(full));
	}
	if (full[0])
		vcc_ident_fit(full, d->ident);
	return 0;
}

int vcc_dev_open(const char *path, struct vcc_dev *d)
{
	struct stat st;

	memset(d, 0, sizeof(*d));
	d->path = path;
	if (stat(path, &st))
		return vcc_fail(errno == ENOENT ? VCACHE_EXIT_NOENT : VCACHE_EXIT_USAGE,
				"%s: %s", path, strerror(errno));
	if (!S_ISBLK(st.st_mode))
		return vcc_usage_err("%s is not a block device (it is a %s); give a disk, partition, RAID or LVM volume (/dev/sdb, /dev/md0, ...)",
				     path, S_ISREG(st.st_mode) ? "regular file" :
				     S_ISDIR(st.st_mode) ? "directory" :
				     S_ISCHR(st.st_mode) ? "character device" :
				     "special file");
	return vcc_dev_sysfs(major(st.st_rdev), minor(st.st_rdev), d);
}
