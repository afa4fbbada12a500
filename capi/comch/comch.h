/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the comch control path's files share: the server and client contexts (and what they have in
 * common, struct sdpu_comch), their connections and the send task. A connection is made by the helper
 * thread's handshake (server_hs.c, client_hs.c) and handed to its context's thread through the context's
 * mailbox; from then on only that thread touches it, except for the flags the helper thread raises
 * (end-of-file, a dead peer, a linger that expired), which it then rings the connection's bit for.
 */
#ifndef SOFTDPU_CAPI_COMCH_H_
#define SOFTDPU_CAPI_COMCH_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_comch.h>

#include "comch/layout.h"
#include "comch/wire.h"
#include "core/ctx.h"
#include "core/dev.h"
#include "fabric/bell.h"
#include "fabric/liveness.h"
#include "fabric/ring.h"

#define SDPU_TASK_SEND 0
#define SDPU_DEFAULT_RECV_QUEUE_SIZE 64
#define SDPU_HANDSHAKE_TIMEOUT_MS 5000
#define SDPU_LINGER_MS 2000
#define SDPU_RETRY_MS 100
#define SDPU_SERVER_KIND "comch-srv"

enum sdpu_conn_state { SDPU_CONNECTED, SDPU_DISCONNECTING, SDPU_CLOSING, SDPU_CLOSED };

struct doca_comch_connection {
	struct sdpu_comch *owner;
	bool server_side;
	union doca_data user_data;
	enum sdpu_conn_state state;
	/* This side left (its context stops): it finishes when the peer closes its socket, or after the linger. */
	bool left;
	doca_error_t close_reason;
	/* The reason is end-of-file's (CONNECTION_RESET): a DISCONNECT still in the ring replaces it. */
	bool provisional;
	int fd;
	uint64_t watch, peer_watch, linger;
	struct sdpu_identity peer;
	struct sdpu_segment *segment;
	struct sdpu_conn_layout layout;
	struct sdpu_ring out, in, control_in, control_out;
	/* The relay (comch/relay.c): the last value of this side's request bell it acted on, whether it
	 * must look again, and which of this side's consumer entries it announced. */
	int32_t requests_seen;
	bool relay_again;
	uint8_t *announced;
	/* Sends waiting for room in the peer's ring, in order. */
	struct doca_comch_task_send *pending_head, *pending_tail;
	uint8_t *scratch;
	struct sdpu_source source;
	struct sdpu_work recv, connected, disconnected;
	/* Raised by the helper thread (atomics). */
	int eof, dead, expired;
	struct sdpu_remote_bell *peer_bell;
	uint32_t peer_bit;
	/* Consumers the peer announced whose entry was still REQUESTED: registered once ANNOUNCED. */
	uint32_t *unregistered;
	uint32_t nunregistered;
	uint64_t counters[5], snapshot[5];
	/* Its record for observers (its counters mirror `counters`), and its number there. */
	struct sdpu_stat stat;
	uint32_t number;
	struct doca_comch_connection *next;
};

struct doca_comch_task_send {
	struct doca_task base;
	struct doca_comch_connection *conn;
	const void *msg;
	uint32_t len;
	struct doca_comch_task_send *pending_next;
};

/* The event objects the callbacks receive (no call takes them in DOCA 3.0: they only name the event). */
struct doca_comch_event_msg_recv {
	struct sdpu_comch *owner;
};
struct doca_comch_event_connection_status_changed {
	struct sdpu_comch *owner;
};
struct doca_comch_event_consumer {
	struct sdpu_comch *owner;
};

/* What a server and a client share. */
struct sdpu_comch {
	struct doca_ctx ctx;
	bool server;
	struct doca_dev *dev;
	uint8_t *name;
	size_t name_len;
	uint32_t max_msg_size;
	uint32_t recv_queue_size;
	doca_comch_task_send_completion_cb_t send_ok, send_err;
	doca_comch_event_msg_recv_cb_t recv_cb;
	doca_comch_event_consumer_cb_t consumer_new, consumer_expired;
	struct doca_comch_event_msg_recv recv_event;
	struct doca_comch_event_consumer consumer_event;
	/* Established connections this thread owns. */
	struct doca_comch_connection *conns;
	size_t nconns;
	/* Connections adopted so far (names them for observers). */
	uint32_t adopted;
	/* The mailbox: the helper thread posts (under the io lock), sets `mail`, rings the bit. */
	struct sdpu_source mail_source;
	int mail;
	/* Takes what the helper thread posted (takes the io lock itself). */
	void (*mail_handler)(struct sdpu_comch *owner);
	/* A connection's end: held sends fail with `reason`; the server raises its event, the client fails. */
	void (*closed)(struct sdpu_comch *owner, struct doca_comch_connection *conn, doca_error_t reason);
};

struct sdpu_handshake;

struct doca_comch_server {
	struct sdpu_comch base;
	struct doca_dev_rep *rep;
	doca_comch_event_connection_status_changed_cb_t connect_cb, disconnect_cb;
	struct doca_comch_event_connection_status_changed status_event;
	/* Owned by the helper thread while running (under the io lock). */
	bool running;
	int lock_fd, listen_fd;
	uint64_t listen_watch;
	char path[128];
	uint32_t position;
	struct sdpu_handshake *handshakes;
	/* Established and handshaking clients, counted against max clients. */
	uint32_t clients;
	struct doca_comch_connection *accepted;
};

struct doca_comch_client {
	struct sdpu_comch base;
	/* Owned by the helper thread while STARTING (under the io lock). */
	bool attempting;
	int fd;
	uint64_t watch, timer;
	struct sdpu_frame_reader reader;
	char key[23], client_pci[13], arm_pci[13];
	struct doca_comch_connection *established;
	doca_error_t failure;
	/* The connection, kept until the client is destroyed or started again. */
	struct doca_comch_connection *conn;
};

/* ---- base.c: what both contexts share ---- */
void sdpu_comch_init(struct sdpu_comch *c, bool server, struct doca_dev *dev, const uint8_t *name, size_t name_len);
/* Checks a server name against the device's max_name_len (which counts the NUL). */
doca_error_t sdpu_comch_check_name(const struct doca_devinfo *info, const char *name, const char *call);
/* BAD_STATE (logged) unless the mandatory configuration (send task, receive callback) is there. */
doca_error_t sdpu_comch_require(struct sdpu_comch *c, const char *call);
/* The mailbox source. */
doca_error_t sdpu_comch_start(struct sdpu_comch *c);
/* IDLE: the mailbox source goes. */
void sdpu_comch_idle(struct sdpu_comch *c);
/* The shared configuration calls, for the server's and the client's public ones. */
doca_error_t sdpu_comch_set_max_msg_size(struct sdpu_comch *c, uint32_t size, const char *call);
doca_error_t sdpu_comch_set_recv_queue_size(struct sdpu_comch *c, uint32_t size, const char *call);
doca_error_t sdpu_comch_task_send_set_conf(struct sdpu_comch *c, doca_comch_task_send_completion_cb_t ok,
					   doca_comch_task_send_completion_cb_t err, uint32_t num, const char *call);
doca_error_t sdpu_comch_task_send_alloc_init(struct sdpu_comch *c, struct doca_comch_connection *conn, const void *msg,
					     uint32_t len, struct doca_comch_task_send **task, const char *call);
doca_error_t sdpu_comch_event_msg_recv_register(struct sdpu_comch *c, doca_comch_event_msg_recv_cb_t cb, const char *call);
doca_error_t sdpu_comch_event_consumer_register(struct sdpu_comch *c, doca_comch_event_consumer_cb_t new_cb,
						doca_comch_event_consumer_cb_t expired_cb, const char *call);
void sdpu_comch_free(struct sdpu_comch *c);
/* The helper thread posts: sets the flag and rings the mailbox (io lock held). */
void sdpu_comch_post(struct sdpu_comch *c);
/* The context takes an established connection in (and polls it once). */
void sdpu_comch_adopt(struct sdpu_comch *c, struct doca_comch_connection *conn);
void sdpu_comch_forget(struct sdpu_comch *c, struct doca_comch_connection *conn);

/* ---- connection.c ---- */
/*
 * A connection over `fd` and `segment` (helper thread): rings attached, the bit reserved, this side's bell
 * reference published, the socket and the peer watched. NULL (everything closed) on failure.
 */
struct doca_comch_connection *sdpu_conn_create(struct sdpu_comch *owner, bool server_side, int fd, struct sdpu_segment *segment,
					       const struct sdpu_conn_layout *layout, struct sdpu_identity peer);
/* Frees a connection the context never adopted (helper thread or the context's, io lock held). */
void sdpu_conn_discard(struct doca_comch_connection *conn);
/* This side leaves (its context stops): DISCONNECT if connected, then shutdown(SHUT_WR). */
void sdpu_conn_leave(struct doca_comch_connection *conn, doca_error_t reason);
/* The server's doca_comch_server_disconnect. */
doca_error_t sdpu_conn_disconnect(struct doca_comch_connection *conn);
/* Rings the peer's context (no syscall unless its engine sleeps). */
void sdpu_conn_ring_peer(struct doca_comch_connection *conn);
/* The peer wrote what no valid connection holds: the connection ends with CONNECTION_ABORTED. */
void sdpu_conn_corrupted(struct doca_comch_connection *conn, const char *what);
/* The connection is ending with `reason` (unless it already was). */
void sdpu_conn_peer_gone(struct doca_comch_connection *conn, doca_error_t reason);
/* Frees the memory of a finished connection. */
void sdpu_conn_free(struct doca_comch_connection *conn);

/* ---- send.c ---- */
doca_error_t sdpu_conn_send(struct doca_comch_connection *conn, struct doca_comch_task_send *task);
/* Moves held-back sends into the ring; their completions are queued. */
void sdpu_conn_flush(struct doca_comch_connection *conn);
/* Takes every held-back send out (their failures are the caller's). */
struct doca_comch_task_send *sdpu_conn_take_pending(struct doca_comch_connection *conn);

/* ---- receive.c ---- */
/* Whether someone takes messages from `conn` now. */
bool sdpu_conn_listening(const struct doca_comch_connection *conn);
/* One look at the peer's rings: a DISCONNECT at the head, control records, and the receive work queued. */
void sdpu_conn_look(struct doca_comch_connection *conn);
void sdpu_conn_recv_run(struct sdpu_work *work);

/* ---- server_hs.c, client_hs.c: the helper thread's side ---- */
void sdpu_server_accept(void *server, uint32_t events);
void sdpu_server_drop_handshakes(struct doca_comch_server *server);
void sdpu_client_attempt(void *client);
void sdpu_client_cancel(struct doca_comch_client *client);

#endif /* SOFTDPU_CAPI_COMCH_H_ */
