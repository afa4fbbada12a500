/* SPDX-License-Identifier: Apache-2.0 */
/*
 * comch/endpoint.h: reserving an entry (compareExchange FREE -> RESERVING, the id from the shared
 * counter, the plain fields published by storing CREATED), publishing the engine's bell in it, the
 * request bell, and giving it back (bell reference withdrawn, then FREE).
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "comch/endpoint.h"
#include "core/internal.h"
#include "core/pe.h"
#include "core/shm.h"
#include "fabric/liveness.h"
#include "fabric/topology.h"

static uint32_t requests_offset(bool server_side)
{
	return server_side ? SDPU_CONN_SERVER_REQUESTS : SDPU_CONN_CLIENT_REQUESTS;
}

bool sdpu_endpoint_connected(const struct sdpu_endpoint *ep)
{
	return sdpu_load(ep->table->base + SDPU_CONN_STATE) == SDPU_CONN_CONNECTED;
}

bool sdpu_endpoint_alive(struct sdpu_endpoint *ep)
{
	enum doca_ctx_states state = ep->ctx.state;

	if (sdpu_endpoint_connected(ep))
		return true;
	if ((state == DOCA_CTX_STATE_STARTING || state == DOCA_CTX_STATE_RUNNING) && !ep->failing) {
		ep->failing = true;
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ep->ctx.ops->name, "%s %u: its connection ended; failing with DOCA_ERROR_CONNECTION_RESET",
			     ep->consumer ? "consumer" : "producer", ep->id);
		sdpu_ctx_fail(&ep->ctx, DOCA_ERROR_CONNECTION_RESET);
	}
	return false;
}

uint32_t sdpu_endpoint_cap(const struct sdpu_endpoint *ep, int cap)
{
	return (uint32_t)ep->info->caps.value[cap];
}

static uint32_t count(const struct sdpu_endpoint *ep, uint32_t side, uint32_t kind)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ep->layout.entries; i++) {
		const uint8_t *e = sdpu_entry(ep, i);

		if (sdpu_load(e + SDPU_ENTRY_STATE) != SDPU_ENDPOINT_FREE && sdpu_get_u32(e + SDPU_ENTRY_SIDE) == side &&
		    sdpu_get_u32(e + SDPU_ENTRY_KIND) == kind)
			n++;
	}
	return n;
}

static doca_error_t reserve(struct sdpu_endpoint *ep, const char *call)
{
	uint32_t side = ep->server_side ? 0 : 1, kind = ep->consumer ? SDPU_KIND_CONSUMER : SDPU_KIND_PRODUCER;
	uint32_t max = sdpu_endpoint_cap(ep, ep->consumer ? SDPU_CAP_CONSUMER_MAX_CONSUMERS : SDPU_CAP_PRODUCER_MAX_PRODUCERS);
	struct sdpu_identity self = sdpu_self();
	uint32_t tid;
	uint64_t tstart;

	if (count(ep, side, kind) >= max) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ep->ctx.ops->name, "%s: the connection already has its maximum of %u %ss on this side", call, max,
			     ep->consumer ? "consumer" : "producer");
		return DOCA_ERROR_NO_MEMORY;
	}
	sdpu_self_thread(&tid, &tstart);
	for (uint32_t i = 0; i < ep->layout.entries; i++) {
		uint8_t *e = sdpu_entry(ep, i);

		if (!sdpu_cas(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_FREE, SDPU_ENDPOINT_RESERVING))
			continue;
		ep->index = i;
		ep->id = (uint32_t)sdpu_add(ep->table->base + (ep->consumer ? SDPU_CONN_LAST_CONSUMER_ID : SDPU_CONN_LAST_PRODUCER_ID), 1) + 1;
		sdpu_put_u32(e + SDPU_ENTRY_ID, ep->id);
		sdpu_put_u32(e + SDPU_ENTRY_SIDE, side);
		sdpu_put_u32(e + SDPU_ENTRY_KIND, kind);
		sdpu_put_u32(e + SDPU_ENTRY_OWNER, self.pid);
		sdpu_put_u32(e + SDPU_ENTRY_OWNER + 4, tid);
		sdpu_put_f64(e + SDPU_ENTRY_OWNER + 8, (double)self.start);
		sdpu_put_f64(e + SDPU_ENTRY_OWNER + 16, (double)tstart);
		sdpu_store(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_CREATED);
		sdpu_endpoint_request(ep);
		return DOCA_SUCCESS;
	}
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ep->ctx.ops->name, "%s: the connection's endpoint table (%u entries) is full", call, ep->layout.entries);
	return DOCA_ERROR_NO_MEMORY;
}

doca_error_t sdpu_endpoint_init(struct sdpu_endpoint *ep, struct doca_comch_connection *conn, bool consumer, const struct sdpu_ctx_ops *ops,
				const char *call)
{
	doca_error_t err;

	sdpu_ctx_init(&ep->ctx, ops);
	ep->consumer = consumer;
	ep->source.bit = -1;
	if (conn->state != SDPU_CONNECTED || conn->segment == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ops->name, "%s: the connection is not established", call);
		return DOCA_ERROR_BAD_STATE;
	}
	ep->server_side = conn->server_side;
	ep->info = conn->owner->dev->info;
	err = sdpu_segment_open(&conn->segment->descriptor, "conn", call, &ep->table);
	if (err != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ops->name, "%s: the connection's segment does not open (%s)", call, doca_error_get_name(err));
		return DOCA_ERROR_BAD_STATE;
	}
	if (!sdpu_conn_layout_read(ep->table, &ep->layout)) {
		sdpu_segment_close(ep->table);
		ep->table = NULL;
		return DOCA_ERROR_BAD_STATE;
	}
	if (!sdpu_endpoint_connected(ep)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ops->name, "%s: the connection is not established", call);
		err = DOCA_ERROR_BAD_STATE;
	} else {
		err = reserve(ep, call);
	}
	if (err != DOCA_SUCCESS) {
		sdpu_segment_close(ep->table);
		ep->table = NULL;
	}
	return err;
}

void sdpu_endpoint_release(struct sdpu_endpoint *ep)
{
	uint8_t *e = sdpu_entry(ep, ep->index);

	sdpu_bell_ref_withdraw(e + SDPU_ENTRY_BELL);
	sdpu_store(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_FREE);
	sdpu_remote_bell_close(ep->side_bell);
	ep->side_bell = NULL;
	sdpu_segment_close(ep->table);
	ep->table = NULL;
}

doca_error_t sdpu_endpoint_publish(struct sdpu_endpoint *ep, bool (*poll)(struct sdpu_source *))
{
	struct sdpu_bell_ref ref;

	if (!ep->reserved) {
		if (!sdpu_source_reserve(&ep->ctx, &ep->source, poll))
			return DOCA_ERROR_NO_MEMORY;
		ep->reserved = true;
		ref = sdpu_bell_ref_of(ep->ctx.pe->bell, (uint32_t)ep->source.bit);
		sdpu_bell_ref_publish(sdpu_entry(ep, ep->index) + SDPU_ENTRY_BELL, &ref);
		sdpu_source_attach(&ep->source); /* a ringer that found no reference did not ring: look once */
	}
	ep->failing = false;
	return DOCA_SUCCESS;
}

void sdpu_endpoint_unpublish(struct sdpu_endpoint *ep)
{
	if (!ep->reserved)
		return;
	sdpu_bell_ref_withdraw(sdpu_entry(ep, ep->index) + SDPU_ENTRY_BELL);
	sdpu_source_release(&ep->source);
	ep->reserved = false;
}

void sdpu_endpoint_request(struct sdpu_endpoint *ep)
{
	sdpu_add(ep->table->base + requests_offset(ep->server_side), 1);
	if (ep->side_bell == NULL) {
		struct sdpu_bell_ref ref;
		uint8_t *side = ep->table->base + (ep->server_side ? SDPU_CONN_SIDE_SERVER : SDPU_CONN_SIDE_CLIENT);

		/* Not published yet: the context looks at the connection once when it publishes. */
		if (sdpu_bell_ref_read(side + SDPU_SIDE_BELL, &ref) != 1 || sdpu_remote_bell_open(&ref, &ep->side_bell) != DOCA_SUCCESS)
			return;
		ep->side_bit = ref.bit;
	}
	sdpu_remote_bell_ring(ep->side_bell, ep->side_bit);
}

bool sdpu_endpoint_owner_alive(const struct sdpu_endpoint *ep, uint32_t index)
{
	const uint8_t *o = sdpu_entry(ep, index) + SDPU_ENTRY_OWNER;
	uint32_t pid = sdpu_get_u32(o), tid = sdpu_get_u32(o + 4);
	double start = sdpu_get_f64(o + 8), tstart = sdpu_get_f64(o + 16);

	return sdpu_safe_integer(start) && sdpu_safe_integer(tstart) && sdpu_thread_alive(pid, (uint64_t)start, tid, (uint64_t)tstart);
}
