/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A comch connection segment as a hostile peer may have written it: the input is the segment's bytes.
 * The header is read as a client reads it (sdpu_conn_layout_read, capi/comch/layout.c); when it
 * declares a layout that fits, each of the four rings (capi/fabric/ring.c) is attached as its consumer
 * and read to its end, and as its producer and filled, as a connection's two sides do.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_error.h>

#include "comch/layout.h"
#include "fabric/ring.h"
#include "fabric/segment.h"
#include "seeds.h"

static void write_seeds(void)
{
	struct sdpu_conn_layout l;
	struct sdpu_segment *s;
	struct sdpu_ring ring;
	static const uint8_t hello[] = "a message in the ring";
	uint32_t index = 1;

	sdpu_conn_layout(&l, 64, 4, 4, 2);
	if (sdpu_conn_segment_create(&l, 0xfffffffe, &s) != DOCA_SUCCESS)
		exit(2);
	seed("empty", s->base, s->size);
	/* Records in both message rings and a consumer announced on a control ring, across the 2^32 wrap. */
	sdpu_ring_attach(&ring, s->base + l.c2s_base, l.c2s_slots, l.msg_size, true);
	for (int i = 0; i < 3; i++)
		sdpu_ring_push(&ring, SDPU_RECORD_MSG, hello, sizeof(hello));
	sdpu_ring_attach(&ring, s->base + l.s2c_base, l.s2c_slots, l.msg_size, true);
	sdpu_ring_push(&ring, SDPU_RECORD_DISCONNECT, NULL, 0);
	sdpu_ring_attach(&ring, s->base + l.c2s_control_base, 2 * l.entries, 4, true);
	sdpu_ring_push(&ring, SDPU_CONTROL_CONSUMER_NEW, &index, sizeof(index));
	seed("records", s->base, s->size);
	sdpu_segment_close(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	seed_mode();
	return 0;
}

static void consume(uint8_t *base, uint32_t slots, uint32_t payload)
{
	struct sdpu_ring ring;
	volatile uint32_t sink = 0;

	sdpu_ring_attach(&ring, base, slots, payload, false);
	/* A ring holds at most `slots` records; reading stops at empty or corrupt, or after that many. */
	for (uint64_t i = 0; i <= (uint64_t)slots; i++) {
		const uint8_t *data;
		uint16_t type;
		uint32_t len;

		if (sdpu_ring_peek(&ring, &type, &len, &data) != 1)
			break;
		for (uint32_t k = 0; k < len; k++)
			sink += data[k];
		sdpu_ring_advance(&ring);
	}
	(void)sink;
}

static void produce(uint8_t *base, uint32_t slots, uint32_t payload)
{
	struct sdpu_ring ring;
	static const uint8_t data[64];

	sdpu_ring_attach(&ring, base, slots, payload, true);
	for (uint64_t i = 0; i <= (uint64_t)slots; i++)
		if (!sdpu_ring_push(&ring, SDPU_RECORD_MSG, data, payload < sizeof(data) ? payload : sizeof(data)))
			break;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sdpu_conn_layout l;
	struct sdpu_segment s = {.fd = -1};
	const uint64_t *bases[4] = {&l.c2s_base, &l.s2c_base, &l.c2s_control_base, &l.s2c_control_base};

	/* A segment is a mapping of its exact size: a read or write past it is AddressSanitizer's to see. */
	s.base = malloc(size > 0 ? size : 1);
	if (s.base == NULL)
		return 0;
	memcpy(s.base, data, size);
	s.size = size;
	if (sdpu_conn_layout_read(&s, &l)) {
		const uint32_t slots[4] = {l.c2s_slots, l.s2c_slots, 2 * l.entries, 2 * l.entries};
		const uint32_t payload[4] = {l.msg_size, l.msg_size, 4, 4};

		for (int i = 0; i < 4; i++) {
			consume(s.base + *bases[i], slots[i], payload[i]);
			produce(s.base + *bases[i], slots[i], payload[i]);
		}
	}
	free(s.base);
	return 0;
}
