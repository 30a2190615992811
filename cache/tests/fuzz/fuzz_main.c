// SPDX-License-Identifier: GPL-2.0
/*
 * Stand-alone driver for the metadata loader target, for builds without
 * libFuzzer (gcc, or clang without its fuzzer runtime): runs every file
 * of the corpus directories given, then mutates them at random (seeded)
 * for --runs inputs or --seconds of CPU time.  Mutations: bit flips, byte
 * and 64-bit word overwrites with interesting values, block copies, with
 * and without CRC repair.
 *
 *   fuzz-load-standalone [--seed N] [--runs N] [--seconds S] DIR|FILE...
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz_load.h"

#define MAXIN	(FUZZ_IMG_BYTES + 1)
#define MAXCORP	256

static u8 *corp[MAXCORP];
static size_t corp_len[MAXCORP];
static int ncorp;

static u64 rnd(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	u8 *b;
	size_t n;

	if (!f || ncorp == MAXCORP) {
		if (f)
			fclose(f);
		return;
	}
	b = calloc(1, MAXIN);
	n = fread(b, 1, MAXIN, f);
	fclose(f);
	corp[ncorp] = b;
	corp_len[ncorp++] = n;
}

static void add_path(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char p[4096];

	if (!d) {
		add_file(path);
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		add_file(p);
	}
	closedir(d);
}

static const u64 interesting[] = {
	0, 1, 2, 7, 8, 23, 24, 62, 63, 64, 511, 512, 4095, 4096, 65536,
	0x7fffffffULL, 0x80000000ULL, 0xffffffffULL, ~0ULL, 1ULL << 48,
	(1ULL << 56) | 5, (3ULL << 56) | 7, (3ULL << 56) | (1ULL << 48) | 9,
	(3ULL << 56) | (15ULL << 48) | 2,
};

static void mutate(u64 *rng, u8 *b, size_t *len)
{
	int n = 1 + (int)(rnd(rng) % 6), i;

	for (i = 0; i < n; i++) {
		size_t L = *len > 1 ? *len : 2;
		size_t off = 1 + rnd(rng) % (L - 1);

		switch (rnd(rng) % 5) {
		case 0:
			b[off] ^= (u8)(1u << (rnd(rng) % 8));
			break;
		case 1:
			b[off] = (u8)rnd(rng);
			break;
		case 2:
			off &= ~(size_t)7;
			if (!off)
				off = 8;
			if (off + 8 <= MAXIN) {
				u64 v = interesting[rnd(rng) %
						    (sizeof(interesting) /
						     sizeof(interesting[0]))];
				memcpy(b + off, &v, 8);
				if (off + 8 > *len)
					*len = off + 8;
			}
			break;
		case 3: {
			size_t src = 1 + rnd(rng) % (L - 1);
			size_t cnt = 1 + rnd(rng) % 64;

			if (src + cnt <= L && off + cnt <= L)
				memmove(b + off, b + src, cnt);
			break;
		}
		default:
			*len = 1 + rnd(rng) % MAXIN;
		}
	}
	/* mostly keep the CRCs valid, so semantics get exercised */
	if (rnd(rng) % 4)
		b[0] |= FUZZ_F_FIXCRC;
	else
		b[0] = (u8)rnd(rng);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "runs", 1, NULL, 'r' },
		{ "seconds", 1, NULL, 't' }, { NULL, 0, NULL, 0 }
	};
	u64 seed = 1, runs = 0, i;
	double secs = 10;
	clock_t t0 = clock();
	u8 *b = calloc(1, MAXIN);
	int c;

	while ((c = getopt_long(argc, argv, "s:r:t:", lo, NULL)) != -1) {
		switch (c) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'r': runs = strtoull(optarg, NULL, 0); break;
		case 't': secs = atof(optarg); break;
		default:
			fprintf(stderr, "usage: fuzz-load-standalone [--seed N] [--runs N] [--seconds S] DIR|FILE...\n");
			return 2;
		}
	}
	for (; optind < argc; optind++)
		add_path(argv[optind]);
	if (!ncorp) {
		fprintf(stderr, "fuzz: empty corpus\n");
		return 2;
	}
	for (i = 0; i < (u64)ncorp; i++)
		fuzz_one(corp[i], corp_len[i]);
	for (i = 0; runs ? i < runs :
	     (double)(clock() - t0) / CLOCKS_PER_SEC < secs; i++) {
		int k = (int)(rnd(&seed) % (u64)ncorp);
		size_t len = corp_len[k];

		memcpy(b, corp[k], MAXIN);
		mutate(&seed, b, &len);
		fuzz_one(b, len);
	}
	printf("fuzz: %llu corpus inputs + %llu mutated inputs in %.1f s, no crash\n",
	       (unsigned long long)ncorp, (unsigned long long)i,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);
	free(b);
	for (c = 0; c < ncorp; c++)
		free(corp[c]);
	return 0;
}
