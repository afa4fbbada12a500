/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What producers and consumers share (docs/protocol.md, "Endpoint table"): each holds one entry of its
 * connection's endpoint table, through a mapping of the connection segment of its own (so it outlives
 * the connection object, and sees CONN_CLOSED when the connection finishes), and is one source of its
 * own engine, whose bell its entry publishes: producers ring it when they fill a consumer, the contexts
 * when a consumer's announcement changes, and the connection's end rings every endpoint.
 */
#ifndef SOFTDPU_CAPI_ENDPOINT_H_
#define SOFTDPU_CAPI_ENDPOINT_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>

#include "comch/layout.h"
#include "core/ctx.h"
#include "fabric/bell.h"
#include "fabric/segment.h"

/* Entry fields and states beyond those the control path reads (comch/layout.h). */
#define SDPU_ENTRY_IMM_LEN 12
#define SDPU_ENTRY_GENERATION 16
#define SDPU_ENTRY_QUEUE 24
#define SDPU_ENTRY_MEMORY 64
#define SDPU_ENTRY_OWNER 168
#define SDPU_ENDPOINT_CREATED 1
#define SDPU_ENDPOINT_EXPIRING 5
#define SDPU_ENDPOINT_EXPIRED 6
#define SDPU_KIND_PRODUCER 1
#define SDPU_CONN_LAST_CONSUMER_ID 388
#define SDPU_CONN_LAST_PRODUCER_ID 392
#define SDPU_CONN_SERVER_REQUESTS 448
#define SDPU_CONN_CLIENT_REQUESTS 512
/* The consumer queue (docs/protocol.md, "Consumer queue"). */
#define SDPU_CQ_MAGIC 0x45555143 /* 'CQUE' */
#define SDPU_CQ_VERSION 2
#define SDPU_CQ_OFF_MAGIC 64
#define SDPU_CQ_OFF_VERSION 68
#define SDPU_CQ_OFF_SLOTS 72
#define SDPU_CQ_POST_TAIL 128
#define SDPU_CQ_CLAIM_HEAD 192
#define SDPU_CQ_SLOTS 256
#define SDPU_CQ_SLOT_SIZE 64
#define SDPU_CQ_S_STATE 0
#define SDPU_CQ_S_CAPACITY 4
#define SDPU_CQ_S_OFFSET 8
#define SDPU_CQ_S_LENGTH 16
#define SDPU_CQ_S_PRODUCER 20
#define SDPU_CQ_S_IMM_LEN 24
#define SDPU_CQ_S_CLAIMER 28
#define SDPU_CQ_S_IMM 32
#define SDPU_CQ_EMPTY 0
#define SDPU_CQ_POSTED 1
#define SDPU_CQ_FILLED 2
#define SDPU_CQ_CLAIMED 3
#define SDPU_MAX_IMM 32

struct sdpu_endpoint {
	struct doca_ctx ctx;
	struct doca_devinfo *info;
	bool server_side;
	bool consumer;
	/* This endpoint's own mapping of the connection segment, and the layout it declares. */
	struct sdpu_segment *table;
	struct sdpu_conn_layout layout;
	uint32_t index, id;
	struct sdpu_source source;
	bool reserved;
	/* Its own side's context, rung after a request (opened on first use). */
	struct sdpu_remote_bell *side_bell;
	uint32_t side_bit;
	bool failing;
};

static inline uint8_t *sdpu_entry(const struct sdpu_endpoint *ep, uint32_t index)
{
	return ep->table->base + sdpu_entry_offset(index);
}

/*
 * Takes an entry of `conn`'s table for a new endpoint (BAD_STATE for a connection that is not
 * established, NO_MEMORY beyond the side's maximum of its kind or when the table is full).
 */
doca_error_t sdpu_endpoint_init(struct sdpu_endpoint *ep, struct doca_comch_connection *conn, bool consumer, const struct sdpu_ctx_ops *ops,
				const char *call);
/* Gives the entry back and unmaps (destroy, IDLE only). */
void sdpu_endpoint_release(struct sdpu_endpoint *ep);
/* Whether the connection is still established (CONN_CONNECTED). */
bool sdpu_endpoint_connected(const struct sdpu_endpoint *ep);
/* False once the connection ended; a STARTING or RUNNING endpoint then fails with CONNECTION_RESET (once). */
bool sdpu_endpoint_alive(struct sdpu_endpoint *ep);
/* At start: the engine's bit, published in the entry (NO_MEMORY when the engine has none left). */
doca_error_t sdpu_endpoint_publish(struct sdpu_endpoint *ep, bool (*poll)(struct sdpu_source *));
/* At IDLE: the bit goes, the entry's bell reference is withdrawn. */
void sdpu_endpoint_unpublish(struct sdpu_endpoint *ep);
/* Asks this side's context to look at the table: the request bell's add, then its bell. */
void sdpu_endpoint_request(struct sdpu_endpoint *ep);
/* Whether the thread that owns entry `index` still runs (a value no thread can have counts as dead). */
bool sdpu_endpoint_owner_alive(const struct sdpu_endpoint *ep, uint32_t index);
/* The consumer or producer cap of the device the connection's context is on. */
uint32_t sdpu_endpoint_cap(const struct sdpu_endpoint *ep, int cap);

/* ---- relay.c: a context announces its side's consumers to the peer (protocol.md, "Control rings") ---- */
void sdpu_conn_relay(struct doca_comch_connection *conn);

#endif /* SOFTDPU_CAPI_ENDPOINT_H_ */
