// SPDX-License-Identifier: GPL-2.0
/*
 * guard.c - refuse detach/delete of dirty data without --flush or an
 * explicit --keep-dirty / --discard-dirty (guard.h).
 */
#include <stdio.h>
#include <string.h>

#include "guard.h"
#include "names.h"

/* "1.5 GiB (1610612736 bytes)" */
static const char *amount(u64 bytes, char *buf, size_t len)
{
	char h[32];

	snprintf(buf, len, "%s (%llu bytes)", vcc_human(bytes, h, sizeof(h)),
		 (unsigned long long)bytes);
	return buf;
}

static const char *disk_of(const struct vcc_backing_info *b)
{
	if (VCC_HAS(b, VCACHE_B_BACKING_DISK) && b->backing_disk[0])
		return b->backing_disk;
	return NULL;
}

int vcc_guard_detach(const struct vcc_cache_info *c,
		     const struct vcc_backing_info *b, u32 flags)
{
	const char *disk = disk_of(b);
	char amt[64], dev[80];

	if (!b->dirty_bytes || (flags & (VCACHE_F_FLUSH | VCACHE_F_KEEP_DIRTY)))
		return 0;
	if (disk)
		snprintf(dev, sizeof(dev), "/dev/%s", disk);
	else
		snprintf(dev, sizeof(dev), "DEV");
	return vcc_fail(VCACHE_EXIT_BUSY,
			"cannot detach %s (cache %s, %s; backing device %s, %s, identity %s): %s of dirty data for it is only on the cache.\n"
			"  write it back first:    vcache-config flush %s --backing %s, then detach again\n"
			"  or in one step:         vcache-config detach %s --flush\n"
			"  or keep it on the cache: vcache-config detach %s --keep-dirty (detached now; the dirty data stays on the cache and is written back when the device is attached again; until then the disk alone holds stale data)",
			b->devname, c->name, vcc_name_of(vcc_states, c->state),
			disk ? dev : "not present",
			vcc_name_of(vcc_bstates, b->state),
			b->ident[0] ? b->ident : "unknown",
			amount(b->dirty_bytes, amt, sizeof(amt)),
			c->name, dev, b->devname, b->devname);
}

int vcc_guard_delete(const struct vcc_cache_info *c, u32 flags)
{
	u64 dirty = vcc_cache_dirty(c);
	char amt[64], list[1024];
	size_t n = 0;
	unsigned int i;

	if (!dirty || (flags & (VCACHE_F_FLUSH | VCACHE_F_DISCARD_DIRTY)))
		return 0;
	list[0] = '\0';
	for (i = 0; i < c->nr_backing && n < sizeof(list); i++) {
		const struct vcc_backing_info *b = &c->backing[i];

		if (!b->dirty_bytes)
			continue;
		n += snprintf(list + n, sizeof(list) - n,
			      "    %s -> %s (%s): %s\n", b->devname,
			      disk_of(b) ? disk_of(b) : "not present",
			      vcc_name_of(vcc_bstates, b->state),
			      amount(b->dirty_bytes, amt, sizeof(amt)));
	}
	return vcc_fail(VCACHE_EXIT_BUSY,
			"cannot delete cache %s (%s): %s of dirty data is only on the cache:\n%s"
			"  write it back first: vcache-config flush %s, then delete again\n"
			"  or in one step:      vcache-config delete %s --flush\n"
			"  or throw it away:    vcache-config delete %s --discard-dirty (the dirty data is LOST: the backing devices keep older data)",
			c->name, vcc_name_of(vcc_states, c->state),
			amount(dirty, amt, sizeof(amt)), list, c->name, c->name,
			c->name);
}
