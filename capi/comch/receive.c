/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A connection's receive side (docs/protocol.md, "Message rings", "Control rings"): one message per unit
 * of work, copied out of the peer's ring into this connection's buffer (valid during the callback, as
 * DOCA says) before its slot is freed; a record of unknown type or a length or index out of range ends the
 * connection with CONNECTION_ABORTED. The peer's control records announce its consumers: this side
 * registers them (ANNOUNCED -> REGISTERED, ringing the consumer) and raises the consumer events. A
 * record can be read before its sender moved the entry from REQUESTED to ANNOUNCED (the sender pushes
 * first); such an entry is registered at a later look, once ANNOUNCED (the sender rings after its move).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/shm.h"
#include "fabric/faults.h"

#define SOURCE "comch"
#define CONTROL_BUDGET 32

bool sdpu_conn_listening(const struct doca_comch_connection *conn)
{
	return conn->owner->ctx.state == DOCA_CTX_STATE_RUNNING && conn->owner->recv_cb != NULL && conn->state != SDPU_CLOSED &&
	       !conn->left;
}

/* The peer says it disconnects: the connection ends with NOT_CONNECTED once what came before is read. */
static void disconnect_read(struct doca_comch_connection *conn)
{
	sdpu_ring_advance(&conn->in);
	if (conn->state == SDPU_CONNECTED || conn->state == SDPU_DISCONNECTING || (conn->state == SDPU_CLOSING && conn->provisional)) {
		conn->state = SDPU_CLOSING;
		conn->close_reason = DOCA_ERROR_NOT_CONNECTED;
		conn->provisional = false;
	}
	sdpu_source_ready(&conn->source);
}

struct consumer_event {
	struct sdpu_work work;
	struct doca_comch_connection *conn;
	uint32_t id;
	bool expired;
};

static void run_consumer_event(struct sdpu_work *work)
{
	struct consumer_event *e = (struct consumer_event *)work;
	struct sdpu_comch *owner = e->conn->owner;
	doca_comch_event_consumer_cb_t cb = e->expired ? owner->consumer_expired : owner->consumer_new;

	if (cb != NULL && !(SDPU_FAULTS_ON(SDPU_FAULTS_EVENT) && sdpu_fault_lose_event(&owner->ctx, e->expired ? "consumer_expired" : "consumer_new")))
		cb(&owner->consumer_event, e->conn, e->id);
	free(e);
}

/* Registers the consumer of entry `index` if it is ANNOUNCED; false while it is still REQUESTED. */
static bool register_consumer(struct doca_comch_connection *conn, uint32_t index)
{
	uint8_t *entry = conn->segment->base + sdpu_entry_offset(index);
	struct sdpu_bell_ref ref;

	if (sdpu_cas(entry + SDPU_ENTRY_STATE, SDPU_ENDPOINT_ANNOUNCED, SDPU_ENDPOINT_REGISTERED)) {
		if (sdpu_bell_ref_read(entry + SDPU_ENTRY_BELL, &ref) == 1)
			sdpu_ring_once(&ref); /* its start completes now */
		return true;
	}
	return sdpu_load(entry + SDPU_ENTRY_STATE) != SDPU_ENDPOINT_REQUESTED;
}

/* Entries announced early: registered now if their sender moved them on (or forgotten if they left). */
static void register_late(struct doca_comch_connection *conn)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < conn->nunregistered; i++)
		if (!register_consumer(conn, conn->unregistered[i]))
			conn->unregistered[kept++] = conn->unregistered[i];
	conn->nunregistered = kept;
}

static void register_later(struct doca_comch_connection *conn, uint32_t index)
{
	for (uint32_t i = 0; i < conn->nunregistered; i++)
		if (conn->unregistered[i] == index)
			return;
	if (conn->unregistered == NULL)
		conn->unregistered = calloc(conn->layout.entries, sizeof(*conn->unregistered));
	if (conn->unregistered != NULL && conn->nunregistered < conn->layout.entries)
		conn->unregistered[conn->nunregistered++] = index;
}

/* One control record naming entry `index` of the endpoint table. */
static void control_record(struct doca_comch_connection *conn, uint16_t type, uint32_t index)
{
	struct sdpu_comch *owner = conn->owner;
	struct consumer_event *e;
	uint8_t *entry;

	if (index >= conn->layout.entries)
		goto ignored;
	entry = conn->segment->base + sdpu_entry_offset(index);
	if (sdpu_get_u32(entry + SDPU_ENTRY_SIDE) == (conn->server_side ? 0u : 1u) ||
	    sdpu_get_u32(entry + SDPU_ENTRY_KIND) != SDPU_KIND_CONSUMER) {
		/* A record read late: its consumer was destroyed and the entry taken again (protocol.md, "Known gaps"). */
		if (type == SDPU_CONTROL_CONSUMER_EXPIRED) {
			sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, SOURCE, "the peer (pid %u) expired consumer entry %u, which was taken again since; ignoring it",
				     conn->peer.pid, index);
			return;
		}
		goto ignored;
	}
	if (type == SDPU_CONTROL_CONSUMER_NEW && !register_consumer(conn, index))
		register_later(conn, index);
	if ((type == SDPU_CONTROL_CONSUMER_NEW ? owner->consumer_new : owner->consumer_expired) == NULL)
		return;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return;
	e->work.run = run_consumer_event;
	e->conn = conn;
	e->id = sdpu_get_u32(entry + SDPU_ENTRY_ID);
	e->expired = type == SDPU_CONTROL_CONSUMER_EXPIRED;
	sdpu_ctx_queue(&owner->ctx, &e->work);
	return;
ignored:
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
		     "the peer (pid %u) announced consumer entry %u, which is not one of its consumers; ignoring it", conn->peer.pid, index);
}

static void look_at_control(struct doca_comch_connection *conn)
{
	uint16_t type;
	uint32_t len;
	const uint8_t *data;
	int r;

	if (conn->nunregistered > 0)
		register_late(conn);
	for (int n = 0; n < CONTROL_BUDGET && conn->state != SDPU_CLOSING; n++) {
		r = sdpu_ring_peek(&conn->control_in, &type, &len, &data);
		if (r == 0)
			return;
		if (r < 0) {
			sdpu_conn_corrupted(conn, "its control queue (an index or a record length out of range)");
			return;
		}
		if (len != 4 || (type != SDPU_CONTROL_CONSUMER_NEW && type != SDPU_CONTROL_CONSUMER_EXPIRED)) {
			char what[96];

			snprintf(what, sizeof(what), "a control record (type %u, length %u)", type, len);
			sdpu_conn_corrupted(conn, what);
			return;
		}
		uint32_t index = sdpu_get_u32(data);

		sdpu_ring_advance(&conn->control_in);
		control_record(conn, type, index);
	}
}

/* 1: a message is at the head of the ring; 0: nothing is; -1: the connection is ending. */
static int head(struct doca_comch_connection *conn, uint32_t *len, const uint8_t **data)
{
	uint16_t type;
	int r = sdpu_ring_peek(&conn->in, &type, len, data);

	if (r < 0) {
		sdpu_conn_corrupted(conn, "its message queue (an index or a record length out of range)");
		return -1;
	}
	if (r == 0)
		return 0;
	if (type == SDPU_RECORD_DISCONNECT) {
		disconnect_read(conn);
		return -1;
	}
	if (type != SDPU_RECORD_MSG) {
		char what[64];

		snprintf(what, sizeof(what), "a record (unknown type %u)", type);
		sdpu_conn_corrupted(conn, what);
		return -1;
	}
	return 1;
}

void sdpu_conn_look(struct doca_comch_connection *conn)
{
	uint32_t len;
	const uint8_t *data;

	if (conn->state == SDPU_CLOSED || conn->left)
		return;
	look_at_control(conn);
	if (conn->in.corrupt || conn->recv.queued)
		return;
	/* A DISCONNECT is read even when nobody listens: it is what ends the connection. */
	if (head(conn, &len, &data) == 1 && sdpu_conn_listening(conn))
		sdpu_ctx_queue(&conn->owner->ctx, &conn->recv);
}

void sdpu_conn_recv_run(struct sdpu_work *work)
{
	struct doca_comch_connection *conn = (struct doca_comch_connection *)((char *)work - offsetof(struct doca_comch_connection, recv));
	struct sdpu_comch *owner = conn->owner;
	uint8_t *peer_wants_room;
	uint32_t len;
	const uint8_t *data;

	if (!sdpu_conn_listening(conn) || head(conn, &len, &data) != 1) {
		if (conn->state == SDPU_CLOSING)
			sdpu_source_ready(&conn->source);
		return;
	}
	memcpy(conn->scratch, data, len);
	sdpu_ring_advance(&conn->in);
	conn->counters[DOCA_COMCH_COUNTER_RECV_MESSAGES]++;
	conn->counters[DOCA_COMCH_COUNTER_RECV_BYTES] += len;
	conn->stat.c[2] = (double)conn->counters[DOCA_COMCH_COUNTER_RECV_MESSAGES];
	conn->stat.c[3] = (double)conn->counters[DOCA_COMCH_COUNTER_RECV_BYTES];
	peer_wants_room = conn->segment->base + (conn->server_side ? SDPU_CONN_SIDE_CLIENT : SDPU_CONN_SIDE_SERVER);
	if (sdpu_load(peer_wants_room) != 0)
		sdpu_conn_ring_peer(conn);
	/* The next message is the next unit of work; the others get their turn first. */
	sdpu_source_ready(&conn->source);
	owner->recv_cb(&owner->recv_event, conn->scratch, len, conn);
}
