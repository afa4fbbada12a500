/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The C side of `softdpu bench copy` (bench/copy.bench.ts; bench/copy-peer.ts is the Node side, and does
 * the same work): copies of SIZE bytes into a shared mapping as softdpu makes its segments (a memfd,
 * ftruncate'd, mapped MAP_SHARED, the payload 64 bytes in), walking SLOTS slots of SIZE bytes the way a
 * producer walks a consumer's posted buffers, the mapping's pages faulted in first.
 *   copy SIZE SLOTS BATCH SAMPLES
 * Each sample times BATCH copies; the first tenth of the samples are dropped as warm-up (as
 * bench/lib/measure.ts drops them) and the median of the rest, per copy, is reported. The contenders take
 * turns sample by sample, in an order shuffled at each sample, so that a change of load hits each alike
 * and none always follows the same one or writes the same slots:
 *   memcpy          from a private malloc'd source (a user's payload)
 *   memmove         the same (V8's TypedArray#set of a non-overlapping array ends in memmove)
 *   memcpy_mapped   from a second mapping of the same kind (the producer's own mmap'd memory)
 * Prints {"<contender>":{"p50_ns","gbps"},...,"fresh":{...}}; "fresh" is one memcpy of SIZE bytes into a
 * mapping whose pages were never touched (the first copy pays the page faults), for comparison.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/* Where a segment's payload starts (src/fabric/segment.ts SEGMENT_HEADER_SIZE). */
#define HEADER 64

enum { MEMCPY, MEMMOVE, MEMCPY_MAPPED, CONTENDERS };
static const char *names[CONTENDERS] = {"memcpy", "memmove", "memcpy_mapped"};

/* A fresh shared mapping of `bytes` (plus the header), as Segment.create makes one; NULL on failure. */
static uint8_t *segment(size_t bytes)
{
	int fd = memfd_create("softdpu.bench.copy", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)(HEADER + bytes)) != 0)
		return NULL;
	void *p = mmap(NULL, HEADER + bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Keeps the compiler from dropping or merging copies whose results nothing reads. */
#define CLOBBER() __asm__ volatile("" ::: "memory")

static double batch(int who, uint8_t *dst, const uint8_t *src, const uint8_t *mapped, size_t size, size_t slots, size_t *slot, long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		uint8_t *to = dst + *slot * size;

		if (who == MEMCPY)
			memcpy(to, src, size);
		else if (who == MEMMOVE)
			memmove(to, src, size);
		else
			memcpy(to, mapped, size);
		CLOBBER();
		*slot = *slot + 1 == slots ? 0 : *slot + 1;
	}
	return (now_ns() - t0) / (double)n;
}

/* xorshift32 seeded with 1, as bench/copy-peer.ts shuffles. */
static uint32_t seed = 1;
static uint32_t next(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

/* Fisher-Yates: each sample's order, so that no contender always follows the same one or writes the same slots. */
static void shuffle(int *order, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(next() % (uint32_t)(i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
}

int main(int argc, char **argv)
{
	if (argc != 6 || strcmp(argv[1], "copy")) {
		fprintf(stderr, "usage: copy copy SIZE SLOTS BATCH SAMPLES\n");
		return 2;
	}
	size_t size = (size_t)atol(argv[2]), slots = (size_t)atol(argv[3]);
	long n = atol(argv[4]);
	int samples = atoi(argv[5]);
	uint8_t *dst = segment(size * slots), *mapped = segment(size), *fresh = segment(size), *src = malloc(size);
	double *t[CONTENDERS];

	if (!dst || !mapped || !fresh || !src || size == 0 || slots == 0 || n <= 0 || samples < 10)
		return 1;
	memset(dst + HEADER, 0, size * slots); /* fault the pages in: copies, not page faults, are measured */
	memset(src, 0x5a, size);
	memset(mapped + HEADER, 0x5a, size);
	double t0 = now_ns();
	memcpy(fresh + HEADER, src, size);
	CLOBBER();
	double fresh_ns = now_ns() - t0;
	for (int c = 0; c < CONTENDERS; c++)
		t[c] = malloc(sizeof(double) * (size_t)samples);
	size_t slot = 0;
	int order[CONTENDERS];
	for (int c = 0; c < CONTENDERS; c++)
		order[c] = c;
	for (int s = 0; s < samples; s++) {
		shuffle(order, CONTENDERS);
		for (int k = 0; k < CONTENDERS; k++)
			t[order[k]][s] = batch(order[k], dst + HEADER, src, mapped + HEADER, size, slots, &slot, n);
	}
	int skip = samples / 10;
	printf("{");
	for (int c = 0; c < CONTENDERS; c++) {
		qsort(t[c] + skip, (size_t)(samples - skip), sizeof(double), cmp_double);
		double p50 = t[c][skip + (samples - skip) / 2];
		printf("\"%s\":{\"p50_ns\":%.3f,\"gbps\":%.4f},", names[c], p50, size / p50);
	}
	printf("\"fresh\":{\"p50_ns\":%.3f,\"gbps\":%.4f}}\n", fresh_ns, size / fresh_ns);
	return 0;
}
