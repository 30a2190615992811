/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guard.h - the checks before detach and delete: dirty data that only the
 * cache holds is never dropped or stranded without being asked for.  Pure
 * logic over a parsed GET reply; no netlink.
 */
#ifndef VCC_GUARD_H
#define VCC_GUARD_H

#include "info.h"

/*
 * 0 if detaching @b from @c with @flags (VCACHE_F_*) may go ahead, or -1
 * with a message (VCACHE_EXIT_BUSY) saying how much is dirty, where, and
 * what to do.
 */
int vcc_guard_detach(const struct vcc_cache_info *c,
		     const struct vcc_backing_info *b, u32 flags);
int vcc_guard_delete(const struct vcc_cache_info *c, u32 flags);

#endif
