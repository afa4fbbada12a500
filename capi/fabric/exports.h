/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The export table (docs/protocol.md, "Export table"): one segment per exporting process (kind
 * `exports`), 4096 pairs of i32 [generation, state] after the header. An exporter claims a slot per
 * exported object and revokes it when the object goes; an importer checks the slot (two atomic loads)
 * and the exporter's liveness before it trusts an imported object.
 */
#ifndef SOFTDPU_CAPI_EXPORTS_H_
#define SOFTDPU_CAPI_EXPORTS_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#include "fabric/segment.h"

#define SDPU_EXPORT_SLOTS 4096
#define SDPU_EXPORT_TABLE_SIZE (SDPU_SEGMENT_HEADER + SDPU_EXPORT_SLOTS * 8)

/* A claimed slot, as a PCI trailer carries it. */
struct sdpu_export_slot {
	struct sdpu_descriptor table;
	uint32_t index;
	int32_t generation;
};

/* Claims a slot of this process's table (made on first use); NO_MEMORY when all are in use. */
doca_error_t sdpu_export_claim(struct sdpu_export_slot *slot);
/* Revokes it: every importer sees it invalid from now on. */
void sdpu_export_revoke(const struct sdpu_export_slot *slot);

/* An importer's view of a slot: the exporter's table, mapped once. */
struct sdpu_export_view {
	struct sdpu_export_slot slot;
	struct sdpu_segment *table;
	/* The exporter's liveness, asked again when older than 20 ms (ANSWER_TTL_MS); dead is final. */
	int64_t checked_ms;
	bool dead;
};

/*
 * Opens the slot a blob names (index < 4096 and a table of the right size, else INVALID_VALUE) and
 * tells whether it is valid (NOT_FOUND if not: a table that does not open, a dead exporter, a revoked
 * export). `call` names the caller in log lines.
 */
doca_error_t sdpu_export_view_open(const struct sdpu_export_slot *slot, const char *call, struct sdpu_export_view *view);
/* Whether the export is still valid: memory only when `syscalls` is false (the liveness answer is not asked again). */
bool sdpu_export_view_valid(struct sdpu_export_view *view, bool syscalls);
void sdpu_export_view_close(struct sdpu_export_view *view);

#endif /* SOFTDPU_CAPI_EXPORTS_H_ */
