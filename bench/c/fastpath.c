/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch fast path of the C library across processes, one side per process, both spinning on
 * doca_pe_progress once connected (the flow of bench/fastpath-peer.ts, one producer to one consumer):
 *   fastpath consume SIZE COUNT POSTED   server: once a client connects, a consumer over an mmap of
 *       POSTED buffers of SIZE bytes (faulted in first), each posted with a receive task and reposted
 *       from its completion after reading the payload's first and last 8 bytes in place (as the C ring
 *       of fabric_ref.c does) and checking the immediate data (the message's number, when both devices
 *       carry 8 bytes of it: messages arrive in order); once COUNT arrived, tells the producer (a 1-byte message) and prints
 *       {"gbps","rate","whole_rate"} (bench.h's stream clock: after the warm-up, and over every message)
 *   fastpath produce SIZE COUNT POSTED   client: a producer sending COUNT messages of SIZE bytes from
 *       its own mmap to the server's consumer, 64 send tasks in flight, each resubmitted from its
 *       completion (again later when the consumer has no buffer posted: DOCA_ERROR_AGAIN); leaves once
 *       told everything arrived
 * A library without the fast path (doca_comch_producer_create, doca_comch_consumer_create or
 * doca_mmap_create answering DOCA_ERROR_NOT_SUPPORTED) is no failure: the side that found out tells the
 * other (a 2-byte message), and both print {"skipped":"<the call>: DOCA_ERROR_NOT_SUPPORTED"}, exit 0.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_mmap.h>

#include "doca_bench.h"

#define SEND_TASKS 64
#define DONE_MSG 1 /* consumer -> producer: every message arrived */
#define SKIP_MSG 2 /* producer -> consumer: no fast path here */

static struct engine eng;
static struct doca_comch_server *server;
static struct doca_comch_client *client;
static struct doca_comch_connection *conn;
static struct doca_ctx *ctx, *endpoint;
static size_t size;
static long count, got, submitted, completed;
static uint32_t posted, peer_consumer, imm_len;
static bool have_consumer, told_done, told_skip, stopping;
static const char *skipped;
static struct stream_clock stream;
static volatile uint64_t sink;

/* Whether `err` of `call` says the library has no fast path (then remembered, for the report), else checked. */
static bool unsupported(const char *call, doca_error_t err)
{
	static char what[128];

	if (err != DOCA_ERROR_NOT_SUPPORTED) {
		check(call, err);
		return false;
	}
	snprintf(what, sizeof(what), "%s: DOCA_ERROR_NOT_SUPPORTED", call);
	skipped = what;
	return true;
}

/* Page-aligned memory of `len` bytes, faulted in (the exchange is measured, not page faults), mapped for
 * DOCA; NULL if the library has no mmaps. */
static struct doca_mmap *memory(struct doca_dev *dev, size_t len, uint8_t fill, uint8_t **addr)
{
	struct doca_mmap *map;

	*addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*addr == MAP_FAILED)
		check("mmap", DOCA_ERROR_NO_MEMORY);
	memset(*addr, fill, len);
	if (unsupported("doca_mmap_create", doca_mmap_create(&map)))
		return NULL;
	check("doca_mmap_set_memrange", doca_mmap_set_memrange(map, *addr, len));
	check("doca_mmap_set_permissions", doca_mmap_set_permissions(map, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	check("doca_mmap_add_dev", doca_mmap_add_dev(map, dev));
	check("doca_mmap_start", doca_mmap_start(map));
	return map;
}

static uint32_t device_imm_len(struct doca_dev *dev)
{
	uint32_t max = 0;

	return doca_comch_consumer_cap_get_max_imm_data_len(doca_dev_as_devinfo(dev), &max) == DOCA_SUCCESS && max >= 8 ? 8 : 0;
}

static void send_ctrl(uint32_t len)
{
	static uint8_t bytes[2];
	struct doca_comch_task_send *task;

	check("task_send_alloc_init", server ? doca_comch_server_task_send_alloc_init(server, conn, bytes, len, &task)
					     : doca_comch_client_task_send_alloc_init(client, conn, bytes, len, &task));
	check("doca_task_submit", doca_task_submit(doca_comch_task_send_as_task(task)));
}

static void ctrl_sent(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void ctrl_failed(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	check("control message", doca_task_get_status(doca_comch_task_send_as_task(task)));
}

static void ctrl_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *from)
{
	(void)event;
	(void)buf;
	(void)from;
	told_done |= len == DONE_MSG;
	told_skip |= len == SKIP_MSG;
}

/*
 * No fast path here: the side that found out tells the other (unless told already), and the server waits
 * until the client knows (its message, or the client gone).
 */
static void skip_together(void)
{
	if (told_skip)
		return;
	send_ctrl(SKIP_MSG);
	for (size_t inflight = 1; inflight > 0 && doca_ctx_get_num_inflight_tasks(ctx, &inflight) == DOCA_SUCCESS;)
		engine_step(&eng);
	while (server != NULL && conn != NULL && !told_skip)
		engine_step(&eng);
}

/* ---- the consumer ---- */

static void received(struct doca_comch_consumer_task_post_recv *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	uint8_t *data;
	size_t len;
	uint64_t a, b, seq;

	(void)task_user_data;
	(void)ctx_user_data;
	check("doca_buf_get_data", doca_buf_get_data(buf, (void **)&data));
	check("doca_buf_get_data_len", doca_buf_get_data_len(buf, &len));
	if (len != size)
		check("a payload's length", DOCA_ERROR_UNEXPECTED);
	memcpy(&a, data, 8);
	memcpy(&b, data + len - 8, 8);
	sink ^= a ^ b;
	if (imm_len != 0 && doca_comch_consumer_task_post_recv_get_imm_data_len(task) == 8) {
		memcpy(&seq, doca_comch_consumer_task_post_recv_get_imm_data(task), 8);
		if (seq != (uint64_t)got)
			check("the immediate data (messages out of order)", DOCA_ERROR_UNEXPECTED);
	}
	stream_at(&stream, ++got);
	if (got == count) {
		doca_task_free(doca_comch_consumer_task_post_recv_as_task(task)); /* a stop waits for every task freed */
		return;
	}
	check("doca_buf_reset_data_len", doca_buf_reset_data_len(buf));
	check("doca_task_submit (repost)", doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)));
}

static void recv_failed(struct doca_comch_consumer_task_post_recv *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	if (!stopping) /* posted buffers come back flushed as the consumer stops */
		check("post_recv task", doca_task_get_status(doca_comch_consumer_task_post_recv_as_task(task)));
	doca_task_free(doca_comch_consumer_task_post_recv_as_task(task));
}

static void connected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *c, uint8_t ok)
{
	(void)event;
	if (ok)
		conn = c;
}

static void disconnected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *c, uint8_t ok)
{
	(void)event;
	(void)ok;
	if (c == conn)
		conn = NULL;
}

static void consume(void)
{
	struct doca_dev *dev = open_dev(ARM_PCI);
	struct doca_comch_consumer *consumer;
	struct doca_buf_inventory *inv;
	struct doca_mmap *map;
	uint8_t *mem;

	check("doca_comch_server_create", doca_comch_server_create(dev, open_rep(dev, HOST_PCI), SERVER_NAME, &server));
	ctx = doca_comch_server_as_ctx(server);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(eng.pe, ctx));
	check("task_send_set_conf", doca_comch_server_task_send_set_conf(server, ctrl_sent, ctrl_failed, 4));
	check("event_msg_recv_register", doca_comch_server_event_msg_recv_register(server, ctrl_recv));
	check("event_connection_status_changed_register", doca_comch_server_event_connection_status_changed_register(server, connected, disconnected));
	start_ctx(ctx);
	say_ready();
	while (conn == NULL)
		engine_step(&eng);
	map = memory(dev, size * posted, 0, &mem);
	if (map == NULL || unsupported("doca_comch_consumer_create", doca_comch_consumer_create(conn, map, &consumer))) {
		skip_together();
		return;
	}
	imm_len = device_imm_len(dev);
	if (imm_len != 0)
		check("doca_comch_consumer_set_imm_data_len", doca_comch_consumer_set_imm_data_len(consumer, imm_len));
	check("post_recv_set_conf", doca_comch_consumer_task_post_recv_set_conf(consumer, received, recv_failed, posted));
	endpoint = doca_comch_consumer_as_ctx(consumer);
	check("doca_pe_connect_ctx (consumer)", doca_pe_connect_ctx(eng.pe, endpoint));
	start_ctx(endpoint);
	await_state(&eng, endpoint, DOCA_CTX_STATE_RUNNING);
	check("doca_buf_inventory_create", doca_buf_inventory_create(posted, &inv));
	check("doca_buf_inventory_start", doca_buf_inventory_start(inv));
	for (uint32_t i = 0; i < posted; i++) {
		struct doca_comch_consumer_task_post_recv *task;
		struct doca_buf *buf;

		check("buf_get_by_addr", doca_buf_inventory_buf_get_by_addr(inv, map, mem + (size_t)i * size, size, &buf));
		check("post_recv_alloc_init", doca_comch_consumer_task_post_recv_alloc_init(consumer, buf, &task));
		check("doca_task_submit (post)", doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)));
	}
	while (got < count && !told_skip)
		doca_pe_progress(eng.pe);
	if (!told_skip) {
		send_ctrl(DONE_MSG);
		while (conn != NULL) /* the producer side leaves first */
			doca_pe_progress(eng.pe);
	}
	stopping = true;
	stop_ctx(&eng, endpoint);
}

/* ---- the producer ---- */

struct slot {
	struct doca_comch_producer_task_send *task;
	uint64_t seq;
};

static struct slot slots[SEND_TASKS];
static struct slot *waiting[SEND_TASKS];
static unsigned nwaiting;

static void new_consumer(struct doca_comch_event_consumer *event, struct doca_comch_connection *c, uint32_t id)
{
	(void)event;
	(void)c;
	if (!have_consumer)
		peer_consumer = id;
	have_consumer = true;
}

static void consumer_gone(struct doca_comch_event_consumer *event, struct doca_comch_connection *c, uint32_t id)
{
	(void)event;
	(void)c;
	(void)id;
}

/* Submits the slot's task as message `submitted`, or keeps it for later if no buffer is posted (AGAIN). */
static void submit(struct slot *s)
{
	doca_error_t err;

	s->seq = (uint64_t)submitted;
	doca_comch_producer_task_send_set_imm_data(s->task, imm_len ? (uint8_t *)&s->seq : NULL, imm_len);
	err = doca_task_submit(doca_comch_producer_task_send_as_task(s->task));
	if (err == DOCA_ERROR_AGAIN) {
		waiting[nwaiting++] = s;
		return;
	}
	check("doca_task_submit (send)", err);
	submitted++;
}

static void sent(struct doca_comch_producer_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	completed++;
	if (submitted < count)
		submit(task_user_data.ptr);
	else
		doca_task_free(doca_comch_producer_task_send_as_task(task)); /* a stop waits for every task freed */
}

static void send_failed(struct doca_comch_producer_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	check("producer send task", doca_task_get_status(doca_comch_producer_task_send_as_task(task)));
}

static void produce(void)
{
	struct doca_dev *dev = open_dev(HOST_PCI);
	struct doca_comch_producer *producer;
	struct doca_buf_inventory *inv;
	struct doca_mmap *map;
	uint8_t *mem;

	check("doca_comch_client_create", doca_comch_client_create(dev, SERVER_NAME, &client));
	ctx = doca_comch_client_as_ctx(client);
	check("doca_pe_connect_ctx", doca_pe_connect_ctx(eng.pe, ctx));
	check("task_send_set_conf", doca_comch_client_task_send_set_conf(client, ctrl_sent, ctrl_failed, 4));
	check("event_msg_recv_register", doca_comch_client_event_msg_recv_register(client, ctrl_recv));
	check("event_consumer_register", doca_comch_client_event_consumer_register(client, new_consumer, consumer_gone));
	start_ctx(ctx);
	await_state(&eng, ctx, DOCA_CTX_STATE_RUNNING);
	check("doca_comch_client_get_connection", doca_comch_client_get_connection(client, &conn));
	if (unsupported("doca_comch_producer_create", doca_comch_producer_create(conn, &producer))) {
		skip_together();
		return;
	}
	check("producer task_send_set_conf", doca_comch_producer_task_send_set_conf(producer, sent, send_failed, SEND_TASKS));
	endpoint = doca_comch_producer_as_ctx(producer);
	check("doca_pe_connect_ctx (producer)", doca_pe_connect_ctx(eng.pe, endpoint));
	start_ctx(endpoint);
	while ((ctx_state(endpoint) != DOCA_CTX_STATE_RUNNING || !have_consumer) && !told_skip)
		doca_pe_progress(eng.pe);
	map = told_skip ? NULL : memory(dev, size, 0x5a, &mem);
	if (map == NULL) {
		skip_together();
		stop_ctx(&eng, endpoint);
		return;
	}
	imm_len = device_imm_len(dev);
	check("doca_buf_inventory_create", doca_buf_inventory_create(SEND_TASKS, &inv));
	check("doca_buf_inventory_start", doca_buf_inventory_start(inv));
	for (unsigned i = 0; i < SEND_TASKS && submitted < count; i++) {
		struct doca_buf *buf;
		union doca_data ud = {.ptr = &slots[i]};

		check("buf_get_by_data", doca_buf_inventory_buf_get_by_data(inv, map, mem, size, &buf));
		check("producer task_send_alloc_init", doca_comch_producer_task_send_alloc_init(producer, buf, NULL, 0, peer_consumer, &slots[i].task));
		doca_task_set_user_data(doca_comch_producer_task_send_as_task(slots[i].task), ud);
		submit(&slots[i]);
	}
	while (completed < count) {
		doca_pe_progress(eng.pe);
		for (unsigned k = nwaiting; k > 0 && submitted < count; k--) {
			struct slot *s = waiting[0];

			memmove(waiting, waiting + 1, --nwaiting * sizeof(waiting[0]));
			submit(s);
		}
	}
	for (unsigned k = 0; k < nwaiting; k++) /* refused after the last submission: still allocated */
		doca_task_free(doca_comch_producer_task_send_as_task(waiting[k]->task));
	while (!told_done)
		doca_pe_progress(eng.pe);
	stop_ctx(&eng, endpoint);
}

int main(int argc, char **argv)
{
	bool consumer = argc == 5 && strcmp(argv[1], "consume") == 0;

	if (argc != 5 || (!consumer && strcmp(argv[1], "produce") != 0) || atol(argv[2]) < 16 || atol(argv[3]) < 2 || atol(argv[4]) < 1) {
		fprintf(stderr, "usage: fastpath consume|produce SIZE COUNT POSTED (SIZE >= 16, COUNT >= 2, POSTED >= 1)\n");
		return 2;
	}
	watchdog("fastpath", 300);
	size = (size_t)atol(argv[2]);
	count = atol(argv[3]);
	stream_clock_init(&stream, count);
	posted = (uint32_t)atol(argv[4]);
	eng = engine_create(false);
	if (consumer)
		consume();
	else
		produce();
	if (skipped == NULL && told_skip)
		skipped = "the peer's fast path: DOCA_ERROR_NOT_SUPPORTED";
	if (skipped != NULL)
		printf("{\"skipped\":\"%s\"}\n", skipped);
	else if (consumer) {
		printf("{");
		stream_print_fields(&stream, size);
		printf("}\n");
	}
	fflush(stdout);
	stop_ctx(&eng, ctx);
	return 0;
}
