/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single-producer single-consumer rings of variable-size records in a shared segment (docs/protocol.md,
 * "Rings"): base + 0 the producer's tail, base + 64 the consumer's head (both free-running 32-bit record
 * counts), base + 128 the record area, records packed one after another: a u32 length, a u16 type, a u16
 * reserved word and the payload padded to 8 bytes. The area holds `slots + 1` largest records. Each side
 * keeps its own byte offset into the area, from 0 when it attaches (rings are attached empty), moving it
 * past each record and back to 0 when less than a largest record would be left: the same rule on both
 * sides. A writer that finds the ring empty past 64 KiB writes a WRAP header where its next record would
 * go and puts the record at 0; a reader that finds WRAP at its offset goes to 0 (so a connection whose
 * reader keeps up stays in the first pages of its area). Nothing a peer writes can move a read or a
 * write outside the ring: indices that put fewer than none or more than `slots` records in it, or a
 * length beyond the payload size, are corruption.
 */
#ifndef SOFTDPU_CAPI_RING_H_
#define SOFTDPU_CAPI_RING_H_

#include <stdbool.h>
#include <stdint.h>

#define SDPU_RING_HEADER 128
#define SDPU_RECORD_HEADER 8
/* A header that sends the reader back to the area's start (no record: it counts none). */
#define SDPU_RING_WRAP 0xffff

/* What an area a hostile header's counts would make too large for 64 bits takes: more than any mapping. */
#define SDPU_RING_TOO_BIG (UINT64_MAX / 8)

/* Bytes a ring takes (a multiple of 64, or about SDPU_RING_TOO_BIG), in 64 bits: u32 counts cannot wrap it. */
uint64_t sdpu_ring_size(uint64_t slots, uint64_t payload);

/* The creator: both indices at `position`. */
void sdpu_ring_init(uint8_t *base, uint32_t position);

struct sdpu_ring {
	uint8_t *first;
	uint8_t *tail_word;
	uint8_t *head_word;
	uint32_t slots;
	uint32_t payload;
	/* Offsets past this one leave less than a largest record: the next record goes at 0. */
	int64_t last_start;
	/* This side's position, its byte offset in the area, and the last value seen of the other side's index. */
	uint32_t position;
	uint64_t at;
	uint32_t seen;
	/* The producer: records written past 64 KiB since it last looked at the head for an early wrap. */
	uint32_t past;
	/* The consumer: the length of the record sdpu_ring_peek returned (sdpu_ring_advance moves past it). */
	uint32_t peeked;
	bool corrupt;
};

/* Attaches at `base` (which must lie in a mapping of sdpu_ring_size bytes) as the producer or consumer. */
void sdpu_ring_attach(struct sdpu_ring *ring, uint8_t *base, uint32_t slots, uint32_t payload, bool producer);

/* Producer: appends a record of `len` bytes (at most the payload size); false when full or corrupt. */
bool sdpu_ring_push(struct sdpu_ring *ring, uint16_t type, const void *data, uint32_t len);
/* Producer: whether one record fits (reloads the head only when the cached one says full). */
bool sdpu_ring_has_room(struct sdpu_ring *ring);

/*
 * Consumer: 1 and the oldest record (its payload at *data, valid until sdpu_ring_advance), 0 when empty,
 * -1 for corruption (then nothing is ever reported again).
 */
int sdpu_ring_peek(struct sdpu_ring *ring, uint16_t *type, uint32_t *len, const uint8_t **data);
/* Consumer: moves past the record sdpu_ring_peek returned (1), freeing its room. */
void sdpu_ring_advance(struct sdpu_ring *ring);

#endif /* SOFTDPU_CAPI_RING_H_ */
