/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The shared segment of one comch connection (docs/protocol.md, "Comch connection segment"), made by the
 * server per accepted client: the header, the two side blocks (wants room, bell reference), the fast-path
 * header (connection state, id counters, request bells), the endpoint table and the four rings.
 */
#ifndef SOFTDPU_CAPI_LAYOUT_H_
#define SOFTDPU_CAPI_LAYOUT_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#include "fabric/segment.h"

#define SDPU_CONN_SIDE_SERVER 128
#define SDPU_CONN_SIDE_CLIENT 256
/* In a side block: i32 wants room, and the bell reference at +64. */
#define SDPU_SIDE_BELL 64
#define SDPU_CONN_STATE 384
#define SDPU_CONN_CONNECTED 1
#define SDPU_CONN_CLOSED 2
#define SDPU_ENTRY_SIZE 192
#define SDPU_ENTRY_STATE 0
#define SDPU_ENTRY_ID 4
#define SDPU_ENTRY_SIDE 8
#define SDPU_ENTRY_KIND 20
#define SDPU_ENTRY_BELL 104
/* Endpoint states read here (the fast path's others are the peer's business in this stage). */
#define SDPU_ENDPOINT_FREE 0
#define SDPU_ENDPOINT_REQUESTED 2
#define SDPU_ENDPOINT_ANNOUNCED 3
#define SDPU_ENDPOINT_REGISTERED 4
#define SDPU_ENDPOINT_RESERVING 7
#define SDPU_KIND_CONSUMER 0
/* Control records and message records. */
#define SDPU_CONTROL_CONSUMER_NEW 1
#define SDPU_CONTROL_CONSUMER_EXPIRED 2
#define SDPU_RECORD_MSG 1
#define SDPU_RECORD_DISCONNECT 2

struct sdpu_conn_layout {
	uint32_t msg_size;
	uint32_t c2s_slots;
	uint32_t s2c_slots;
	uint32_t entries;
	uint64_t c2s_base;
	uint64_t s2c_base;
	uint64_t c2s_control_base;
	uint64_t s2c_control_base;
	uint64_t size;
};

void sdpu_conn_layout(struct sdpu_conn_layout *l, uint32_t msg_size, uint32_t c2s, uint32_t s2c, uint32_t entries);

/* Server side: a fresh segment of layout `l`, its rings at `position`, CONN_CONNECTED, magic last. */
doca_error_t sdpu_conn_segment_create(const struct sdpu_conn_layout *l, uint32_t position, struct sdpu_segment **out);

/* The layout a segment declares, if it is a connection segment of this version that fits in it. */
bool sdpu_conn_layout_read(const struct sdpu_segment *s, struct sdpu_conn_layout *l);

/* Byte offset of endpoint table entry `index`. */
static inline uint64_t sdpu_entry_offset(uint32_t index)
{
	return 576 + (uint64_t)index * SDPU_ENTRY_SIZE;
}

#endif /* SOFTDPU_CAPI_LAYOUT_H_ */
