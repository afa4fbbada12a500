/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A comch connection's life (docs/protocol.md, "Ending a connection"): made by the helper thread's
 * handshake, one source of its context, ended by a DISCONNECT record, the socket's end-of-file, a dead
 * peer, corruption, or this side leaving. An ending connection delivers the messages the peer sent
 * before it left, then finishes: socket closed, bell reference withdrawn, CONN_CLOSED stored and every
 * endpoint rung, segment unmapped, and its context told once. A side that left finishes when the peer
 * closes its socket, or after LINGER_MS (2000) at most, so that no stop waits for a peer that is blocked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "comch/endpoint.h"
#include "core/internal.h"
#include "core/io.h"
#include "core/pe.h"
#include "core/shm.h"

#define SOURCE "comch"

static uint8_t *side_block(struct doca_comch_connection *conn, bool own)
{
	return conn->segment->base + (own == conn->server_side ? SDPU_CONN_SIDE_SERVER : SDPU_CONN_SIDE_CLIENT);
}

/* ---- raised by the helper thread (io lock held) ---- */

static void on_socket(void *arg, uint32_t events)
{
	struct doca_comch_connection *conn = arg;
	uint8_t discard[512];
	ssize_t n;

	(void)events;
	/* After READY the socket carries nothing: bytes are read and dropped; its end-of-file is its purpose. */
	do {
		n = recv(conn->fd, discard, sizeof(discard), MSG_DONTWAIT);
	} while (n > 0 || (n < 0 && errno == EINTR));
	if (n < 0 && errno == EAGAIN)
		return;
	sdpu_io_unwatch(conn->watch);
	conn->watch = 0;
	__atomic_store_n(&conn->eof, 1, __ATOMIC_SEQ_CST);
	sdpu_source_ring(&conn->source);
}

static void on_dead(void *arg)
{
	struct doca_comch_connection *conn = arg;

	conn->peer_watch = 0;
	__atomic_store_n(&conn->dead, 1, __ATOMIC_SEQ_CST);
	sdpu_source_ring(&conn->source);
}

static void on_linger(void *arg)
{
	struct doca_comch_connection *conn = arg;

	conn->linger = 0;
	__atomic_store_n(&conn->expired, 1, __ATOMIC_SEQ_CST);
	sdpu_source_ring(&conn->source);
}

static bool peer_closed(const struct doca_comch_connection *conn)
{
	return __atomic_load_n(&conn->eof, __ATOMIC_SEQ_CST) || __atomic_load_n(&conn->dead, __ATOMIC_SEQ_CST) ||
	       __atomic_load_n(&conn->expired, __ATOMIC_SEQ_CST);
}

/* ---- ending ---- */

void sdpu_conn_peer_gone(struct doca_comch_connection *conn, doca_error_t reason)
{
	if (conn->state == SDPU_CLOSED)
		return;
	if (conn->state != SDPU_CLOSING) {
		conn->state = SDPU_CLOSING;
		conn->close_reason = reason;
	}
	sdpu_source_ready(&conn->source);
}

void sdpu_conn_corrupted(struct doca_comch_connection *conn, const char *what)
{
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the peer (pid %u) corrupted %s; dropping the connection", conn->peer.pid, what);
	conn->in.corrupt = true;
	if (conn->state == SDPU_CLOSING && conn->provisional) {
		conn->close_reason = DOCA_ERROR_CONNECTION_ABORTED;
		conn->provisional = false;
	}
	sdpu_conn_peer_gone(conn, DOCA_ERROR_CONNECTION_ABORTED);
}

void sdpu_conn_ring_peer(struct doca_comch_connection *conn)
{
	if (conn->peer_bell == NULL) {
		struct sdpu_bell_ref ref;

		/* Not published yet: do not ring (the peer looks at the connection once when it publishes). */
		if (conn->state == SDPU_CLOSED || sdpu_bell_ref_read(side_block(conn, false) + SDPU_SIDE_BELL, &ref) != 1 ||
		    sdpu_remote_bell_open(&ref, &conn->peer_bell) != DOCA_SUCCESS)
			return;
		conn->peer_bit = ref.bit;
	}
	sdpu_remote_bell_ring(conn->peer_bell, conn->peer_bit);
}

void sdpu_conn_leave(struct doca_comch_connection *conn, doca_error_t reason)
{
	if (conn->state == SDPU_CLOSED)
		return;
	if (conn->state == SDPU_CLOSING) {
		sdpu_source_ready(&conn->source); /* the peer left already; this side no longer reads */
		return;
	}
	/* Held-back sends stay in flight: the context's stop flushes them. */
	sdpu_conn_take_pending(conn);
	if (conn->state == SDPU_CONNECTED)
		sdpu_ring_push(&conn->out, SDPU_RECORD_DISCONNECT, NULL, 0);
	sdpu_conn_ring_peer(conn);
	conn->close_reason = reason;
	conn->state = SDPU_CLOSING;
	conn->left = true;
	shutdown(conn->fd, SHUT_WR);
	sdpu_io_lock();
	if (conn->linger == 0)
		conn->linger = sdpu_io_timer(SDPU_LINGER_MS, on_linger, conn);
	sdpu_io_unlock();
	sdpu_source_ready(&conn->source);
}

doca_error_t sdpu_conn_disconnect(struct doca_comch_connection *conn)
{
	if (conn->state != SDPU_CONNECTED)
		return DOCA_ERROR_NOT_CONNECTED;
	sdpu_conn_flush(conn);
	if (conn->pending_head != NULL || !sdpu_ring_push(&conn->out, SDPU_RECORD_DISCONNECT, NULL, 0))
		return DOCA_ERROR_AGAIN;
	conn->state = SDPU_DISCONNECTING;
	sdpu_conn_ring_peer(conn);
	sdpu_io_lock();
	conn->linger = sdpu_io_timer(SDPU_LINGER_MS, on_linger, conn);
	sdpu_io_unlock();
	return DOCA_SUCCESS;
}

/* Drops what the peer sent and nobody will read (at most one ring's worth), saying how many. */
static void drop_unread(struct doca_comch_connection *conn)
{
	uint32_t unread = 0;
	uint16_t type;
	uint32_t len;
	const uint8_t *data;

	for (uint32_t n = 0; n < conn->in.slots && sdpu_ring_peek(&conn->in, &type, &len, &data) == 1; n++) {
		unread += type == SDPU_RECORD_MSG;
		sdpu_ring_advance(&conn->in);
	}
	if (unread > 0)
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE,
			     "%u message(s) from the peer (pid %u) were not read before this side stopped; dropping them", unread,
			     conn->peer.pid);
}

/* Every endpoint of the table that is not FREE is rung once (they fail or finish stopping). */
static void ring_endpoints(struct doca_comch_connection *conn)
{
	for (uint32_t i = 0; i < conn->layout.entries; i++) {
		uint8_t *entry = conn->segment->base + sdpu_entry_offset(i);
		struct sdpu_bell_ref ref;

		if (sdpu_load(entry + SDPU_ENTRY_STATE) != SDPU_ENDPOINT_FREE && sdpu_bell_ref_read(entry + SDPU_ENTRY_BELL, &ref) == 1)
			sdpu_ring_once(&ref);
	}
}

static void close_io(struct doca_comch_connection *conn)
{
	sdpu_io_lock();
	sdpu_io_unwatch(conn->watch);
	sdpu_io_unwatch(conn->peer_watch);
	sdpu_io_cancel(conn->linger);
	conn->watch = conn->peer_watch = conn->linger = 0;
	sdpu_io_unlock();
	if (conn->fd >= 0)
		close(conn->fd);
	conn->fd = -1;
}

static void finish(struct doca_comch_connection *conn)
{
	struct sdpu_comch *owner = conn->owner;

	if (!sdpu_conn_listening(conn))
		drop_unread(conn);
	close_io(conn);
	sdpu_bell_ref_withdraw(side_block(conn, true) + SDPU_SIDE_BELL);
	sdpu_store(conn->segment->base + SDPU_CONN_STATE, SDPU_CONN_CLOSED);
	ring_endpoints(conn);
	conn->state = SDPU_CLOSED;
	sdpu_source_release(&conn->source);
	sdpu_remote_bell_close(conn->peer_bell);
	conn->peer_bell = NULL;
	sdpu_segment_close(conn->segment);
	conn->segment = NULL;
	sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, SOURCE, "a connection to pid %u ended (%s)", conn->peer.pid,
		     doca_error_get_name(conn->close_reason));
	owner->closed(owner, conn, conn->close_reason);
}

/* Whether nothing the peer sent waits to be read (or nobody will read it). */
static bool drained(struct doca_comch_connection *conn)
{
	uint16_t type;
	uint32_t len;
	const uint8_t *data;

	return !sdpu_conn_listening(conn) || sdpu_ring_peek(&conn->in, &type, &len, &data) != 1;
}

static bool poll_connection(struct sdpu_source *source)
{
	struct doca_comch_connection *conn = (struct doca_comch_connection *)((char *)source - offsetof(struct doca_comch_connection, source));

	if (conn->state == SDPU_CLOSED)
		return false;
	if (conn->pending_head != NULL)
		sdpu_conn_flush(conn);
	if ((conn->state == SDPU_CONNECTED || conn->state == SDPU_DISCONNECTING) && peer_closed(conn)) {
		sdpu_conn_peer_gone(conn, DOCA_ERROR_CONNECTION_RESET);
		conn->provisional = true; /* a DISCONNECT still in the ring says why better */
	}
	if (conn->state == SDPU_CONNECTED)
		sdpu_conn_relay(conn);
	sdpu_conn_look(conn);
	if (conn->state == SDPU_CLOSING && !conn->recv.queued && (conn->left ? peer_closed(conn) : drained(conn)))
		finish(conn);
	return false;
}

/* ---- made by the helper thread ---- */

static void release_io_and_memory(struct doca_comch_connection *conn)
{
	if (conn->segment != NULL)
		sdpu_bell_ref_withdraw(side_block(conn, true) + SDPU_SIDE_BELL);
	sdpu_io_unwatch(conn->watch);
	sdpu_io_unwatch(conn->peer_watch);
	sdpu_io_cancel(conn->linger);
	if (conn->fd >= 0)
		close(conn->fd);
	if (conn->source.ctx != NULL)
		sdpu_source_release(&conn->source);
	sdpu_segment_close(conn->segment);
	sdpu_conn_free(conn);
}

struct doca_comch_connection *sdpu_conn_create(struct sdpu_comch *owner, bool server_side, int fd, struct sdpu_segment *segment,
					       const struct sdpu_conn_layout *layout, struct sdpu_identity peer)
{
	struct doca_comch_connection *conn = calloc(1, sizeof(*conn));
	const struct sdpu_conn_layout *l = layout;
	uint8_t *b = segment->base;
	struct sdpu_bell_ref ref;

	if (conn == NULL || (conn->scratch = malloc(l->msg_size)) == NULL) {
		free(conn);
		close(fd);
		sdpu_segment_close(segment);
		return NULL;
	}
	sdpu_stat_private(&conn->stat);
	conn->owner = owner;
	conn->server_side = server_side;
	conn->fd = fd;
	conn->segment = segment;
	conn->layout = *l;
	conn->peer = peer;
	conn->state = SDPU_CONNECTED;
	conn->recv.run = sdpu_conn_recv_run;
	if (server_side) {
		sdpu_ring_attach(&conn->out, b + l->s2c_base, l->s2c_slots, l->msg_size, true);
		sdpu_ring_attach(&conn->in, b + l->c2s_base, l->c2s_slots, l->msg_size, false);
		sdpu_ring_attach(&conn->control_in, b + l->c2s_control_base, 2 * l->entries, 4, false);
		sdpu_ring_attach(&conn->control_out, b + l->s2c_control_base, 2 * l->entries, 4, true);
	} else {
		sdpu_ring_attach(&conn->out, b + l->c2s_base, l->c2s_slots, l->msg_size, true);
		sdpu_ring_attach(&conn->in, b + l->s2c_base, l->s2c_slots, l->msg_size, false);
		sdpu_ring_attach(&conn->control_in, b + l->s2c_control_base, 2 * l->entries, 4, false);
		sdpu_ring_attach(&conn->control_out, b + l->c2s_control_base, 2 * l->entries, 4, true);
	}
	conn->requests_seen = sdpu_load(b + (server_side ? SDPU_CONN_SERVER_REQUESTS : SDPU_CONN_CLIENT_REQUESTS)) - 1; /* look once */
	if (!sdpu_source_reserve(&owner->ctx, &conn->source, poll_connection)) {
		conn->source.ctx = NULL;
		release_io_and_memory(conn);
		return NULL;
	}
	/* Where the peer rings this side's context for the connection (protocol.md, "Side block"). */
	ref = sdpu_bell_ref_of(owner->ctx.pe->bell, (uint32_t)conn->source.bit);
	sdpu_bell_ref_publish(side_block(conn, true) + SDPU_SIDE_BELL, &ref);
	conn->watch = sdpu_io_watch(fd, EPOLLIN | EPOLLRDHUP, on_socket, conn);
	conn->peer_watch = sdpu_io_watch_process(peer.pid, peer.start, on_dead, conn);
	if (conn->watch == 0 || conn->peer_watch == 0) {
		release_io_and_memory(conn);
		return NULL;
	}
	return conn;
}

void sdpu_conn_discard(struct doca_comch_connection *conn)
{
	release_io_and_memory(conn);
}

void sdpu_conn_free(struct doca_comch_connection *conn)
{
	if (conn == NULL)
		return;
	sdpu_remote_bell_close(conn->peer_bell);
	free(conn->unregistered);
	free(conn->announced);
	free(conn->scratch);
	free(conn);
}
