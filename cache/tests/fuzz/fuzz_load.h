/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the metadata-loader fuzz target, its driver and the corpus. */
#ifndef FUZZ_LOAD_H
#define FUZZ_LOAD_H

#include "vc_env.h"

#define FUZZ_CACHE_SECTORS	4096	/* 2 MiB cache device */
#define FUZZ_BACKING_SECTORS	16384	/* 8 MiB backing device */
#define FUZZ_IMG_BYTES		32768	/* fuzzed prefix: sb, devtab, records */
#define FUZZ_UUID		"fuzz-hdd0"

/* Flag byte (first byte of an input). */
#define FUZZ_F_FIXCRC		(1u << 0)
#define FUZZ_F_CLEAN		(1u << 1)

int fuzz_one(const u8 *data, size_t size);
/* Recompute every CRC and sector index of a metadata image. */
void fuzz_fix_crcs(u8 *img, u64 nsect, bool clean);

#endif /* FUZZ_LOAD_H */
