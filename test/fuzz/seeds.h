/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every fuzz target shares: seed mode. Run with $SOFTDPU_FUZZ_SEEDS naming a directory, a target
 * writes valid inputs there (made by the library's own encoders and exporters, so that they follow the
 * code rather than a committed file) and exits; run.sh then fuzzes with that directory as the corpus.
 * Each target defines write_seeds() and calls seed_mode() first in its LLVMFuzzerInitialize.
 */
#ifndef SOFTDPU_FUZZ_SEEDS_H_
#define SOFTDPU_FUZZ_SEEDS_H_

#include <stdio.h>
#include <stdlib.h>

/* The seed directory, or NULL when fuzzing. */
static const char *seed_dir(void)
{
	const char *dir = getenv("SOFTDPU_FUZZ_SEEDS");

	return dir != NULL && *dir != '\0' ? dir : NULL;
}

/* Writes one seed file; a failure ends the program (a seed run that writes nothing would fuzz nothing). */
static void seed(const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", seed_dir(), name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "fuzz: cannot write the seed %s\n", path);
		exit(2);
	}
}

/* The target's seeds, made with seed() (defined by each target). */
static void write_seeds(void);

/* In seed mode, writes the seeds and exits; else returns (fuzzing). */
static void seed_mode(void)
{
	if (seed_dir() != NULL) {
		write_seeds();
		exit(0);
	}
}

#endif /* SOFTDPU_FUZZ_SEEDS_H_ */
