/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ident.h - block devices: what sysfs says about them, and the identity
 * string by which vcache recognises a backing device across reboots.
 * No netlink here.  The sysfs root is $VCACHE_SYSFS_ROOT or /sys.
 *
 * Identity (VCACHE_B_IDENT), first that exists, values trimmed, inner
 * white space and unprintable bytes turned into '_':
 *   device-mapper:  dm/uuid            -> "dm:<uuid>"
 *                   (none without a uuid: a dm name is reused freely,
 *                   another disk could take it: --ident is needed)
 *   md RAID:        md/uuid            -> "md:<uuid>"
 *   whole disk:     wwid, device/wwid  -> "wwid:<wwid>"
 *                   serial, device/serial -> "serial:<serial>"
 *   partition N:    the disk's identity + "-partN"; if the disk has none,
 *                   PARTUUID of its uevent -> "partuuid:<uuid>"
 * An identity longer than VCACHE_IDENT_MAX - 1 (47) characters becomes
 * "<kind>:sha256=<the first 16 bytes of the SHA-256 of the whole string,
 * 32 hex digits>", <kind> being the part before the first ':'.
 */
#ifndef VCC_IDENT_H
#define VCC_IDENT_H

#include <vcache/vcache_nl.h>

#include "util.h"

struct vcc_dev {
	const char *path;		/* as given */
	unsigned int major, minor;
	char name[64];			/* sdb1, vflash0 */
	bool partition;
	unsigned int partno;
	unsigned int pmajor, pminor;	/* the whole disk (itself if whole) */
	char pname[64];
	bool is_card;			/* a vcache card (vflashN) or on one */
	bool is_cached;			/* a vcache cached device (vcacheN) */
	char ident[VCACHE_IDENT_MAX];	/* empty: none */
};

const char *vcc_sysfs_root(void);

static inline u64 vcc_devnum(unsigned int major, unsigned int minor)
{
	return (u64)major << 32 | minor;
}

/*
 * Look @major:@minor up in sysfs and fill @d (ident included, empty if
 * the device has none).  0, or -1 with an error.
 */
int vcc_dev_sysfs(unsigned int major, unsigned int minor, struct vcc_dev *d);
/* stat() @path (must be a block device), then vcc_dev_sysfs(). */
int vcc_dev_open(const char *path, struct vcc_dev *d);

/* The identity of a whole disk's sysfs directory @dir into @out; 0 or -1. */
int vcc_ident_dir(const char *dir, char *out, size_t len);
/* Shorten @full to fit VCACHE_IDENT_MAX by the hash rule. */
void vcc_ident_fit(const char *full, char out[VCACHE_IDENT_MAX]);

#endif
