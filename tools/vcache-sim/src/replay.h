/* SPDX-License-Identifier: GPL-2.0 */
/*
 * replay.h - replay a trace through the real vcache engine (replay.c is the
 * only file that knows the engine's API).
 */
#ifndef VS_REPLAY_H
#define VS_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "trace.h"

enum vs_policy {
	VS_POL_FIFO, VS_POL_LRU, VS_POL_LRU_ADMIT, VS_POL_S3FIFO,
	VS_POL_S3FIFO_ADMIT, VS_POL_TINYLFU,
	VS_POL_NR
};
enum vs_mode { VS_MODE_WB, VS_MODE_WT, VS_MODE_WA, VS_MODE_NR };

extern const char *const vs_policy_names[VS_POL_NR];
extern const char *const vs_mode_names[VS_MODE_NR];

#define VS_MAX_PARAMS 32

/* Engine tunables; 0 (or -1 where noted) means the engine's default. */
struct vs_cfg {
	uint64_t cache_bytes;
	uint64_t backing_bytes;		/* 0: just past the trace's end */
	enum vs_policy policy;
	enum vs_mode mode;
	uint32_t block_size;
	int dirty_high_pct;		/* -1: default */
	int dirty_low_pct;		/* -1: default */
	int64_t flush_period_s;		/* -1: default, 0: off */
	int64_t seq_thresh_kib;		/* -1: default, 0: bypass off */
	int admit_pct;			/* -1: default (admission fullness) */
	bool drain_at_end;		/* flush everything after the trace */
	/*
	 * Device timing.  Off: every device I/O completes at once.  On: the
	 * flash completes each I/O after a fixed latency (many in parallel);
	 * the backing disk serves one I/O at a time, each costing a seek
	 * (unless it continues the previous one) plus transfer time.
	 */
	bool latency;
	uint64_t flash_read_ns, flash_write_ns;
	uint64_t hdd_seek_ns;
	uint64_t hdd_bytes_per_s;
	/*
	 * The flash device's physical block (bytes, the card's: 4096): what
	 * the engine is told, and what a write must cover whole not to be a
	 * read-modify-write.
	 */
	uint32_t flash_phys_block;
	/* raw engine parameters (--param NAME=VALUE), applied last */
	unsigned int nparams;
	const char *param_name[VS_MAX_PARAMS];
	uint64_t param_value[VS_MAX_PARAMS];
};

void vs_cfg_init(struct vs_cfg *c);

struct vs_result {
	/* host side, requests and 4K-independent block counts */
	uint64_t host_ios;		/* reads + writes + discards + flushes */
	uint64_t reads, writes, discards, flushes;
	uint64_t read_blocks, read_hit_blocks;
	uint64_t write_blocks, write_hit_blocks;
	uint64_t bypassed_blocks;	/* all reasons, per cache block */
	uint64_t bypass_mode, bypass_seq, bypass_pid, bypass_admission;
	uint64_t bypass_nospace, bypass_busy;
	/* devices, as seen by the simulated devices */
	uint64_t flash_bytes_written;	/* data and metadata */
	uint64_t flash_meta_bytes_written;
	uint64_t flash_meta_writes;		/* metadata write I/Os */
	uint64_t flash_flushes;			/* FLUSH + PREFLUSH on the flash */
	/* writes covering a physical block only in part: all, metadata */
	uint64_t flash_rmw_writes, flash_meta_rmw_writes;
	uint64_t flash_bytes_read;
	uint64_t backing_ios;		/* reads + writes + discards */
	uint64_t backing_read_ios, backing_write_ios;
	uint64_t backing_bytes_read, backing_bytes_written;
	uint64_t backing_flushes;		/* not counted in backing_ios */
	/* write-back cleaning */
	uint64_t cleaned_blocks;
	uint64_t clean_watermark, clean_age, clean_idle, clean_demand;
	uint64_t dirty_age_max_ns;
	uint64_t dirty_age_sum_ns;	/* avg = sum / cleaned_blocks */
	uint64_t dirty_age_p99_ns;
	uint64_t cleaned_unknown;	/* cleaned, dirty time not seen */
	uint64_t dirty_at_end;		/* dirty blocks when the trace ended */
	uint64_t dirty_oldest_at_end_ns;	/* age of the oldest of them */
	uint64_t shadow_dirty_at_end;	/* the simulator's own count */
	/*
	 * Host writes submitted while another write to one of their blocks
	 * was in flight.  Their order is undefined (as on any block device),
	 * so the simulator cannot tell which one the engine kept dirty: with
	 * such writes the dirty figures are approximate.
	 */
	uint64_t overlapping_writes;
	/* engine */
	uint64_t meta_millibytes_per_block;	/* RAM metadata, 1/1000 B */
	uint64_t mem_bytes;		/* RAM metadata, total */
	uint64_t evictions, not_admitted;
	uint64_t dirty_overwrites, oop_writes;	/* of them out of place */
	uint64_t cache_blocks;
	uint64_t virtual_ns;		/* virtual time covered */
	/* host latency (only with the timing model) */
	uint64_t read_lat_avg_ns, read_lat_p99_ns, read_lat_max_ns;
	uint64_t write_lat_avg_ns, write_lat_p99_ns, write_lat_max_ns;
};

/*
 * Replay t through a freshly created engine with configuration c.
 * Returns 0, or -1 with a message in err.
 */
int vs_replay(const struct vs_trace *t, const struct vs_cfg *c,
	      struct vs_result *r, char *err, size_t errlen);

/* Name of the engine replay backend (for --version and reports). */
const char *vs_replay_backend(void);

#endif
