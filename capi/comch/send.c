/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A connection's send path (docs/protocol.md, "Message rings", "Flow control"): a send task completes
 * once its message is in the peer's ring (DOCA: delivered to the remote side); a full ring holds sends
 * back in order, never drops them, and says so in this side's `wants room` word, which the peer reads
 * after taking records to ring this side back.
 */
#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/shm.h"

static uint8_t *wants_room(struct doca_comch_connection *conn)
{
	return conn->segment->base + (conn->server_side ? SDPU_CONN_SIDE_SERVER : SDPU_CONN_SIDE_CLIENT);
}

static bool write_one(struct doca_comch_connection *conn, struct doca_comch_task_send *task)
{
	if (!sdpu_ring_push(&conn->out, SDPU_RECORD_MSG, task->msg, task->len)) {
		if (conn->out.corrupt)
			sdpu_conn_corrupted(conn, "its receive queue index");
		return false;
	}
	conn->counters[DOCA_COMCH_COUNTER_SENT_MESSAGES]++;
	conn->counters[DOCA_COMCH_COUNTER_SENT_BYTES] += task->len;
	conn->stat.c[0] = (double)conn->counters[DOCA_COMCH_COUNTER_SENT_MESSAGES];
	conn->stat.c[1] = (double)conn->counters[DOCA_COMCH_COUNTER_SENT_BYTES];
	sdpu_task_complete(&task->base, DOCA_SUCCESS);
	return true;
}

doca_error_t sdpu_conn_send(struct doca_comch_connection *conn, struct doca_comch_task_send *task)
{
	if (conn->state != SDPU_CONNECTED) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "comch", "doca_task_submit: the connection is disconnected");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (conn->pending_head == NULL && write_one(conn, task)) {
		sdpu_conn_ring_peer(conn);
		return DOCA_SUCCESS;
	}
	task->pending_next = NULL;
	if (conn->pending_tail != NULL)
		conn->pending_tail->pending_next = task;
	else
		conn->pending_head = task;
	conn->pending_tail = task;
	if (conn->pending_head == task) {
		/* Say this side waits for room, then look again: the peer either sees the word or freed room before. */
		sdpu_store(wants_room(conn), 1);
		if (sdpu_ring_has_room(&conn->out))
			sdpu_source_ready(&conn->source);
	}
	return DOCA_SUCCESS;
}

void sdpu_conn_flush(struct doca_comch_connection *conn)
{
	unsigned sent = 0;

	while (conn->pending_head != NULL && conn->state == SDPU_CONNECTED && write_one(conn, conn->pending_head)) {
		conn->pending_head = conn->pending_head->pending_next;
		if (conn->pending_head == NULL)
			conn->pending_tail = NULL;
		sent++;
	}
	if (sent == 0)
		return;
	if (conn->pending_head == NULL)
		sdpu_store(wants_room(conn), 0);
	sdpu_conn_ring_peer(conn);
}

struct doca_comch_task_send *sdpu_conn_take_pending(struct doca_comch_connection *conn)
{
	struct doca_comch_task_send *held = conn->pending_head;

	conn->pending_head = conn->pending_tail = NULL;
	if (held != NULL && conn->segment != NULL)
		sdpu_store(wants_room(conn), 0);
	return held;
}
