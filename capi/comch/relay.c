/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A context relays its side's consumers to the peer (docs/protocol.md, "Control rings"): when this
 * side's request bell changed, every consumer entry of this side in REQUESTED is moved to ANNOUNCED and
 * announced with CONSUMER_NEW; every one in EXPIRING is announced with CONSUMER_EXPIRED (if this
 * connection announced it) and moved to EXPIRED, and its endpoint rung. A full control ring, or an
 * entry that moved meanwhile, makes the next look rescan. The peer's context is rung once per batch.
 */
#include <stdlib.h>

#include "comch/comch.h"
#include "comch/endpoint.h"
#include "core/shm.h"

static void ring_entry(uint8_t *entry)
{
	struct sdpu_bell_ref ref;

	if (sdpu_bell_ref_read(entry + SDPU_ENTRY_BELL, &ref) == 1)
		sdpu_ring_once(&ref);
}

/* One entry of this side; true if a record was pushed. */
static bool relay_entry(struct doca_comch_connection *conn, uint32_t i, uint8_t *e)
{
	int32_t state = sdpu_load(e + SDPU_ENTRY_STATE);
	uint8_t index[4];

	sdpu_put_u32(index, i);
	if (state == SDPU_ENDPOINT_REQUESTED) {
		if (!sdpu_cas(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_REQUESTED, SDPU_ENDPOINT_ANNOUNCED)) {
			conn->relay_again = true;
			return false;
		}
		if (sdpu_ring_push(&conn->control_out, SDPU_CONTROL_CONSUMER_NEW, index, 4)) {
			conn->announced[i] = 1;
			return true;
		}
		/* No room: back to REQUESTED; if that fails the consumer began to stop and expires unannounced. */
		sdpu_cas(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_ANNOUNCED, SDPU_ENDPOINT_REQUESTED);
		conn->relay_again = true;
		return false;
	}
	if (state != SDPU_ENDPOINT_EXPIRING)
		return false;
	bool pushed = false;

	if (conn->announced[i]) {
		if (!sdpu_ring_push(&conn->control_out, SDPU_CONTROL_CONSUMER_EXPIRED, index, 4)) {
			conn->relay_again = true;
			return false;
		}
		conn->announced[i] = 0;
		pushed = true;
	}
	if (sdpu_cas(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_EXPIRING, SDPU_ENDPOINT_EXPIRED))
		ring_entry(e);
	return pushed;
}

void sdpu_conn_relay(struct doca_comch_connection *conn)
{
	uint8_t *base = conn->segment->base;
	int32_t requests = sdpu_load(base + (conn->server_side ? SDPU_CONN_SERVER_REQUESTS : SDPU_CONN_CLIENT_REQUESTS));
	uint32_t side = conn->server_side ? 0 : 1;
	bool pushed = false;

	if (requests == conn->requests_seen && !conn->relay_again)
		return;
	if (conn->announced == NULL && (conn->announced = calloc(conn->layout.entries, 1)) == NULL)
		return;
	conn->requests_seen = requests;
	conn->relay_again = false;
	for (uint32_t i = 0; i < conn->layout.entries; i++) {
		uint8_t *e = base + sdpu_entry_offset(i);
		int32_t state = sdpu_load(e + SDPU_ENTRY_STATE);

		if (state == SDPU_ENDPOINT_FREE || state == SDPU_ENDPOINT_RESERVING || sdpu_get_u32(e + SDPU_ENTRY_SIDE) != side ||
		    sdpu_get_u32(e + SDPU_ENTRY_KIND) != SDPU_KIND_CONSUMER) {
			if (state == SDPU_ENDPOINT_FREE)
				conn->announced[i] = 0;
			continue;
		}
		if (relay_entry(conn, i, e))
			pushed = true;
	}
	if (pushed)
		sdpu_conn_ring_peer(conn);
}
