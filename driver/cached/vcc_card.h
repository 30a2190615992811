/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flash of a cache (vcc_card.c): a region of a vcache card, or any
 * other block device; restore of card caches at probe; card events.
 */
#ifndef VCC_CARD_H
#define VCC_CARD_H

#include "vcc.h"

int vcc_card_init(void);
void vcc_card_exit(void);

/* Open (create) the flash of new cache @c on @devt; @size 0: all. */
int vcc_flash_open_new(struct vcc_cache *c, dev_t devt, u64 size,
		       struct netlink_ext_ack *ext);
/* Close the flash (engine stopped); the region stays on the card. */
void vcc_flash_close(struct vcc_cache *c);
/* Give the flash back (delete): the card region is deleted. */
int vcc_flash_forget(struct vcc_cache *c);

/* vcc_cache.c, for restore */
struct vcc_cache *vcc_alloc(const char *name);
void vcc_free(struct vcc_cache *c);
void vcc_publish(struct vcc_cache *c);
void vcc_restore_devs(struct vcc_cache *c);
void vcc_stop_all(struct vcd_card *card);
u32 vcc_engine_block_size(struct vcc_cache *c);
bool vcc_devt_in_use(dev_t devt);
bool vcc_name_taken(const char *name, struct vcd_card *card);
void vcc_card_failed(struct vcc_cache *c);
bool vcc_card_killed(struct vcc_cache *c);
bool vcc_is_ready(void);

#endif /* VCC_CARD_H */
