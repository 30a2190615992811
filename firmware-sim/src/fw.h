/* SPDX-License-Identifier: GPL-2.0 */
/*
 * firmware-sim: userspace firmware of the vcache flash card.
 *
 * Internal interfaces between the parts of the simulator:
 *   main.c   options, --help, `format`, `ctl` client, startup/shutdown
 *   media.c  media file, volatile write buffer, destage, timing model
 *   card.c   ivshmem server, controller state machine, queues, commands,
 *            control socket server
 */
#ifndef FW_H
#define FW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "vcache/vc_card.h"

#define FW_NAME		"firmware-sim"
#define FW_REV		"FWS1.0"	/* identify.fw_rev, 8 chars max */
#define FW_MODEL	"vcache simulated PCIe flash card"

/* ---------------------------------------------------------------- log */
extern int fw_verbose;
void fw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fw_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define fw_trace(...) do { if (fw_verbose) fw_dbg(__VA_ARGS__); } while (0)

uint64_t now_ns(void);		/* CLOCK_MONOTONIC */

/* ---------------------------------------------------------- media file */
#define MEDIA_MAGIC	"VCMEDIA\0"
#define MEDIA_VERSION	1
#define MEDIA_HDR_SIZE	4096u
#define FW_PHYS_BLOCK	4096u	/* identify.phys_block_size: program unit */
#define MEDIA_DATA_OFF	4096u	/* page aligned: a block never spans pages */

/* On-disk header at offset 0 of the media file (little endian host only). */
struct media_hdr {
	char     magic[8];
	uint32_t version;
	uint32_t hdr_size;
	uint64_t capacity;		/* logical blocks */
	uint32_t lba_size;
	uint32_t data_off;
	char     serial[20];
	char     model[40];
	uint32_t clean;			/* 1: last shutdown was clean */
	uint32_t rsvd0;
	uint32_t rsvd1;
	/* persistent counters */
	uint64_t power_cycles;
	uint64_t unsafe_shutdowns;
	uint64_t media_errors;
	uint64_t bytes_read;
	uint64_t bytes_written;
	uint64_t read_cmds;
	uint64_t write_cmds;
	uint64_t flush_cmds;
	uint64_t flash_bytes_programmed;
	uint64_t aborts;
	uint64_t created;		/* unix time of format */
	uint8_t  rsvd[3900];
	uint32_t crc;			/* crc32 of the bytes before it */
};
_Static_assert(sizeof(struct media_hdr) == MEDIA_HDR_SIZE, "media_hdr size");

/* Live counters (atomics); copied into the header when it is written. */
struct fw_counters {
	_Atomic uint64_t power_cycles, unsafe_shutdowns, media_errors;
	_Atomic uint64_t bytes_read, bytes_written, read_cmds, write_cmds;
	_Atomic uint64_t flush_cmds, flash_bytes_programmed, aborts;
	_Atomic uint64_t dealloc_cmds, wzeroes_cmds, admin_cmds, errors;
	_Atomic uint64_t irqs, doorbells, destages, resets;
	_Atomic uint64_t fua_cmds;	/* writes with VC_SQE_F_FUA */
	_Atomic uint64_t rmw_writes;	/* writes partial to a physical block */
};

struct timing {
	int      nodelay;
	unsigned channels, dies;	/* dies per channel */
	unsigned stripe;		/* bytes per die stripe unit */
	unsigned page;			/* flash page (program unit) bytes */
	unsigned t_read_min, t_read_max;	/* ns */
	unsigned t_prog_min, t_prog_max;	/* ns per page program */
	unsigned t_xfer_kib;		/* ns per KiB on a channel */
	unsigned t_wbuf;		/* ns fixed cost of a buffered write */
	unsigned t_wbuf_kib;		/* ns per KiB into the write buffer */
};

struct wb_ent;

struct media {
	int      fd;
	char    *path;
	struct media_hdr hdr;		/* protected by hdr_lock */
	pthread_mutex_t hdr_lock;
	uint64_t capacity;		/* blocks */
	uint32_t lba_size;
	uint32_t lba_shift;
	atomic_int dirty_marked;	/* header says clean = 0 */

	/* volatile write buffer */
	pthread_mutex_t lock;
	pthread_cond_t  space;		/* bytes_used went down */
	pthread_cond_t  kick;		/* wake the destager */
	struct wb_ent **hash;
	size_t   nbuckets;
	size_t   bytes_used;		/* data + zero entries, incl. orphans */
	size_t   bytes_max;
	size_t   nents;
	struct wb_ent *orphans;		/* superseded while being destaged */
	pthread_mutex_t destage_lock;	/* one destage (or FUA write) at a time */
	int      stop;
	atomic_int io_failed;		/* host file I/O failed: card is fatal */
	pthread_t destager;

	/* timing */
	struct timing tm;
	pthread_mutex_t tm_lock;
	uint64_t *die_busy;		/* ns, CLOCK_MONOTONIC, per die */
	uint32_t rng;
};

extern struct fw_counters fwc;

int  media_format(const char *path, uint64_t capacity_bytes, uint32_t lba_size,
		  const char *serial, int force, char *err, size_t errlen);
int  media_open(struct media *m, const char *path, size_t wbuf_bytes,
		char *err, size_t errlen);
void media_start(struct media *m);	/* destager thread */
/* Destage everything, write counters and (if clean) the clean flag. */
int  media_close(struct media *m, int clean);
/* Destage + fdatasync; with clean, mark the media cleanly shut down. */
int  media_sync(struct media *m, int clean);
void media_free(struct media *m);	/* after media_close */
int  media_write_hdr(struct media *m, int sync);
void media_mark_dirty(struct media *m);

/* Buffered I/O.  Return 0 or -errno (host file I/O failure). */
int  media_read(struct media *m, uint64_t slba, uint32_t nlb, uint8_t *buf,
		uint64_t *done_ns);
int  media_write(struct media *m, uint64_t slba, uint32_t nlb,
		 const uint8_t *buf, int fua, uint64_t *done_ns);
int  media_zero(struct media *m, uint64_t slba, uint32_t nlb, int dealloc);
int  media_flush(struct media *m, uint64_t *done_ns);
/* After an I/O failure: retry destaging; 0 if the media works again. */
int  media_recover(struct media *m);
size_t media_wbuf_bytes(struct media *m);

/* Timing: completion deadline of a read / buffered write issued now. */
uint64_t timing_read(struct media *m, uint64_t slba, uint32_t nlb);
uint64_t timing_wbuf(struct media *m, uint32_t bytes);
void timing_defaults(struct timing *t, int nodelay);

/* ------------------------------------------------------------- options */
struct fw_opts {
	const char *socket_path;
	const char *ctl_path;
	const char *guest_mem;
	const char *media_path;
	const char *serial;
	const char *model;
	unsigned queues;		/* I/O queues; vectors = queues + 1 */
	unsigned qdepth;		/* cap_mqes */
	unsigned threads;
	size_t   wbuf_bytes;
	size_t   shm_size;
	int      nodelay;
	int      bad_magic;
	int      bad_version;
	int      stay;			/* keep serving after QEMU disconnects */
	int      refuse;		/* fault at start: never ready */
	int      coalesce;		/* batch completions/interrupts */
	struct timing tm;
};

int card_run(struct fw_opts *o, struct media *m);	/* returns exit code */

/* ctl client (main.c) */
int ctl_client(const char *path, int argc, char **argv);

#endif /* FW_H */
