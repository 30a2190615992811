/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-only glue of the vcache engine environment: block devices as
 * struct vc_dev (bios, completions handed to the vcache workqueue).
 */
#ifndef VC_LINUX_H
#define VC_LINUX_H

#include <linux/blk_types.h>
#include <linux/bvec.h>

#include "vc_env.h"

/*
 * A device's direct path (a card region: vcd_region_direct()): issue the
 * bytes of @src at @iter at @sector as one request on the device's
 * hardware queue and call @end(@priv, status) once from its completion,
 * any context; nonzero: nothing done, send a bio.  Never sleeps.
 */
typedef void (*vc_linux_direct_end_t)(void *priv, blk_status_t sts);
typedef int (*vc_linux_direct_t)(void *ctx, blk_opf_t opf, sector_t sector,
				 struct bio *src, struct bvec_iter iter,
				 vc_linux_direct_end_t end, void *priv);

struct vc_linux_dev {
	struct vc_dev dev;
	struct block_device *bdev;
	vc_linux_direct_t direct;	/* NULL: bios only */
	void *direct_ctx;
};

/* Make @ld a vc_dev issuing bios to @bdev (opened by the caller). */
void vc_linux_dev_init(struct vc_linux_dev *ld, struct block_device *bdev,
		       const char *name);
/*
 * Give @ld a direct path: read hits of host bios (VC_DEV_IRQ_END reads
 * of a bio's pages) try it before a bio (module parameter direct_hits).
 */
void vc_linux_dev_set_direct(struct vc_linux_dev *ld, vc_linux_direct_t fn,
			     void *ctx);
/*
 * mempool_alloc(GFP_NOIO) for the I/O path: never NULL.  Inside a
 * ->submit_bio, when @pool is empty, the engine's bios parked on
 * current->bio_list are first handed to a worker that submits them, so
 * the wait cannot be for a free only they would bring.
 */
void *vc_linux_mempool_alloc(mempool_t *pool);

#endif /* VC_LINUX_H */
