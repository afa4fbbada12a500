/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fault plan's files (docs/protocol.md, "Fault plan files"; src/fabric/faults/files.ts): reading the
 * fabric's faults.json and $SOFTDPU_FAULTS, and writing this process's counts file
 * faults.<pid>-<start>.t<pid> (whole, to a temporary entry renamed over it). The C library keeps no
 * tally: a sweep folds a dead process's counts into faults-tally.json from the TypeScript side.
 */
#ifndef SOFTDPU_CAPI_FAULT_FILES_H_
#define SOFTDPU_CAPI_FAULT_FILES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/fault_plan.h"

struct sdpu_fault_count {
	const char *id, *source, *kind;
	uint64_t injections;
};

/* "<st_ino>:<st_mtime_ns>:<st_size>" of dir/faults.json, "none" when there is none. */
void sdpu_fault_plan_stamp(const char *dir, char *out, size_t size);

/* dir/faults.json (missing: an empty plan); false with the reason when it does not parse or validate. */
bool sdpu_fault_plan_read(const char *dir, struct sdpu_fault_plan *plan, uint32_t *seed, char *error, size_t size);

/* $SOFTDPU_FAULTS, a JSON plan or the path of one (unset: an empty plan); ids env-1, env-2... */
bool sdpu_fault_env_read(struct sdpu_fault_plan *plan, uint32_t *seed, char *error, size_t size);

/* Writes the counts file (n > 0) or removes it (n == 0); whether it exists afterwards. */
bool sdpu_fault_counts_write(const char *dir, const struct sdpu_fault_count *counts, size_t n);

#endif /* SOFTDPU_CAPI_FAULT_FILES_H_ */
