/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared segments (docs/protocol.md, "Segments"): memfds another process of the same user opens as
 * /proc/<owner pid>/fd/<fd>, each starting with a 64-byte header that lets an opener check it reached the
 * segment it was told about (the owner's identity, a random token, the kind). The payload starts at 64.
 */
#ifndef SOFTDPU_CAPI_SEGMENT_H_
#define SOFTDPU_CAPI_SEGMENT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#define SDPU_SEGMENT_HEADER 64
#define SDPU_DESCRIPTOR_SIZE 40

/* What a peer needs to open a segment (40 bytes wherever it is embedded). */
struct sdpu_descriptor {
	uint32_t pid;
	uint32_t fd;
	double start;
	double size;
	uint8_t token[16];
};

struct sdpu_segment {
	uint8_t *base;
	size_t size;
	/* The owner's memfd (kept open while the segment exists); -1 in an opener. */
	int fd;
	struct sdpu_descriptor descriptor;
};

void sdpu_descriptor_encode(const struct sdpu_descriptor *d, uint8_t *at);

/*
 * Reads a descriptor from memory or a frame another process wrote (one copy, then checks): INVALID_VALUE
 * for values no segment could have (pid 0, a start that is not a safe integer, a size outside (64, 2^32]).
 */
doca_error_t sdpu_descriptor_decode(const uint8_t *at, struct sdpu_descriptor *d);

/* Whether two descriptors name the same segment. */
bool sdpu_descriptor_equal(const struct sdpu_descriptor *a, const struct sdpu_descriptor *b);

/* A new segment of `kind` (1 to 15 lower-case letters) with `payload` bytes after the header. */
doca_error_t sdpu_segment_create(const char *kind, size_t payload, struct sdpu_segment **out);

/*
 * Opens a peer's segment, checking everything protocol.md lists: NOT_FOUND for a stale or forged
 * descriptor (OPERATING_SYSTEM when /proc refuses for another reason than ENOENT), INVALID_VALUE for a
 * genuine segment whose kind is not `kind`. `call` names the caller in the log line.
 */
doca_error_t sdpu_segment_open(const struct sdpu_descriptor *d, const char *kind, const char *call,
			       struct sdpu_segment **out);

/* Owner only: every opener must stop using it. */
void sdpu_segment_revoke(struct sdpu_segment *segment);

bool sdpu_segment_revoked(const struct sdpu_segment *segment);

/* Unmaps (and, for the owner, closes the memfd). NULL is ignored. */
void sdpu_segment_close(struct sdpu_segment *segment);

#endif /* SOFTDPU_CAPI_SEGMENT_H_ */
