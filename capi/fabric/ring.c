/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/ring.h: the producer's plain stores are published by its tail store; the consumer's head store frees. */
#include "fabric/ring.h"

#include <string.h>

#include "core/shm.h"

/* Past this offset a producer that finds the ring empty goes back to 0 (its own policy); it looks once in 64. */
#define WRAP_AFTER (64 * 1024)
#define WRAP_LOOK_EVERY 64u

/* Bytes a record of `len` payload bytes takes. */
static uint64_t record_size(uint64_t len)
{
	return SDPU_RECORD_HEADER + (len + 7) / 8 * 8;
}

/*
 * The record area: `slots + 1` largest records, a multiple of 64 (none for no slot). A hostile header's
 * u32 counts can make the product pass 2^64 (and wrap to a size a segment may have): such an area is
 * SDPU_RING_TOO_BIG, larger than any mapping, and four of them and a table still add up without a wrap.
 */
static uint64_t area_size(uint64_t slots, uint64_t payload)
{
	uint64_t r = record_size(payload);

	if (slots == 0)
		return 0;
	if (slots + 1 > (SDPU_RING_TOO_BIG - 63) / r)
		return SDPU_RING_TOO_BIG;
	return ((slots + 1) * r + 63) / 64 * 64;
}

uint64_t sdpu_ring_size(uint64_t slots, uint64_t payload)
{
	return SDPU_RING_HEADER + area_size(slots, payload);
}

/* The offset after a record of `len` bytes at `at`: the same rule on both sides. */
static uint64_t after(const struct sdpu_ring *ring, uint64_t at, uint32_t len)
{
	uint64_t next = at + record_size(len);

	return (int64_t)next > ring->last_start ? 0 : next;
}

void sdpu_ring_init(uint8_t *base, uint32_t position)
{
	sdpu_store(base, (int32_t)position);
	sdpu_store(base + 64, (int32_t)position);
}

void sdpu_ring_attach(struct sdpu_ring *ring, uint8_t *base, uint32_t slots, uint32_t payload, bool producer)
{
	memset(ring, 0, sizeof(*ring));
	ring->first = base + SDPU_RING_HEADER;
	ring->tail_word = base;
	ring->head_word = base + 64;
	ring->slots = slots;
	ring->payload = payload;
	/* A ring of no slot (a control ring of a table that declares no entry) holds nothing: any record is corrupt. */
	ring->last_start = (int64_t)area_size(slots, payload) - (int64_t)record_size(payload);
	ring->position = (uint32_t)sdpu_load(producer ? ring->tail_word : ring->head_word);
	ring->seen = (uint32_t)sdpu_load(producer ? ring->head_word : ring->tail_word);
}

/* Records in the ring, as a signed 32-bit difference of the indices. */
static int32_t used(uint32_t tail, uint32_t head)
{
	return (int32_t)(tail - head);
}

bool sdpu_ring_has_room(struct sdpu_ring *ring)
{
	int32_t n;

	if (ring->corrupt)
		return false;
	n = used(ring->position, ring->seen);
	if (n >= 0 && (uint32_t)n < ring->slots)
		return true;
	if (ring->slots == 0)
		return false;
	ring->seen = (uint32_t)sdpu_load(ring->head_word);
	n = used(ring->position, ring->seen);
	if (n < 0 || (uint32_t)n > ring->slots)
		ring->corrupt = true;
	return !ring->corrupt && (uint32_t)n < ring->slots;
}

/* A record header (or a WRAP header: length 0) at `at`. */
static void put_header(uint8_t *at, uint16_t type, uint32_t len)
{
	sdpu_put_u32(at, len);
	sdpu_put_u16(at + 4, type);
	sdpu_put_u16(at + 6, 0);
}

/* Back to the area's start if the consumer read every record: a WRAP header where it looks next. */
static void wrap_if_empty(struct sdpu_ring *ring)
{
	ring->seen = (uint32_t)sdpu_load(ring->head_word);
	if (ring->seen != ring->position)
		return; /* not empty (or corrupt: sdpu_ring_has_room says so at its next reload) */
	put_header(ring->first + ring->at, SDPU_RING_WRAP, 0);
	ring->at = 0;
	ring->past = 0;
}

bool sdpu_ring_push(struct sdpu_ring *ring, uint16_t type, const void *data, uint32_t len)
{
	uint8_t *at;

	if (len > ring->payload || !sdpu_ring_has_room(ring))
		return false;
	if (ring->at > WRAP_AFTER && ring->past++ % WRAP_LOOK_EVERY == 0)
		wrap_if_empty(ring);
	at = ring->first + ring->at;
	put_header(at, type, len);
	if (len > 0)
		memcpy(at + SDPU_RECORD_HEADER, data, len);
	ring->at = after(ring, ring->at, len);
	ring->position++;
	sdpu_store(ring->tail_word, (int32_t)ring->position);
	return true;
}

int sdpu_ring_peek(struct sdpu_ring *ring, uint16_t *type, uint32_t *len, const uint8_t **data)
{
	const uint8_t *at;
	int32_t n;

	if (ring->corrupt)
		return -1;
	if (ring->position == ring->seen) {
		ring->seen = (uint32_t)sdpu_load(ring->tail_word);
		if (ring->position == ring->seen)
			return 0;
	}
	n = used(ring->seen, ring->position);
	if (n < 0 || (uint32_t)n > ring->slots) {
		ring->corrupt = true;
		return -1;
	}
	at = ring->first + ring->at;
	*type = sdpu_get_u16(at + 4);
	if (*type == SDPU_RING_WRAP && ring->at != 0) {
		ring->at = 0; /* the producer went back early (a WRAP at 0 is corruption: its type says so) */
		at = ring->first;
		*type = sdpu_get_u16(at + 4);
	}
	*len = sdpu_get_u32(at);
	if (*len > ring->payload) {
		ring->corrupt = true;
		return -1;
	}
	ring->peeked = *len;
	*data = at + SDPU_RECORD_HEADER;
	return 1;
}

void sdpu_ring_advance(struct sdpu_ring *ring)
{
	ring->at = after(ring, ring->at, ring->peeked);
	ring->position++;
	sdpu_store(ring->head_word, (int32_t)ring->position);
}
