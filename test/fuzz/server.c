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

#include "comch/comch.h"
#include "comch/wire.h"
#include "seeds.h"

#define NAME "fuzz-server"
/* A handshake the server neither ends nor completes is ended by its 5000 ms timeout: wait a little longer. */
#define ANSWER_MS 6000

static struct doca_pe *pe;
static struct doca_comch_server *server;
static uint8_t handshake[2 * (4 + SDPU_MAX_FRAME)];
static size_t handshake_len;
static int open_connections;

static __attribute__((noreturn)) void die(const char *what, doca_error_t err)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, doca_error_get_name(err));
	exit(2);
}

static void check(const char *what, doca_error_t err)
{
	if (err != DOCA_SUCCESS)
		die(what, err);
}

static void received(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *conn)
{
	(void)event;
	(void)buf;
	(void)len;
	(void)conn;
}

static void sent(struct doca_comch_task_send *task, union doca_data task_data, union doca_data ctx_data)
{
	(void)task;
	(void)task_data;
	(void)ctx_data;
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

static struct doca_dev *open_dev(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;
	uint8_t eq = 0;

	check("doca_devinfo_create_list", doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			check("doca_dev_open", doca_dev_open(list[i], &dev));
	doca_devinfo_destroy_list(list);
	if (dev == NULL)
		die(pci, DOCA_ERROR_NOT_FOUND);
	return dev;
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
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct doca_dev *dev;
	struct doca_ctx *ctx;
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	size_t n;

	(void)argc;
	(void)argv;
	if (seed_dir() != NULL) {
		write_seeds();
		exit(0);
	}
	if (getenv("SOFTDPU_FABRIC") == NULL) {
		fprintf(stderr, "fuzz: set $SOFTDPU_FABRIC to a private directory (test/fuzz/run.sh makes one)\n");
		exit(2);
	}
	if (getenv("SOFTDPU_FUZZ_LOG") == NULL) /* set it to see why an input is refused (replaying one) */
		doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	dev = open_dev("03:00.0");
	check("doca_pe_create", doca_pe_create(&pe));
	check("doca_comch_server_create", doca_comch_server_create(dev, open_rep(dev, "b1:00.0"), NAME, &server));
	ctx = doca_comch_server_as_ctx(server);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(pe, ctx));
	check("task_send_set_conf", doca_comch_server_task_send_set_conf(server, sent, sent, 16));
	check("msg_recv_register", doca_comch_server_event_msg_recv_register(server, received));
	check("status_register", doca_comch_server_event_connection_status_changed_register(server, connected, disconnected));
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	uint8_t *stream;
	size_t n, chunk;
	int fd;

	if (size < 1)
		return 0;
	n = size - 1;
	chunk = data[0] & 0x0f ? (size_t)(data[0] & 0x0f) + 1 : n;
	stream = malloc(n > 0 ? n : 1);
	if (stream == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		stream[i] = data[1 + i] ^ (i < handshake_len ? handshake[i] : 0);
	memcpy(addr.sun_path, server->path, sizeof(server->path) < sizeof(addr.sun_path) ? sizeof(server->path) : sizeof(addr.sun_path) - 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
		abort(); /* the server stopped listening */
	for (size_t at = 0; at < n; at += chunk)
		if (send(fd, stream + at, n - at < chunk ? n - at : chunk, MSG_NOSIGNAL) < 0)
			break; /* it dropped us */
	shutdown(fd, SHUT_WR);
	answers(fd);
	close(fd);
	/* A connection the handshake made ends on the closed socket: its events before the next input. */
	for (int64_t deadline = now_ms() + ANSWER_MS; open_connections > 0 && now_ms() < deadline;)
		doca_pe_progress(pe);
	free(stream);
	return 0;
}
