// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "tutil.h"

u64 t_now_ns;

static u64 t_clock(void *ctx)
{
	(void)ctx;
	return __atomic_load_n(&t_now_ns, __ATOMIC_SEQ_CST);
}

u64 t_readahead_kib;

struct vc_cache_config t_cfg_manual(void)
{
	struct vc_cache_config cfg;

	vc_cache_config_default(&cfg);
	cfg.params.v[VC_P_SEQ_ENABLE] = 0;
	cfg.params.v[VC_P_IDLE_MS] = 0;
	cfg.params.v[VC_P_MAX_DIRTY_AGE_MS] = 0;
	cfg.params.v[VC_P_DIRTY_HIGH_PCT] = 100;
	cfg.params.v[VC_P_DIRTY_LOW_PCT] = 100;
	return cfg;
}

void t_init(void)
{
	t_now_ns = 1000000000ULL;
	vc_posix_set_clock(t_clock, NULL);
	vc_posix_set_manual_work(true);
	vc_posix_set_pump(NULL, NULL);
	vc_posix_set_log_level(0);
}

void t_run(void)
{
	while (vc_posix_run_work())
		;
}

void t_advance_ms(u64 ms)
{
	u64 i;

	for (i = 0; i < ms;) {
		u64 step = i < 10 ? 1 : 100;

		if (step > ms - i)
			step = ms - i;
		__atomic_add_fetch(&t_now_ns, step * 1000000ULL, __ATOMIC_SEQ_CST);
		t_run();
		i += step;
	}
}

void t_setup(struct tenv *t, u64 cache_blocks, u64 back_blocks, bool vol,
	     const struct vc_cache_config *cfg)
{
	struct vc_cache_config def;
	u32 bs;

	t_init();
	if (!cfg) {
		vc_cache_config_default(&def);
		cfg = &def;
	}
	bs = cfg->block_size;
	memset(t, 0, sizeof(*t));
	t->vol = vol;
	/* metadata: 24 + blocks/63 sectors, rounded to the block size */
	t->cache_sectors = 64 + cache_blocks / 63 + 1 + (u64)bs / 512 +
			   cache_blocks * (bs / 512);
	t->back_sectors = back_blocks * (bs / 512);
	t->cm = vc_memdev_create("flash", t->cache_sectors, vol);
	t->bm = vc_memdev_create("hdd", t->back_sectors, vol);
	assert_non_null(t->cm);
	assert_non_null(t->bm);
	/* the card's geometry: 512-byte logical, 4 KiB physical blocks */
	vc_memdev_dev(t->cm)->physical_block_size = 4096;
	def = *cfg;
	def.nr_blocks = cache_blocks;
	def.params.v[VC_P_READAHEAD_KIB] = t_readahead_kib;
	assert_int_equal(vc_cache_create(vc_memdev_dev(t->cm), &def, &t->c), 0);
	assert_int_equal(vc_cache_attach(t->c, vc_memdev_dev(t->bm), "hdd0",
					 &t->dev), 0);
	t_run();
}

void t_teardown(struct tenv *t)
{
	struct vc_memdev_stats ms;

	if (t->c)
		assert_int_equal(vc_cache_shutdown(t->c, 0), 0);
	t->c = NULL;
	vc_memdev_get_stats(t->cm, &ms);
	if (!t->md_rmw_ok)
		assert_int_equal(ms.meta_rmw_writes, 0);
	vc_memdev_destroy(t->cm);
	vc_memdev_destroy(t->bm);
}

void t_crash(struct tenv *t)
{
	vc_cache_abandon(t->c);
	t->c = NULL;
	vc_memdev_power_cut(t->cm);
	vc_memdev_power_cut(t->bm);
}

int t_reload(struct tenv *t)
{
	char err[160];
	int e;

	e = vc_cache_load(vc_memdev_dev(t->cm), 0, &t->c, err, sizeof(err));
	if (e) {
		print_message("load: %s\n", err);
		return e;
	}
	e = vc_cache_attach(t->c, vc_memdev_dev(t->bm), "hdd0", &t->dev);
	t_run();
	return e;
}


static void t_end(struct vc_host_io *hio, int err)
{
	struct t_hio *h = (struct t_hio *)hio;

	h->err = err;
	__atomic_store_n(&h->done, 1, __ATOMIC_SEQ_CST);
}

u64 t_io_wait_ms;
u64 t_cgroup;

void t_submit(struct tenv *t, struct t_hio *h, u8 op, u32 flags,
	      u64 sector, u32 len, void *data)
{
	memset(h, 0, sizeof(*h));
	h->b = data ? vc_buf_wrap(data, len) : NULL;
	h->hio.dev_id = t->dev;
	h->hio.op = op;
	h->hio.flags = flags;
	h->hio.sector = sector;
	h->hio.len = len;
	h->hio.buf = h->b;
	h->hio.pid = 100;
	h->hio.tgid = 100;
	h->hio.cgroup = t_cgroup;
	h->hio.stream = 1;
	h->hio.end_io = t_end;
	vc_cache_submit(t->c, &h->hio);
}

bool t_done(struct t_hio *h)
{
	return __atomic_load_n(&h->done, __ATOMIC_SEQ_CST);
}

int t_io(struct tenv *t, u8 op, u32 flags, u64 sector, u32 len, void *data)
{
	struct t_hio h;
	int spins = 0;

	t_submit(t, &h, op, flags, sector, len, data);
	while (!__atomic_load_n(&h.done, __ATOMIC_SEQ_CST)) {
		if (vc_posix_run_work())
			continue;
		if (t_io_wait_ms) {
			t_now_ns += t_io_wait_ms * 1000000ULL;	/* timers */
			if (++spins > 100000)
				fail_msg("host I/O never completed");
			continue;
		}
		if (++spins > 1000)
			fail_msg("host I/O never completed");
	}
	vc_buf_free(h.b);
	return h.err;
}

void t_fill(void *buf, u64 blk, u32 nblk, u32 seed)
{
	u32 *p = buf;
	u64 i, n = (u64)nblk * T_BS / 4;

	for (i = 0; i < n; i++)
		p[i] = (u32)((blk * T_BS / 4 + i) * 2654435761u) ^ seed;
}

int t_write_pat(struct tenv *t, u64 blk, u32 nblk, u32 seed, u32 flags)
{
	void *buf = malloc((size_t)nblk * T_BS);
	int e;

	t_fill(buf, blk, nblk, seed);
	e = t_io(t, VC_OP_WRITE, flags, blk * T_BSEC, nblk * T_BS, buf);
	free(buf);
	return e;
}

int t_check_pat(struct tenv *t, u64 blk, u32 nblk, u32 seed)
{
	void *buf = malloc((size_t)nblk * T_BS), *exp = malloc((size_t)nblk * T_BS);
	int e;

	t_fill(exp, blk, nblk, seed);
	e = t_io(t, VC_OP_READ, 0, blk * T_BSEC, nblk * T_BS, buf);
	if (!e)
		e = memcmp(buf, exp, (size_t)nblk * T_BS) ? 1 : 0;
	free(buf);
	free(exp);
	return e;
}

int t_backing_has(struct tenv *t, u64 blk, u32 nblk, u32 seed)
{
	void *buf = malloc((size_t)nblk * T_BS), *exp = malloc((size_t)nblk * T_BS);
	int e;

	t_fill(exp, blk, nblk, seed);
	vc_memdev_peek(t->bm, blk * T_BSEC, buf, nblk * T_BS);
	e = memcmp(buf, exp, (size_t)nblk * T_BS) ? 0 : 1;
	free(buf);
	free(exp);
	return e;
}

struct vc_stats t_stats(struct tenv *t)
{
	struct vc_stats st;

	vc_cache_get_stats(t->c, &st);
	return st;
}

int t_inject(void *ctx, const struct vc_dev_io *io)
{
	struct t_inj *f = ctx;

	if (!f->left)
		return 0;
	if (f->op >= 0 && io->op != f->op)
		return 0;
	if (f->meta_only && !(io->flags & VC_DEV_META))
		return 0;
	if (f->data_only && (io->flags & VC_DEV_META))
		return 0;
	if (f->left > 0)
		f->left--;
	f->hits++;
	return f->err;
}

/* ---- the queued backing device (tutil.h) ---- */

static void q_submit(struct vc_dev *d, struct vc_dev_io *io)
{
	struct qdev *q = d->priv;
	u32 i, w = 0;

	q->q[q->n++] = io;
	for (i = 0; i < q->n; i++)
		if (q->q[i]->op == VC_DEV_WRITE)
			w++;
	if (w > q->max_writes_inflight)
		q->max_writes_inflight = w;
}

static const struct vc_dev_ops q_ops = { .submit = q_submit };

struct fwd {
	struct vc_dev_io io;
	struct vc_dev_io *orig;
};

static void fwd_end(struct vc_dev_io *io, int err)
{
	struct fwd *f = (struct fwd *)io;
	struct vc_dev_io *o = f->orig;

	free(f);
	o->end_io(o, err);
}

/* Complete the oldest queued I/O; false if none. */
bool q_pump_one(struct qdev *q)
{
	struct vc_dev_io *io;
	struct fwd *f;

	if (!q->n)
		return false;
	io = q->q[0];
	memmove(q->q, q->q + 1, --q->n * sizeof(q->q[0]));
	f = calloc(1, sizeof(*f));
	f->io = *io;
	f->io.dev = q->under;
	f->io.end_io = fwd_end;
	f->orig = io;
	vc_dev_submit(&f->io);
	return true;
}

bool q_pump(void *ctx)
{
	struct qdev *q = ctx;
	bool did = q_pump_one(q);

	t_now_ns += 50000000ULL;	/* 50 ms per step */
	return vc_posix_run_work() > 0 || did;
}

void q_setup(struct tenv *t, struct qdev *q, struct vc_cache_config *cfg)
{
	t_setup(t, 1000, 8192, false, cfg);
	memset(q, 0, sizeof(*q));
	q->dev.ops = &q_ops;
	q->dev.priv = q;
	q->dev.nr_sectors = t->back_sectors;
	q->under = vc_memdev_dev(t->bm);
	strcpy(q->dev.name, "qdev");
	assert_int_equal(vc_cache_detach(t->c, t->dev, 0), 0);
	assert_int_equal(vc_cache_attach(t->c, &q->dev, "q0", &t->dev), 0);
}

/* Shut down with the queued device still attached: pump it meanwhile. */
void q_teardown(struct tenv *t, struct qdev *q)
{
	vc_posix_set_pump(q_pump, q);
	t_teardown(t);
	vc_posix_set_pump(NULL, NULL);
}
