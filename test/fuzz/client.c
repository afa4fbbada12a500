/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A C comch client (capi/comch/client.c, client_hs.c) against a hostile server: this program plays the
 * server (its socket in the fabric where the client's rendezvous finds it), takes the client's HELLO and
 * answers with the input; the client's checks of the first frame (REJECT's code, WELCOME's process,
 * SO_PEERCRED, the segment's owner, its opening and layout against the WELCOME) then decide whether its
 * start fails or it connects. One client per input, created, started and destroyed.
 *
 * A WELCOME names a segment and its sender's pid, which a seed from another process could not: the
 * input is a mode byte and then a difference, XORed onto this process's WELCOME of a fresh connection
 * segment of the client's layout (mode bit 0: onto a REJECT instead; bytes past it are sent as they are;
 * all zeros is a well-behaved server).
 *
 * Mode bit 1: the server goes on writing. The input is then the mode byte, a u16 length of the answer's
 * difference, that difference, and a difference XORed onto the connection segment from its byte 64 on
 * once the client runs (its rings, endpoint table, side blocks: capi/comch/receive.c reads them); the
 * client's bell is rung and its context progressed a little before it is stopped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_pe.h>

#include "common.h"
#include "comch/layout.h"
#include "comch/wire.h"
#include "core/dev.h"
#include "fabric/bell.h"
#include "fabric/rendezvous.h"
#include "fabric/ring.h"

#define NAME "fuzz-client"
#define MSG_SIZE 256
#define RECVQ 8
#define WAIT_MS 6000
#define REJECT 1
#define SEGMENT 2
/* How long a running client is progressed after the segment was written. */
#define READ_MS 20
/* Answers given to one client (a cut-short answer makes it try again in 100 ms: the retry is not a parser's). */
#define ATTEMPTS 1
/* How long the answer's outcome is waited for: the client reads it as it comes. */
#define OUTCOME_MS 50

static struct doca_dev *dev;
static struct doca_pe *pe;
static int listen_fd = -1;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define REASON "a client claiming function \"x\" knocked"

/* Appends one record to the ring at `ring` of a segment difference (the ring is empty at position 0). */
static void put_record(uint8_t *ring, uint16_t type, const void *payload, uint32_t len)
{
	ring[0] = 1; /* the tail, now 1 */
	memcpy(ring + SDPU_RING_HEADER, &len, 4);
	memcpy(ring + SDPU_RING_HEADER + 4, &type, 2);
	if (len > 0)
		memcpy(ring + SDPU_RING_HEADER + SDPU_RECORD_HEADER, payload, len);
}

static void write_seeds(void)
{
	static uint8_t input[1 + 2 + 12 + 72 + 8192];
	uint8_t *segment = input + 1 + 2 + 12 + 72 - SDPU_SEGMENT_HEADER;
	size_t reject = sdpu_encode_reject(input + 1, DOCA_ERROR_NOT_PERMITTED, REASON);
	uint16_t answer = 12 + 72;
	struct sdpu_conn_layout l;
	uint32_t index = 0, state = SDPU_ENDPOINT_ANNOUNCED;

	memset(input, 0, sizeof(input));
	seed("welcome", input, 1 + 12 + 72);
	seed("welcome-and-more", input, 1 + 12 + 72 + 16);
	input[0] = REJECT;
	seed("reject", input, 1 + reject);
	/* A message, then a consumer announced in entry 0 (a server's consumer, ANNOUNCED), then a DISCONNECT. */
	input[0] = SEGMENT;
	memcpy(input + 1, &answer, 2);
	sdpu_conn_layout(&l, MSG_SIZE, RECVQ, RECVQ, 2);
	put_record(segment + l.s2c_base, SDPU_RECORD_MSG, "hello", 5);
	seed("message", input, sizeof(input));
	memcpy(segment + sdpu_entry_offset(0) + SDPU_ENTRY_STATE, &state, 4);
	put_record(segment + l.s2c_control_base, SDPU_CONTROL_CONSUMER_NEW, &index, 4);
	seed("consumer", input, sizeof(input));
	put_record(segment + l.s2c_base, SDPU_RECORD_DISCONNECT, NULL, 0);
	seed("disconnect", input, sizeof(input));
}

static void consumer_event(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	(void)conn;
	(void)id;
}

/* The server's part after the client runs: the segment's difference, then the client's bell. */
static void write_segment(struct sdpu_segment *segment, const uint8_t *delta, size_t n, struct doca_ctx *ctx)
{
	struct sdpu_bell_ref ref;

	for (size_t i = 0; i < n && SDPU_SEGMENT_HEADER + i < segment->size; i++)
		segment->base[SDPU_SEGMENT_HEADER + i] ^= delta[i];
	if (sdpu_bell_ref_read(segment->base + SDPU_CONN_SIDE_CLIENT + SDPU_SIDE_BELL, &ref) == 1)
		sdpu_ring_once(&ref);
	for (int64_t deadline = now_ms() + READ_MS; now_ms() < deadline;)
		doca_pe_progress(pe);
	(void)ctx;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char key[23], path[128];
	static const char arm[] = "0000:03:00.0", host[] = "0000:b1:00.0";

	(void)argc;
	(void)argv;
	seed_mode();
	require_fabric();
	quiet_log();
	dev = open_dev(host);
	check("doca_pe_create", doca_pe_create(&pe));
	/* The server's socket, where the client's rendezvous looks for it (this process is its live owner). */
	sdpu_server_key(arm, host, (const uint8_t *)NAME, sizeof(NAME) - 1, key);
	check("sdpu_listen_service", sdpu_listen_service(dev->fabric, "comch-srv", key, &listen_fd, path, sizeof(path)));
	return 0;
}

/* What a well-behaved server answers (a WELCOME of a fresh segment of the client's layout), or a REJECT. */
static size_t answer(uint8_t *out, bool reject, struct sdpu_segment **segment)
{
	struct sdpu_conn_layout l;

	if (reject)
		return sdpu_encode_reject(out, DOCA_ERROR_NOT_PERMITTED, REASON);
	sdpu_conn_layout(&l, MSG_SIZE, RECVQ, RECVQ, 2);
	check("sdpu_conn_segment_create", sdpu_conn_segment_create(&l, 0, segment));
	return sdpu_encode_welcome(out, &(*segment)->descriptor, MSG_SIZE, RECVQ, RECVQ);
}

/* Progresses until the client's context is RUNNING or IDLE (its start failed), or `ms` pass. */
static enum doca_ctx_states settle(struct doca_ctx *ctx, bool running_too, int ms)
{
	enum doca_ctx_states state = DOCA_CTX_STATE_STARTING;

	for (int64_t deadline = now_ms() + ms; now_ms() < deadline;) {
		doca_pe_progress(pe);
		if (doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS &&
		    (state == DOCA_CTX_STATE_IDLE || (running_too && state == DOCA_CTX_STATE_RUNNING)))
			break;
	}
	return state;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t base[4 + SDPU_MAX_FRAME], hello[4 + SDPU_MAX_FRAME];
	struct sdpu_segment *segment = NULL;
	struct doca_comch_client *client;
	struct doca_ctx *ctx;
	const uint8_t *delta = NULL, *answer_delta;
	uint8_t mode;
	size_t delta_len = 0;
	uint8_t *stream;
	size_t n, base_len;
	int fd = -1, attempts = 0;
	enum doca_ctx_states state;

	if (size < 1)
		return 0;
	n = size - 1;
	mode = data[0];
	answer_delta = data + 1;
	if (mode & SEGMENT) {
		uint16_t answer_len;

		if (n < 2)
			return 0;
		memcpy(&answer_len, data + 1, 2);
		n = answer_len < n - 2 ? answer_len : n - 2;
		answer_delta = data + 3;
		delta = data + 3 + n;
		delta_len = size - 3 - n;
	}
	stream = malloc(n > 0 ? n : 1);
	if (stream == NULL)
		return 0;
	base_len = answer(base, mode & REJECT, &segment);
	for (size_t i = 0; i < n; i++)
		stream[i] = answer_delta[i] ^ (i < base_len ? base[i] : 0);
	check("doca_comch_client_create", doca_comch_client_create(dev, NAME, &client));
	ctx = doca_comch_client_as_ctx(client);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(pe, ctx));
	check("task_send_set_conf", doca_comch_client_task_send_set_conf(client, sent, sent, 4));
	check("msg_recv_register", doca_comch_client_event_msg_recv_register(client, received));
	check("set_max_msg_size", doca_comch_client_set_max_msg_size(client, MSG_SIZE));
	check("set_recv_queue_size", doca_comch_client_set_recv_queue_size(client, RECVQ));
	check("consumer_register", doca_comch_client_event_consumer_register(client, consumer_event, consumer_event));
	doca_ctx_start(ctx);
	/*
	 * The client's helper thread connects: take it in, read its HELLO, answer; once the client has read
	 * the answer (started, failed, or retrying later after a transport failure), it is stopped.
	 */
	for (int64_t deadline = now_ms() + WAIT_MS; now_ms() < deadline;) {
		struct pollfd p = {.fd = listen_fd, .events = POLLIN};

		doca_pe_progress(pe);
		if (doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS && (state == DOCA_CTX_STATE_IDLE || state == DOCA_CTX_STATE_RUNNING))
			break;
		if (attempts < ATTEMPTS && poll(&p, 1, 1) == 1) {
			if (fd >= 0)
				close(fd);
			fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (fd < 0)
				continue;
			attempts++;
			if (recv(fd, hello, sizeof(hello), 0) <= 0)
				abort(); /* it knocked and said nothing */
			send(fd, stream, n, MSG_NOSIGNAL);
			/* The end of the stream ends a running connection: not before the segment is written. */
			if (delta == NULL)
				shutdown(fd, SHUT_WR);
		} else if (attempts == ATTEMPTS) {
			settle(ctx, true, OUTCOME_MS);
			break;
		}
	}
	if (attempts == 0)
		abort(); /* the client never knocked */
	if (delta != NULL && doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS && state == DOCA_CTX_STATE_RUNNING)
		write_segment(segment, delta, delta_len, ctx);
	/* The server leaves: the client's stop need not wait for its disconnect to linger out. */
	if (fd >= 0)
		shutdown(fd, SHUT_WR);
	if (doca_ctx_get_state(ctx, &state) != DOCA_SUCCESS || state != DOCA_CTX_STATE_IDLE) {
		doca_ctx_stop(ctx);
		if (settle(ctx, false, WAIT_MS) != DOCA_CTX_STATE_IDLE)
			abort(); /* a client that does not stop */
	}
	if (fd >= 0)
		close(fd);
	if (doca_comch_client_destroy(client) != DOCA_SUCCESS)
		abort(); /* a client that never settles back to IDLE */
	sdpu_segment_close(segment);
	free(stream);
	return 0;
}
