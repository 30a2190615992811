/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host I/O path's files (vc_io.c, vc_read.c, vc_write.c) share;
 * private to them.
 */
#ifndef VC_IO_H
#define VC_IO_H

#include "vc_internal.h"

/* vc_host_io.eflags */
#define HF_MISS		(1 << 0)
#define HF_HIT		(1 << 1)
#define HF_BYP_SEQ	(1 << 2)
#define HF_BYP_PID	(1 << 3)
#define HF_PREFLUSHED	(1 << 4)
#define HF_BYPASS	(1 << 5)	/* a block went around the cache */

/* The cache device's sector of block @blk's data. */
static inline u64 vc_blk_sector(struct vc_cache *c, u32 blk)
{
	return c->data_start + ((u64)blk << (c->block_shift - VC_SECTOR_SHIFT));
}

/*
 * Where a write piece's data is: the host's buffer, zeroes, or (a
 * partial write that allocated its block) the whole block in r->bounce.
 */
static inline struct vc_buf *vc_req_src_buf(struct vc_req *r)
{
	if (r->rmw)
		return r->bounce;
	return r->zero ? r->c->zero_buf : r->hio->buf;
}

static inline u32 vc_req_src_off(struct vc_req *r)
{
	if (r->rmw)
		return 0;
	return r->zero ? 0 : r->hio->buf_off + r->hoff;
}

/* The backing device of a piece. */
static inline struct vc_dev *vc_req_bdev(struct vc_req *r)
{
	return r->c->bdev[vc_key_dev(r->key)].dev;
}

static inline void vc_ef_or(struct vc_host_io *hio, int bits)
{
	int old = vc_atomic_read(&hio->eflags);

	while (!((old & bits) == bits)) {
		int cur = vc_atomic_cmpxchg(&hio->eflags, old, old | bits);

		if (cur == old)
			break;
		old = cur;
	}
}

static inline void vc_io_init(struct vc_dev_io *io, struct vc_dev *dev,
			      u8 op, u32 flags, u64 sector, u32 len,
			      struct vc_buf *buf, u32 buf_off,
			      vc_dev_end_io_t end, void *priv)
{
	vc_memset(io, 0, sizeof(*io));
	io->dev = dev;
	io->op = op;
	io->flags = flags;
	io->sector = sector;
	io->len = len;
	io->buf = buf;
	io->buf_off = buf_off;
	io->end_io = end;
	io->private = priv;
}

static inline void vc_count_path(struct vc_req *r, u32 off)
{
	struct vc_cache *c = r->c;
	u32 base = vc_key_dev(r->key) * VC_NR_DSTATS;

	_Static_assert(VC_DSTAT_OFF(write_miss_bytes) - VC_DSTAT_OFF(write_misses) ==
		       VC_DSTAT_OFF(read_hit_bytes) - VC_DSTAT_OFF(read_hits),
		       "path counters and their bytes in the same order");
	vc_stat_add(&c->dst, base + off, 1);
	vc_stat_add(&c->dst, base + off + VC_DSTAT_OFF(read_hit_bytes) -
		    VC_DSTAT_OFF(read_hits), r->len);
	if (off == VC_DSTAT_OFF(write_misses))
		vc_ef_or(r->hio, HF_MISS);
}

/* vc_io.c: request helpers */
void vc_req_free(struct vc_req *r);
void vc_req_done(struct vc_req *r, int err);
void vc_req_ack(struct vc_req *r, int err);
void vc_note_backing_io(struct vc_cache *c);
void vc_home_write_done(struct vc_cache *c, u32 dev);
bool vc_unlose_locked(struct vc_cache *c, struct vc_set *s, u32 blk);
void vc_unlose_then(struct vc_req *r, struct vc_set *s, u32 blk);
void vc_count_bypass(struct vc_req *r, int reason);

/* vc_read.c */
bool vc_fill_overtake_locked(struct vc_set *s, u32 blk);
bool vc_block_fits(struct vc_cache *c, u64 key);
bool vc_admission_refuses(struct vc_cache *c, struct vc_set *s, u64 key);
void vc_dispatch_read(struct vc_req *r);

/* vc_write.c */
void vc_byp_start_locked(struct vc_set *s);
void vc_write_backing_only(struct vc_req *r);
void vc_dispatch_write(struct vc_req *r);

#endif /* VC_IO_H */
