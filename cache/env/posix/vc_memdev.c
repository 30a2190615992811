// SPDX-License-Identifier: GPL-2.0
/*
 * In-memory block device for tests (see vc_posix.h): inline completion,
 * optional volatile write cache, error injection.
 */
#include <stdio.h>
#include <stdlib.h>

#include "vc_posix.h"

struct vc_memdev {
	struct vc_dev dev;
	pthread_mutex_t lock;
	u8 *stable;
	u8 *vol;		/* volatile copy of sectors in vol_map */
	u8 *vol_map;		/* 1 = sector's current data is in vol */
	u64 *vol_list;		/* sectors written to vol since last flush */
	u64 vol_nr, vol_cap;
	bool volatile_cache;
	int (*fail)(void *ctx, const struct vc_dev_io *io);
	void *fail_ctx;
	struct vc_memdev_stats st;
};

static void commit_volatile(struct vc_memdev *m)
{
	u64 i;

	for (i = 0; i < m->vol_nr; i++) {
		u64 s = m->vol_list[i];

		if (!m->vol_map[s])
			continue;
		memcpy(m->stable + (s << 9), m->vol + (s << 9), 512);
		m->vol_map[s] = 0;
	}
	m->vol_nr = 0;
}

static int vol_add(struct vc_memdev *m, u64 s)
{
	if (m->vol_nr == m->vol_cap) {
		u64 cap = m->vol_cap ? m->vol_cap * 2 : 1024;
		u64 *n = realloc(m->vol_list, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		m->vol_list = n;
		m->vol_cap = cap;
	}
	m->vol_list[m->vol_nr++] = s;
	return 0;
}

/*
 * A write that covers a physical block only in part (smaller than one, or
 * not aligned to one): the device must read-modify-write it.
 */
static bool is_rmw(struct vc_memdev *m, const struct vc_dev_io *io)
{
	u64 pbs = m->dev.physical_block_size;

	if (pbs <= 512)
		return false;
	return ((io->sector << 9) | io->len) & (pbs - 1);
}

static int do_io(struct vc_memdev *m, struct vc_dev_io *io)
{
	u64 first = io->sector, nr = io->len >> 9, s;
	int err;

	if (io->op != VC_DEV_FLUSH &&
	    ((io->len & 511) || first + nr > m->dev.nr_sectors ||
	     first + nr < first))
		return -EIO;
	if (m->fail) {
		err = m->fail(m->fail_ctx, io);
		if (err)
			return err;
	}
	switch (io->op) {
	case VC_DEV_READ:
		m->st.reads++;
		m->st.read_bytes += io->len;
		for (s = 0; s < nr; s++) {
			u64 x = first + s;
			u8 *src = m->vol_map[x] ? m->vol : m->stable;

			vc_buf_from_mem(io->buf, io->buf_off + (u32)(s << 9),
					src + (x << 9), 512);
		}
		return 0;
	case VC_DEV_WRITE:
		m->st.writes++;
		m->st.write_bytes += io->len;
		if (is_rmw(m, io)) {
			m->st.rmw_writes++;
			if (io->flags & VC_DEV_META)
				m->st.meta_rmw_writes++;
		}
		if (io->flags & VC_DEV_META)
			m->st.meta_writes++;
		if (io->flags & VC_DEV_PREFLUSH) {
			m->st.preflush++;
			commit_volatile(m);
		}
		if (io->flags & VC_DEV_FUA)
			m->st.fua++;
		for (s = 0; s < nr; s++) {
			u64 x = first + s;

			if (m->volatile_cache && !(io->flags & VC_DEV_FUA)) {
				vc_buf_to_mem(m->vol + (x << 9), io->buf,
					      io->buf_off + (u32)(s << 9), 512);
				if (!m->vol_map[x]) {
					if (vol_add(m, x))
						return -ENOMEM;
					m->vol_map[x] = 1;
				}
			} else {
				vc_buf_to_mem(m->stable + (x << 9), io->buf,
					      io->buf_off + (u32)(s << 9), 512);
				m->vol_map[x] = 0;
			}
		}
		return 0;
	case VC_DEV_FLUSH:
		m->st.flushes++;
		commit_volatile(m);
		return 0;
	case VC_DEV_WRITE_ZEROES:
		m->st.writes++;
		if (io->flags & VC_DEV_FUA)
			m->st.fua++;
		for (s = 0; s < nr; s++) {
			u64 x = first + s;

			if (m->volatile_cache && !(io->flags & VC_DEV_FUA)) {
				memset(m->vol + (x << 9), 0, 512);
				if (!m->vol_map[x]) {
					if (vol_add(m, x))
						return -ENOMEM;
					m->vol_map[x] = 1;
				}
			} else {
				memset(m->stable + (x << 9), 0, 512);
				m->vol_map[x] = 0;
			}
		}
		return 0;
	case VC_DEV_DISCARD:
		m->st.discards++;
		for (s = 0; s < nr; s++) {
			memset(m->stable + ((first + s) << 9), 0, 512);
			m->vol_map[first + s] = 0;
		}
		return 0;
	}
	return -EINVAL;
}

static void memdev_submit(struct vc_dev *dev, struct vc_dev_io *io)
{
	struct vc_memdev *m = dev->priv;
	int err;

	pthread_mutex_lock(&m->lock);
	err = do_io(m, io);
	pthread_mutex_unlock(&m->lock);
	io->end_io(io, err);
}

static const struct vc_dev_ops memdev_ops = {
	.submit = memdev_submit,
};

struct vc_memdev *vc_memdev_create(const char *name, u64 nr_sectors,
				   bool volatile_cache)
{
	struct vc_memdev *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->stable = calloc(nr_sectors, 512);
	m->vol_map = calloc(nr_sectors, 1);
	m->vol = volatile_cache ? calloc(nr_sectors, 512) : NULL;
	if (!m->stable || !m->vol_map || (volatile_cache && !m->vol)) {
		vc_memdev_destroy(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->volatile_cache = volatile_cache;
	m->dev.ops = &memdev_ops;
	m->dev.priv = m;
	m->dev.nr_sectors = nr_sectors;
	snprintf(m->dev.name, sizeof(m->dev.name), "%s", name ? name : "mem");
	return m;
}

void vc_memdev_destroy(struct vc_memdev *m)
{
	if (!m)
		return;
	free(m->stable);
	free(m->vol);
	free(m->vol_map);
	free(m->vol_list);
	free(m);
}

struct vc_dev *vc_memdev_dev(struct vc_memdev *m)
{
	return &m->dev;
}

void vc_memdev_set_fail(struct vc_memdev *m,
			int (*fail)(void *ctx, const struct vc_dev_io *io),
			void *ctx)
{
	pthread_mutex_lock(&m->lock);
	m->fail = fail;
	m->fail_ctx = ctx;
	pthread_mutex_unlock(&m->lock);
}

void vc_memdev_power_cut(struct vc_memdev *m)
{
	u64 i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->vol_nr; i++)
		m->vol_map[m->vol_list[i]] = 0;
	m->vol_nr = 0;
	pthread_mutex_unlock(&m->lock);
}

void vc_memdev_power_cut_keep(struct vc_memdev *m, u64 first, u64 nr)
{
	u64 i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->vol_nr; i++) {
		u64 x = m->vol_list[i];

		if (m->vol_map[x] && x >= first && x - first < nr)
			memcpy(m->stable + (x << 9), m->vol + (x << 9), 512);
		m->vol_map[x] = 0;
	}
	m->vol_nr = 0;
	pthread_mutex_unlock(&m->lock);
}

void vc_memdev_peek(struct vc_memdev *m, u64 sector, void *dst, u32 len)
{
	u32 s;

	pthread_mutex_lock(&m->lock);
	for (s = 0; s < len >> 9; s++) {
		u64 x = sector + s;

		memcpy((u8 *)dst + ((u64)s << 9),
		       (m->vol_map[x] ? m->vol : m->stable) + (x << 9), 512);
	}
	pthread_mutex_unlock(&m->lock);
}

void vc_memdev_poke(struct vc_memdev *m, u64 sector, const void *src, u32 len)
{
	u32 s;

	pthread_mutex_lock(&m->lock);
	for (s = 0; s < len >> 9; s++) {
		memcpy(m->stable + ((sector + s) << 9),
		       (const u8 *)src + ((u64)s << 9), 512);
		m->vol_map[sector + s] = 0;
	}
	pthread_mutex_unlock(&m->lock);
}

void vc_memdev_get_stats(struct vc_memdev *m, struct vc_memdev_stats *st)
{
	pthread_mutex_lock(&m->lock);
	*st = m->st;
	pthread_mutex_unlock(&m->lock);
}
