/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single-producer single-consumer rings of fixed-size records in a shared segment (docs/protocol.md,
 * "Rings"): base + 0 the producer's tail, base + 64 the consumer's head, base + 128 the slots, each a u32
 * length, a u16 type, a u16 reserved word and the payload padded to 8 bytes. Positions are free-running
 * 32-bit counters; each side takes its slot index from its position once, when it attaches (rings are
 * attached empty, at their start position), and then counts records modulo the slot count itself, so the
 * 2^32 wrap is harmless for any slot count. Nothing a peer writes can move a read or a write outside the
 * ring: indices that put fewer than none or more than `slots` records in it, or a length beyond the
 * payload size, are corruption.
 */
#ifndef SOFTDPU_CAPI_RING_H_
#define SOFTDPU_CAPI_RING_H_

#include <stdbool.h>
#include <stdint.h>

#define SDPU_RING_HEADER 128
#define SDPU_RECORD_HEADER 8

/* Bytes a ring takes (a multiple of 64), in 64 bits: a hostile header's counts cannot overflow it. */
uint64_t sdpu_ring_size(uint64_t slots, uint64_t payload);

/* The creator: both indices at `position`. */
void sdpu_ring_init(uint8_t *base, uint32_t position);

struct sdpu_ring {
	uint8_t *first;
	uint8_t *tail_word;
	uint8_t *head_word;
	uint32_t slots;
	uint32_t payload;
	uint32_t slot_bytes;
	/* This side's position and slot, and the last value seen of the other side's index. */
	uint32_t position;
	uint32_t slot;
	uint32_t seen;
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
void sdpu_ring_advance(struct sdpu_ring *ring);

#endif /* SOFTDPU_CAPI_RING_H_ */
