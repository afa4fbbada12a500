/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A live C comch server (capi/comch/server.c, server_hs.c) on what a hostile client sends on its Unix
 * socket: the frame reader, the HELLO's checks in protocol.md's order (name, PCI addresses, the
 * process, SO_PEERCRED, sizes, the client count), the connection segment and WELCOME, READY and the
 * connection's set-up and end. Each input is one client: connect, send, end the stream, read what the
 * server answers until it closes (its context progressed meanwhile), so that every handshake the
 * server took in is over before the next input.
 *
 * The checks want this process's own pid and start time in the HELLO, which a seed written by another
 * process would not have: the input is a mode byte, then a difference XORed onto this process's
 * HELLO and READY (all zeros is the handshake of a well-behaved client; bytes past it are sent as they
 * are). The mode's low bits pick the size of the sends (0: all at once).
 *
 * Mode bit 4: the client goes on writing. The input is then the mode byte, a u16 length of the
 * handshake's difference, that difference, and patches of the connection segment the WELCOME names,
 * each a u32 offset, a u16 length and that many bytes XORed there (the segment is too large for a
 * difference of all of it: its rings start past the 256-entry endpoint table), written once the server
 * established the connection; the server's bell is rung and its context progressed a little, so that
 * capi/comch/receive.c reads hostile message and control records on a live connection.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_log.h>
#include <doca_pe.h>

#include "common.h"
#include "comch/comch.h"
#include "comch/layout.h"
#include "comch/wire.h"
#include "fabric/bell.h"
#include "fabric/ring.h"

#define NAME "fuzz-server"
#define SEGMENT 0x10
/* How long the server is progressed after the segment was written. */
#define READ_MS 20
#define WELCOME_MS 200
/* A handshake the server neither ends nor completes is ended by its 5000 ms timeout: wait a little longer. */
#define ANSWER_MS 6000

static struct doca_pe *pe;
static struct doca_comch_server *server;
static uint8_t handshake[2 * (4 + SDPU_MAX_FRAME)];
static size_t handshake_len;
static int open_connections;

static void consumer_event(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	(void)conn;
	if (getenv("SOFTDPU_FUZZ_LOG") != NULL)
		fprintf(stderr, "fuzz: consumer %u\n", id);
}

static void connected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn, uint8_t ok)
{
	(void)event;
	(void)conn;
	open_connections += ok;
}

static void disconnected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn, uint8_t ok)
{
	(void)event;
	(void)conn;
	(void)ok;
	open_connections--;
}

static struct doca_dev_rep *open_rep(struct doca_dev *dev, const char *pci)
{
	struct doca_devinfo_rep **list;
	struct doca_dev_rep *rep = NULL;
	uint32_t n;
	uint8_t eq = 0;

	check("doca_devinfo_rep_create_list", doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n));
	for (uint32_t i = 0; i < n && rep == NULL; i++)
		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			check("doca_dev_rep_open", doca_dev_rep_open(list[i], &rep));
	doca_devinfo_rep_destroy_list(list);
	if (rep == NULL)
		die(pci, DOCA_ERROR_NOT_FOUND);
	return rep;
}

/* Appends a patch of `len` bytes at `offset` to `at`; returns the bytes written. */
static size_t patch(uint8_t *at, uint32_t offset, const void *bytes, uint16_t len)
{
	memcpy(at, &offset, 4);
	memcpy(at + 4, &len, 2);
	memcpy(at + 6, bytes, len);
	return 6 + (size_t)len;
}

/* A record in an empty ring at `base` (at position 0): the tail moves to 1. */
static size_t record(uint8_t *at, uint64_t base, uint16_t type, const void *payload, uint32_t len)
{
	uint8_t slot[SDPU_RECORD_HEADER + 64] = {0};
	uint32_t tail = 1;
	size_t n = patch(at, (uint32_t)base, &tail, 4);

	memcpy(slot, &len, 4);
	memcpy(slot + 4, &type, 2);
	if (len > 0)
		memcpy(slot + SDPU_RECORD_HEADER, payload, len);
	return n + patch(at + n, (uint32_t)(base + SDPU_RING_HEADER), slot, (uint16_t)(SDPU_RECORD_HEADER + len));
}

static void write_segment_seeds(void)
{
	uint8_t input[1 + 2 + 4 + SDPU_MAX_FRAME + 512] = {0};
	uint16_t hs = (uint16_t)(12 + 58 + sizeof(NAME) - 1 + 12);
	uint8_t *p = input + 3 + hs;
	struct sdpu_conn_layout l;
	uint32_t index = 0, state = SDPU_ENDPOINT_ANNOUNCED, side = 1;
	size_t n;

	/* The server's layout for this HELLO: msg 4080, 64 slots each way, 2 x (64 + 64) entries. */
	sdpu_conn_layout(&l, 4080, 64, 64, 256);
	input[0] = SEGMENT;
	memcpy(input + 1, &hs, 2);
	n = record(p, l.c2s_base, SDPU_RECORD_MSG, "hello", 5);
	seed("segment-message", input, 3 + hs + n);
	/* A consumer of the client's announced in entry 0 (client side, ANNOUNCED), then a DISCONNECT. */
	n += patch(p + n, (uint32_t)(sdpu_entry_offset(0) + SDPU_ENTRY_STATE), &state, 4);
	n += patch(p + n, (uint32_t)(sdpu_entry_offset(0) + SDPU_ENTRY_SIDE), &side, 4);
	n += record(p + n, l.c2s_control_base, SDPU_CONTROL_CONSUMER_NEW, &index, 4);
	seed("segment-consumer", input, 3 + hs + n);
	n = record(p, l.c2s_base, SDPU_RECORD_DISCONNECT, NULL, 0);
	seed("segment-disconnect", input, 3 + hs + n);
}

static void write_seeds(void)
{
	uint8_t input[1 + 4 + SDPU_MAX_FRAME] = {0};
	size_t hello = 12 + 58 + sizeof(NAME) - 1;

	seed("client", input, 1 + hello + 12);
	input[0] = 3; /* sends of 4 bytes */
	seed("client-in-pieces", input, 1 + hello + 12);
	input[0] = 0;
	seed("hello-only", input, 1 + hello);
	input[1 + 12 + 48] = 0xff; /* max_msg_size 255 XOR 4080: beyond none, but another */
	input[1 + 12 + 52 + 2] = 0x01; /* recv_queue_size beyond the cap */
	seed("hello-sizes", input, 1 + hello);
	write_segment_seeds();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	size_t n;

	(void)argc;
	(void)argv;
	seed_mode();
	require_fabric();
	quiet_log();
	dev = open_dev("03:00.0");
	check("doca_pe_create", doca_pe_create(&pe));
	check("doca_comch_server_create", doca_comch_server_create(dev, open_rep(dev, "b1:00.0"), NAME, &server));
	ctx = doca_comch_server_as_ctx(server);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(pe, ctx));
	check("task_send_set_conf", doca_comch_server_task_send_set_conf(server, sent, sent, 16));
	check("msg_recv_register", doca_comch_server_event_msg_recv_register(server, received));
	check("status_register", doca_comch_server_event_connection_status_changed_register(server, connected, disconnected));
	check("consumer_register", doca_comch_server_event_consumer_register(server, consumer_event, consumer_event));
	check("doca_ctx_start", doca_ctx_start(ctx));
	while (doca_ctx_get_state(ctx, &state) == DOCA_SUCCESS && state != DOCA_CTX_STATE_RUNNING)
		doca_pe_progress(pe);
	/* The handshake of a well-behaved client of this process: HELLO (from b1:00.0 to 03:00.0), READY. */
	n = sdpu_encode_hello(handshake, "0000:b1:00.0", "0000:03:00.0", 4080, 64, (const uint8_t *)NAME, sizeof(NAME) - 1);
	handshake_len = n + sdpu_encode_ready(handshake + n);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Progresses the server until `fd` reads end-of-file (the server closed it) or ANSWER_MS pass. */
static void answers(int fd)
{
	int64_t deadline = now_ms() + ANSWER_MS;
	uint8_t buf[4 + SDPU_MAX_FRAME];

	while (now_ms() < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		doca_pe_progress(pe);
		if (poll(&p, 1, 1) == 1) {
			ssize_t got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
				return;
		}
	}
}

/*
 * The WELCOME the server answered on `fd`, if it did within WELCOME_MS (its helper thread answers a whole
 * HELLO at once; a HELLO cut short would be waited for until the handshake's timeout).
 */
static bool welcome_of(int fd, struct sdpu_frame *f)
{
	static struct sdpu_frame_reader reader;
	char why[256];
	bool other;

	memset(&reader, 0, sizeof(reader));
	for (int64_t deadline = now_ms() + WELCOME_MS; now_ms() < deadline;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		size_t room;
		uint8_t *at;
		ssize_t got;
		int r;

		doca_pe_progress(pe);
		if (poll(&p, 1, 1) != 1)
			continue;
		at = sdpu_frames_space(&reader, &room);
		got = recv(fd, at, room, MSG_DONTWAIT);
		if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
			return false;
		if (got < 0)
			continue;
		sdpu_frames_put(&reader, (size_t)got);
		r = sdpu_frames_next(&reader, f, why, sizeof(why), &other);
		if (r != 0)
			return r == 1 && f->type == SDPU_WELCOME;
	}
	return false;
}

/* The client's part after READY: the patches, once the server has the connection, then the server's bell. */
static void write_segment(int fd, const uint8_t *patches, size_t n)
{
	struct sdpu_segment *segment;
	struct sdpu_bell_ref ref;
	struct sdpu_frame f;

	if (!welcome_of(fd, &f) || sdpu_segment_open(&f.segment, "conn", "fuzz", &segment) != DOCA_SUCCESS)
		return;
	/* Until the server has the connection (after READY), or has dropped this client (the socket ends). */
	for (int64_t deadline = now_ms() + ANSWER_MS; open_connections == 0 && now_ms() < deadline;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		uint8_t byte;

		doca_pe_progress(pe);
		if (poll(&p, 1, 0) == 1 && recv(fd, &byte, 1, MSG_DONTWAIT | MSG_PEEK) == 0)
			break;
	}
	if (open_connections == 0) {
		sdpu_segment_close(segment);
		return;
	}
	while (n >= 6) {
		uint32_t offset;
		uint16_t len;

		memcpy(&offset, patches, 4);
		memcpy(&len, patches + 4, 2);
		patches += 6;
		n -= 6;
		len = len < n ? len : (uint16_t)n;
		for (size_t i = 0; i < len && (size_t)offset + i < segment->size; i++)
			segment->base[(size_t)offset + i] ^= patches[i];
		patches += len;
		n -= len;
	}
	if (sdpu_bell_ref_read(segment->base + SDPU_CONN_SIDE_SERVER + SDPU_SIDE_BELL, &ref) == 1)
		sdpu_ring_once(&ref);
	for (int64_t deadline = now_ms() + READ_MS; now_ms() < deadline;)
		doca_pe_progress(pe);
	sdpu_segment_close(segment);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	const uint8_t *delta = data + 1, *patches = NULL;
	size_t n, chunk, npatches = 0;
	uint8_t *stream;
	int fd;

	if (size < 1)
		return 0;
	n = size - 1;
	chunk = data[0] & 0x0f ? (size_t)(data[0] & 0x0f) + 1 : n;
	if (data[0] & SEGMENT) {
		uint16_t len;

		if (n < 2)
			return 0;
		memcpy(&len, data + 1, 2);
		n = len < n - 2 ? len : n - 2;
		delta = data + 3;
		patches = delta + n;
		npatches = size - 3 - n;
		chunk = n;
	}
	stream = malloc(n > 0 ? n : 1);
	if (stream == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		stream[i] = delta[i] ^ (i < handshake_len ? handshake[i] : 0);
	memcpy(addr.sun_path, server->path, sizeof(server->path) < sizeof(addr.sun_path) ? sizeof(server->path) : sizeof(addr.sun_path) - 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		abort(); /* the server stopped listening */
	for (size_t at = 0; at < n; at += chunk)
		if (send(fd, stream + at, n - at < chunk ? n - at : chunk, MSG_NOSIGNAL) < 0)
			break; /* it dropped us */
	if (patches != NULL)
		write_segment(fd, patches, npatches);
	shutdown(fd, SHUT_WR);
	answers(fd);
	close(fd);
	/* A connection the handshake made ends on the closed socket: its events before the next input. */
	for (int64_t deadline = now_ms() + ANSWER_MS; open_connections > 0 && now_ms() < deadline;)
		doca_pe_progress(pe);
	free(stream);
	return 0;
}
