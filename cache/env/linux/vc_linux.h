/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-only glue of the vcache engine environment: block devices as
 * struct vc_dev (bios, completions handed to the vcache workqueue).
 */
#ifndef VC_LINUX_H
#define VC_LINUX_H

#include "vc_env.h"

struct vc_linux_dev {
	struct vc_dev dev;
	struct block_device *bdev;
};

/* Make @ld a vc_dev issuing bios to @bdev (opened by the caller). */
void vc_linux_dev_init(struct vc_linux_dev *ld, struct block_device *bdev,
		       const char *name);

#endif /* VC_LINUX_H */
