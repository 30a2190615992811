// SPDX-License-Identifier: GPL-2.0
/* names.c - policy and mode names, default configuration. */
#include <string.h>

#include "replay.h"

const char *const vs_policy_names[VS_POL_NR] = {
	"fifo", "lru", "lru+admit", "s3fifo", "s3fifo+admit", "tinylfu"
};
const char *const vs_mode_names[VS_MODE_NR] = { "wb", "wt", "wa" };

void vs_cfg_init(struct vs_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->policy = VS_POL_LRU;
	c->mode = VS_MODE_WB;
	c->block_size = 4096;
	c->dirty_high_pct = -1;
	c->dirty_low_pct = -1;
	c->flush_period_s = -1;
	c->seq_thresh_kib = -1;
	c->admit_pct = -1;
	c->flash_read_ns = 80000;
	c->flash_write_ns = 20000;
	c->hdd_seek_ns = 8000000;
	c->hdd_bytes_per_s = 150000000;
	c->flash_phys_block = 4096;
}
