// SPDX-License-Identifier: GPL-2.0
/*
 * print_text.c - list, show and pid list for people.
 */
#include <string.h>

#include "names.h"
#include "params.h"
#include "print.h"

static const char *human(u64 v, char *buf, size_t len)
{
	return vcc_human(v, buf, len);
}

static const char *mode_str(const struct vcc_cache_info *c)
{
	return VCC_HAS(c, VCACHE_A_MODE) ? vcc_name_of(vcc_modes, c->mode) : "-";
}

static const char *state_str(const struct vcc_cache_info *c)
{
	return VCC_HAS(c, VCACHE_A_STATE) ? vcc_name_of(vcc_states, c->state) :
					    "-";
}

static void list(FILE *f, const struct vcc_cache_info *cs, unsigned int n)
{
	unsigned int i, j;
	char a[32], b[32];

	if (!n) {
		fprintf(f, "no caches\n");
		return;
	}
	fprintf(f, "%-16s %-9s %-4s %-12s %10s %10s  %s\n", "NAME", "STATE",
		"MODE", "CACHE", "SIZE", "DIRTY", "BACKING");
	for (i = 0; i < n; i++) {
		const struct vcc_cache_info *c = &cs[i];

		fprintf(f, "%-16s %-9s %-4s %-12s %10s %10s ", c->name,
			state_str(c), mode_str(c),
			c->cache_disk[0] ? c->cache_disk : "-",
			human(c->cache_size, a, sizeof(a)),
			human(vcc_cache_dirty(c), b, sizeof(b)));
		for (j = 0; j < c->nr_backing; j++) {
			const struct vcc_backing_info *bk = &c->backing[j];

			fprintf(f, "%s %s -> %s (%s)", j ? "," : "", bk->devname,
				bk->backing_disk[0] ? bk->backing_disk : "-",
				vcc_name_of(vcc_bstates, bk->state));
		}
		fprintf(f, "%s\n", c->nr_backing ? "" : " -");
	}
}

static void show_flush(FILE *f, const struct vcc_cache_info *c)
{
	const struct vcc_flush_info *fl = &c->flush;
	u64 pct;

	if (!VCC_HAS(c, VCACHE_A_FLUSH)) {
		fprintf(f, "  %-16s -\n", "flush");
		return;
	}
	pct = fl->target ? fl->done * 100 / fl->target : 100;
	fprintf(f, "  %-16s %s, %llu%% (%llu of %llu blocks written back, %llu dirty left), flushes started %u, last result %s\n",
		"flush", fl->running ? "running" : "idle",
		(unsigned long long)pct, (unsigned long long)fl->done,
		(unsigned long long)fl->target,
		(unsigned long long)fl->remaining, fl->seq,
		fl->result ? strerror((int)fl->result) : "ok");
}

/* "90.9% (900 of 990)", or "-" when nothing was counted */
static const char *ratio(u64 hits, u64 misses, char *buf, size_t len)
{
	u64 n = hits + misses;

	if (!n)
		return "- (none counted)";
	snprintf(buf, len, "%.1f%% (%llu of %llu blocks)",
		 (double)hits * 100.0 / (double)n, (unsigned long long)hits,
		 (unsigned long long)n);
	return buf;
}

/* What an administrator looks at first: the full list is behind --all. */
static void show_summary(FILE *f, const struct vcc_cache_info *c)
{
	const u64 *s = c->stat;
	u64 ns = s[VCACHE_S_ELAPSED_NS], wb = s[VCACHE_S_WB_BYTES];
	u64 errs = s[VCACHE_S_CACHE_READ_ERRORS] + s[VCACHE_S_CACHE_WRITE_ERRORS] +
		   s[VCACHE_S_BACKING_READ_ERRORS] + s[VCACHE_S_BACKING_WRITE_ERRORS] +
		   s[VCACHE_S_LOST_BLOCKS];
	char a[64], b[32];

	if (!VCC_HAS(c, VCACHE_A_STATS))
		return;
	fprintf(f, "  %-16s %s\n", "read hits",
		ratio(s[VCACHE_S_READ_HITS], s[VCACHE_S_READ_MISSES], a, sizeof(a)));
	fprintf(f, "  %-16s %s\n", "write hits",
		ratio(s[VCACHE_S_WRITE_HITS], s[VCACHE_S_WRITE_MISSES], a, sizeof(a)));
	if (c->cache_size)
		fprintf(f, "  %-16s %.1f%% of the cache\n", "dirty share",
			(double)vcc_cache_dirty(c) * 100.0 / (double)c->cache_size);
	if (ns >= 1000000000ULL)
		fprintf(f, "  %-16s %s/s on average over %llu s (%llu bytes written back)\n",
			"write-back", human((u64)((double)wb * 1e9 / (double)ns), b, sizeof(b)),
			(unsigned long long)(ns / 1000000000ULL),
			(unsigned long long)wb);
	else
		fprintf(f, "  %-16s %llu bytes written back\n", "write-back",
			(unsigned long long)wb);
	if (s[VCACHE_S_WB_RATE_BPS])
		fprintf(f, "  %-16s rate-controlled now at %s/s\n", "",
			human(s[VCACHE_S_WB_RATE_BPS], b, sizeof(b)));
	if (s[VCACHE_S_WB_THROTTLED])
		fprintf(f, "  %-16s %llu writes slowed at the high watermark\n", "",
			(unsigned long long)s[VCACHE_S_WB_THROTTLED]);
	if (!errs)
		fprintf(f, "  %-16s none\n", "errors");
	else
		fprintf(f, "  %-16s cache read %llu, cache write %llu, backing read %llu, backing write %llu, lost blocks %llu\n",
			"errors",
			(unsigned long long)s[VCACHE_S_CACHE_READ_ERRORS],
			(unsigned long long)s[VCACHE_S_CACHE_WRITE_ERRORS],
			(unsigned long long)s[VCACHE_S_BACKING_READ_ERRORS],
			(unsigned long long)s[VCACHE_S_BACKING_WRITE_ERRORS],
			(unsigned long long)s[VCACHE_S_LOST_BLOCKS]);
}

static void show(FILE *f, const struct vcc_cache_info *c, bool all)
{
	char a[32], d[32], e[32], cd[64], bd[128];
	unsigned int i;
	int k;

	fprintf(f, "cache %s\n", c->name);
	fprintf(f, "  %-16s %s\n", "state", state_str(c));
	fprintf(f, "  %-16s %s\n", "mode", mode_str(c));
	if (VCC_HAS(c, VCACHE_A_REQ_MODE) && c->req_mode != c->mode)
		fprintf(f, "  %-16s %s (lowered by errors)\n", "requested mode",
			vcc_name_of(vcc_modes, c->req_mode));
	if (VCC_HAS(c, VCACHE_A_POLICY))
		fprintf(f, "  %-16s %s\n", "policy",
			vcc_name_of(vcc_policies, c->policy));
	fprintf(f, "  %-16s %s (%s)", "cache device",
		c->cache_disk[0] ? c->cache_disk : "-",
		vcc_devstr(c->cache_dev, d, sizeof(d)));
	if (VCC_HAS(c, VCACHE_A_CARD))
		fprintf(f, ", card %s, region at %llu", c->card,
			(unsigned long long)c->region_start);
	fprintf(f, "\n  %-16s %u bytes\n", "block size", c->block_size);
	fprintf(f, "  %-16s %s (%llu bytes)\n", "cache size",
		human(c->cache_size, a, sizeof(a)),
		(unsigned long long)c->cache_size);
	fprintf(f, "  %-16s %s (%llu bytes)\n", "dirty",
		human(vcc_cache_dirty(c), a, sizeof(a)),
		(unsigned long long)vcc_cache_dirty(c));
	if (VCC_HAS(c, VCACHE_A_PID_DEFAULT))
		fprintf(f, "  %-16s %s\n", "pid default",
			vcc_name_of(vcc_pid_defaults, c->pid_default));
	show_flush(f, c);
	show_summary(f, c);

	fprintf(f, "backing devices\n");
	for (i = 0; i < c->nr_backing; i++) {
		const struct vcc_backing_info *b = &c->backing[i];

		/* a waiting device has neither: no "/dev/- (0:0)" */
		if (b->disk[0])
			snprintf(cd, sizeof(cd), "/dev/%s", b->disk);
		else
			snprintf(cd, sizeof(cd), "no cached device");
		if (b->backing_disk[0])
			snprintf(bd, sizeof(bd), "%s (%s)", b->backing_disk,
				 vcc_devstr(b->dev, d, sizeof(d)));
		else
			snprintf(bd, sizeof(bd), "backing device not there");
		fprintf(f, "  %s: %s -> %s, %s, size %s, dirty %s (%llu bytes), identity %s, id %u\n",
			b->devname, cd, bd,
			vcc_name_of(vcc_bstates, b->state),
			human(b->size, a, sizeof(a)), human(b->dirty_bytes, e, sizeof(e)),
			(unsigned long long)b->dirty_bytes,
			b->ident[0] ? b->ident : "-", b->id);
	}
	if (!c->nr_backing)
		fprintf(f, "  none\n");

	if (!all) {
		fprintf(f, "(parameters and every counter: vcache-config show %s --all)\n",
			c->name);
		return;
	}
	fprintf(f, "parameters\n");
	for (k = 1; k <= VCACHE_P_MAX; k++)
		if (c->has_param[k])
			fprintf(f, "  %-24s %llu\n", vcc_param_name(k),
				(unsigned long long)c->param[k]);
	fprintf(f, "statistics\n");
	for (k = 1; k < VCC_NR_S; k++)
		if (c->has_stat[k] && vcc_stat_name(k))
			fprintf(f, "  %-24s %llu\n", vcc_stat_name(k),
				(unsigned long long)c->stat[k]);
}

static void pids(FILE *f, const struct vcc_pid_info *p)
{
	unsigned int l, i;

	fprintf(f, "cache %s\n", p->name);
	fprintf(f, "  default %s\n", p->has_default ?
		vcc_name_of(vcc_pid_defaults, p->pid_default) : "-");
	for (l = 0; l < 2; l++) {
		fprintf(f, "  %-7s", vcc_name_of(vcc_pid_lists, (int)l));
		for (i = 0; i < p->nr[l]; i++)
			fprintf(f, " %u", p->pids[l][i]);
		fprintf(f, "%s\n", p->nr[l] ? "" : " (empty)");
		if (p->hidden[l])
			fprintf(f, "  %-7s %u outside this PID namespace\n", "",
				p->hidden[l]);
	}
	for (l = 0; l < 2; l++) {
		fprintf(f, "  %s", vcc_name_of(vcc_pid_lists, (int)l + 2));
		for (i = 0; i < p->nr_cg[l]; i++)
			fprintf(f, "%s%s (id %llu)", i ? "\n               " : " ",
				p->cg[l][i].path[0] ? p->cg[l][i].path : "(removed)",
				(unsigned long long)p->cg[l][i].id);
		fprintf(f, "%s\n", p->nr_cg[l] ? "" : " (empty)");
	}
}

const struct vcc_printer vcc_print_text = { list, show, pids };
