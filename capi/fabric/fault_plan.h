/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fault plan's model (src/fabric/faults/plan.ts): a plan's faults checked field by field with the
 * same rules and messages, and the seeded generator (mulberry32) every fault draws from, so that a C and
 * a TypeScript process running one plan make the same decisions for the same calls.
 */
#ifndef SOFTDPU_CAPI_FAULT_PLAN_H_
#define SOFTDPU_CAPI_FAULT_PLAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/json.h"

enum sdpu_fault_kind {
	SDPU_FAULT_CRASH,
	SDPU_FAULT_STALL,
	SDPU_FAULT_AGAIN,
	SDPU_FAULT_LOSE_EVENT,
	SDPU_FAULT_DELAY_EVENT,
	SDPU_FAULT_CORRUPT_BLOB,
	SDPU_FAULT_TRUNCATE_BLOB,
	SDPU_FAULT_CAPS,
	SDPU_FAULT_DRIVER,
	SDPU_FAULT_KINDS
};

extern const char *const sdpu_fault_kind_names[SDPU_FAULT_KINDS];

struct sdpu_fault {
	char id[33];
	enum sdpu_fault_kind kind;
	/* match: 0 / empty for a selector not given; thread 1 main, 2 worker; side 1 dpu, 2 host. */
	uint32_t pid;
	int thread, side;
	char device[13], ctx[65], task[65], event[32], blob[32];
	uint64_t after, after_ms, count, delay_ms;
	bool has_count, has_seed, scope_thread;
	double probability;
	uint32_t seed;
	/* What identifies the fault across re-reads: its fields, written out. */
	char key[400];
};

struct sdpu_fault_plan {
	bool has_seed;
	uint32_t seed;
	size_t count;
	struct sdpu_fault *faults;
};

/*
 * Checks a plan (an object {seed, faults} or a bare array of faults); false with the message (`where`:
 * path of the first bad field, as plan.ts words it) in `error`. Freed with sdpu_fault_plan_free.
 */
bool sdpu_fault_plan_parse(const struct sdpu_json *input, struct sdpu_fault_plan *out, char *error, size_t size);
void sdpu_fault_plan_free(struct sdpu_fault_plan *plan);

/* A fault's seed: its own, else the plan's mixed with its id (FNV-1a). */
uint32_t sdpu_fault_seed(const struct sdpu_fault *fault, uint32_t plan_seed);

/* mulberry32: the next draw in [0, 1). */
double sdpu_mulberry32(uint32_t *state);

#endif /* SOFTDPU_CAPI_FAULT_PLAN_H_ */
