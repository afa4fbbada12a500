/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/ring.h: the producer's plain stores are published by its tail store; the consumer's head store frees. */
#include "fabric/ring.h"

#include <string.h>

#include "core/shm.h"

static uint32_t slot_bytes(uint64_t payload)
{
	return (uint32_t)(SDPU_RECORD_HEADER + (payload + 7) / 8 * 8);
}

uint64_t sdpu_ring_size(uint64_t slots, uint64_t payload)
{
	uint64_t bytes = slots * (SDPU_RECORD_HEADER + (payload + 7) / 8 * 8);

	return SDPU_RING_HEADER + (bytes + 63) / 64 * 64;
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
	ring->slot_bytes = slot_bytes(payload);
	ring->position = (uint32_t)sdpu_load(producer ? ring->tail_word : ring->head_word);
	/* A ring of no slot (a control ring of a table that declares no entry) holds nothing: any record is corrupt. */
	ring->slot = slots > 0 ? ring->position % slots : 0;
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

bool sdpu_ring_push(struct sdpu_ring *ring, uint16_t type, const void *data, uint32_t len)
{
	uint8_t *at;

	if (len > ring->payload || !sdpu_ring_has_room(ring))
		return false;
	at = ring->first + (uint64_t)ring->slot * ring->slot_bytes;
	sdpu_put_u32(at, len);
	sdpu_put_u16(at + 4, type);
	sdpu_put_u16(at + 6, 0);
	if (len > 0)
		memcpy(at + SDPU_RECORD_HEADER, data, len);
	ring->slot = ring->slot + 1 == ring->slots ? 0 : ring->slot + 1;
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
	at = ring->first + (uint64_t)ring->slot * ring->slot_bytes;
	*len = sdpu_get_u32(at);
	*type = sdpu_get_u16(at + 4);
	if (*len > ring->payload) {
		ring->corrupt = true;
		return -1;
	}
	*data = at + SDPU_RECORD_HEADER;
	return 1;
}

void sdpu_ring_advance(struct sdpu_ring *ring)
{
	ring->slot = ring->slot + 1 == ring->slots ? 0 : ring->slot + 1;
	ring->position++;
	sdpu_store(ring->head_word, (int32_t)ring->position);
}
