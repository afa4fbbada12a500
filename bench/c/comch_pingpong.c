/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch control path of the C library, one side per process, speaking the protocol of
 * bench/comch-peer.ts so that either side may be the TypeScript peer:
 *   comch_pingpong echo busy|notify     server: answers every message with its bytes; stops on a 1-byte
 *                                       message; prints {"cpu_us_per_msg"} (from the first message on)
 *   comch_pingpong ping busy|notify N [SIZE]  client: N round trips of SIZE bytes (64), each sent once
 *                                       the previous reply arrived; prints {"p50_us","p99_us",...,"cpu_us_per_msg"} (bench.h's fields)
 *   comch_pingpong sink N               server: counts N messages (spinning); prints {"rate","whole_rate"}
 *                                       (msg/s, bench.h's stream clock: after the warm-up, and over all)
 *   comch_pingpong flood N              client: sends N 64-byte messages, as many in flight as its 1024
 *                                       send tasks allow, each resubmitted from its completion (spinning)
 * busy: both loops spin on doca_pe_progress; notify: asleep on the engine's notification handle (epoll)
 * between events, then clear and progress. Servers print "ready" once started.
 */
#define _GNU_SOURCE
#include "doca_bench.h"

#define SEND_TASKS 1024
#define MAX_SIZE 4080

static struct engine eng;
static struct doca_comch_server *server;
static struct doca_comch_client *client;
static struct doca_ctx *ctx;
static struct doca_comch_connection *conn;

static long n, replies, echoed, got, completed, submitted;
static bool quit, resubmit;
static double *rtt, t0, cpu0;
static struct stream_clock stream;
static uint8_t msg[MAX_SIZE], reply[MAX_SIZE];
static uint32_t size = 64;

static void send_bytes(struct doca_comch_connection *to, uint8_t *bytes, uint32_t len)
{
	struct doca_comch_task_send *task;

	check("task_send_alloc_init", server ? doca_comch_server_task_send_alloc_init(server, to, bytes, len, &task)
					     : doca_comch_client_task_send_alloc_init(client, to, bytes, len, &task));
	check("doca_task_submit", doca_task_submit(doca_comch_task_send_as_task(task)));
}

static void sent(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	completed++;
	if (resubmit && submitted < n) { /* flood: the task goes again */
		submitted++;
		check("doca_task_submit", doca_task_submit(doca_comch_task_send_as_task(task)));
		return;
	}
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void send_failed(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	check("send task", doca_task_get_status(doca_comch_task_send_as_task(task)));
}

/* echo: the reply is copied out (the receive buffer is the library's once this callback returns). */
static void echo_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *from)
{
	(void)event;
	if (len == 1) {
		quit = true;
		cpu0 = cpu_us() - cpu0;
		return;
	}
	if (echoed++ == 0)
		cpu0 = cpu_us();
	memcpy(reply, buf, len < MAX_SIZE ? len : MAX_SIZE);
	send_bytes(from, reply, len);
}

static void sink_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *from)
{
	(void)event;
	(void)buf;
	(void)len;
	(void)from;
	stream_at(&stream, ++got);
}

/* ping: the round trip ends here; asleep, the next message goes from this callback. */
static void ping_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *from)
{
	(void)event;
	(void)buf;
	(void)len;
	(void)from;
	rtt[replies] = now_ns() - t0;
	if (++replies < n && eng.asleep) {
		t0 = now_ns();
		send_bytes(conn, msg, size);
	}
}

static void no_status(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *c, uint8_t ok)
{
	(void)event;
	(void)c;
	(void)ok;
}

static void start_server(doca_comch_event_msg_recv_cb_t recv)
{
	struct doca_dev *dev = open_dev(ARM_PCI);

	check("doca_comch_server_create", doca_comch_server_create(dev, open_rep(dev, HOST_PCI), SERVER_NAME, &server));
	ctx = doca_comch_server_as_ctx(server);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(eng.pe, ctx));
	check("set_recv_queue_size", doca_comch_server_set_recv_queue_size(server, 4096));
	check("task_send_set_conf", doca_comch_server_task_send_set_conf(server, sent, send_failed, SEND_TASKS));
	check("event_msg_recv_register", doca_comch_server_event_msg_recv_register(server, recv));
	check("event_connection_status_changed_register", doca_comch_server_event_connection_status_changed_register(server, no_status, no_status));
	start_ctx(ctx);
	say_ready();
}

static void start_client(doca_comch_event_msg_recv_cb_t recv)
{
	check("doca_comch_client_create", doca_comch_client_create(open_dev(HOST_PCI), SERVER_NAME, &client));
	ctx = doca_comch_client_as_ctx(client);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(eng.pe, ctx));
	check("set_recv_queue_size", doca_comch_client_set_recv_queue_size(client, 4096));
	check("task_send_set_conf", doca_comch_client_task_send_set_conf(client, sent, send_failed, SEND_TASKS));
	check("event_msg_recv_register", doca_comch_client_event_msg_recv_register(client, recv));
	start_ctx(ctx);
	await_state(&eng, ctx, DOCA_CTX_STATE_RUNNING);
	check("doca_comch_client_get_connection", doca_comch_client_get_connection(client, &conn));
}

static void ping(void)
{
	double cpu;

	rtt = calloc((size_t)n, sizeof(double));
	memset(msg, 0x61, sizeof(msg));
	start_client(ping_recv);
	cpu = cpu_us();
	if (eng.asleep) {
		t0 = now_ns();
		send_bytes(conn, msg, size);
		while (replies < n)
			engine_step(&eng);
	} else {
		for (long i = 0; i < n; i++) {
			t0 = now_ns();
			send_bytes(conn, msg, size);
			while (replies <= i)
				doca_pe_progress(eng.pe);
		}
	}
	cpu = cpu_us() - cpu;
	send_bytes(conn, msg, 1); /* the echo side stops */
	while (completed < n + 1) /* every task freed by its callback: the stop then reaches IDLE at once */
		engine_step(&eng);
	printf("{");
	rtt_print_fields(rtt, (int)n);
	printf(",\"cpu_us_per_msg\":%.3f}\n", cpu / n);
}

static void flood(void)
{
	resubmit = true;
	memset(msg, 0x61, sizeof(msg));
	start_client(sink_recv); /* nothing comes back */
	for (; submitted < SEND_TASKS && submitted < n; submitted++)
		send_bytes(conn, msg, 64);
	while (completed < n)
		doca_pe_progress(eng.pe);
}

int main(int argc, char **argv)
{
	const char *role = argc > 1 ? argv[1] : "";
	bool sink = strcmp(role, "sink") == 0, flooding = strcmp(role, "flood") == 0;
	bool ok = argc >= 3 && (((sink || flooding) && argc == 3) ||
				((strcmp(role, "echo") == 0 || strcmp(role, "ping") == 0) && argc <= 5 &&
				 (strcmp(argv[2], "busy") == 0 || strcmp(argv[2], "notify") == 0)));

	if (!ok) {
		fprintf(stderr, "usage: comch_pingpong echo busy|notify | ping busy|notify N [SIZE] | sink N | flood N\n");
		return 2;
	}
	watchdog("comch_pingpong", 300);
	eng = engine_create(!sink && !flooding && strcmp(argv[2], "notify") == 0);
	n = atol(sink || flooding ? argv[2] : argc > 3 ? argv[3] : "0");
	if (argc == 5)
		size = (uint32_t)atol(argv[4]);
	if (size < 2 || size > MAX_SIZE || (strcmp(role, "echo") != 0 && n < 1)) {
		fprintf(stderr, "comch_pingpong: N must be at least 1 and SIZE in [2, %d]\n", MAX_SIZE);
		return 2;
	}
	if (strcmp(role, "echo") == 0) {
		start_server(echo_recv);
		while (!quit || completed < echoed)
			engine_step(&eng);
		printf("{\"cpu_us_per_msg\":%.3f,\"messages\":%ld}\n", cpu0 / (echoed ? echoed : 1), echoed);
	} else if (sink) {
		stream_clock_init(&stream, n);
		start_server(sink_recv);
		while (got < n)
			doca_pe_progress(eng.pe);
		printf("{");
		stream_print_fields(&stream, 64);
		printf("}\n");
	} else if (flooding) {
		flood();
	} else {
		ping();
	}
	fflush(stdout);
	stop_ctx(&eng, ctx);
	return 0;
}
