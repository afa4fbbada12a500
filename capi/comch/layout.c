/* SPDX-License-Identifier: Apache-2.0 */
/* comch/layout.h: sizes in 64 bits, so that counts a hostile header declares cannot overflow them. */
#include "comch/layout.h"

#include "core/shm.h"
#include "fabric/ring.h"

#define MAGIC 0x4e4e4f43 /* 'CONN' */
#define VERSION 4
#define OFF_MAGIC 64
#define OFF_TABLE 576
#define CONTROL_PAYLOAD 4

void sdpu_conn_layout(struct sdpu_conn_layout *l, uint32_t msg_size, uint32_t c2s, uint32_t s2c, uint32_t entries)
{
	l->msg_size = msg_size;
	l->c2s_slots = c2s;
	l->s2c_slots = s2c;
	l->entries = entries;
	l->c2s_base = OFF_TABLE + (uint64_t)entries * SDPU_ENTRY_SIZE;
	l->s2c_base = l->c2s_base + sdpu_ring_size(c2s, msg_size);
	l->c2s_control_base = l->s2c_base + sdpu_ring_size(s2c, msg_size);
	l->s2c_control_base = l->c2s_control_base + sdpu_ring_size(2 * (uint64_t)entries, CONTROL_PAYLOAD);
	l->size = l->s2c_control_base + sdpu_ring_size(2 * (uint64_t)entries, CONTROL_PAYLOAD);
}

doca_error_t sdpu_conn_segment_create(const struct sdpu_conn_layout *l, uint32_t position, struct sdpu_segment **out)
{
	struct sdpu_segment *s;
	doca_error_t err = sdpu_segment_create("conn", l->size - SDPU_SEGMENT_HEADER, &s);
	const uint64_t rings[] = {l->c2s_base, l->s2c_base, l->c2s_control_base, l->s2c_control_base};

	if (err != DOCA_SUCCESS)
		return err;
	sdpu_put_u32(s->base + OFF_MAGIC + 4, l->msg_size);
	sdpu_put_u32(s->base + OFF_MAGIC + 8, l->c2s_slots);
	sdpu_put_u32(s->base + OFF_MAGIC + 12, l->s2c_slots);
	sdpu_put_u32(s->base + OFF_MAGIC + 16, l->entries);
	sdpu_put_u32(s->base + OFF_MAGIC + 20, VERSION);
	for (int i = 0; i < 4; i++)
		sdpu_ring_init(s->base + rings[i], position);
	sdpu_store(s->base + SDPU_CONN_STATE, SDPU_CONN_CONNECTED);
	sdpu_store(s->base + OFF_MAGIC, MAGIC);
	*out = s;
	return DOCA_SUCCESS;
}

bool sdpu_conn_layout_read(const struct sdpu_segment *s, struct sdpu_conn_layout *l)
{
	if (s->size < OFF_TABLE || (uint32_t)sdpu_load(s->base + OFF_MAGIC) != MAGIC ||
	    sdpu_get_u32(s->base + OFF_MAGIC + 20) != VERSION)
		return false;
	sdpu_conn_layout(l, sdpu_get_u32(s->base + OFF_MAGIC + 4), sdpu_get_u32(s->base + OFF_MAGIC + 8),
			 sdpu_get_u32(s->base + OFF_MAGIC + 12), sdpu_get_u32(s->base + OFF_MAGIC + 16));
	return l->size <= s->size && l->entries <= (1u << 16) && l->msg_size > 0 && l->c2s_slots > 0 && l->s2c_slots > 0;
}
