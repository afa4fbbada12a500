/* SPDX-License-Identifier: Apache-2.0 */
/* data_path.h: the fast-path steps of softdpu's comch data path samples. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_ctx.h>
#include <doca_log.h>
#include <doca_mmap.h>

#include "data_path.h"

DOCA_LOG_REGISTER(COMCH_DATA_PATH);

#define WAIT_SECONDS 30

/*
 * One fast-path endpoint's memory: a map with PCI read/write (the only permission NVIDIA's samples give)
 * over malloc'd memory (the consumer's) or over the caller's own bytes (the producer's text, in place, as
 * NVIDIA's samples map it: on the stack of main), and a one-element inventory.
 */
struct mapped {
	uint8_t *mem;
	bool owned; /* mem is malloc'd here */
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
};

/* What a task's callbacks report. */
struct outcome {
	bool done;
	doca_error_t result;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

doca_error_t data_path_wait(struct data_path_control *control, struct doca_pe *pe, const bool *flag, const char *what)
{
	const struct timespec nap = {0, 10000};
	double deadline = now() + WAIT_SECONDS;

	while (!*flag) {
		uint8_t any = doca_pe_progress(control->pe);

		if (pe != NULL)
			any |= doca_pe_progress(pe);
		if (any)
			continue;
		if (now() > deadline) {
			DOCA_LOG_ERR("Timed out after %d s waiting for %s", WAIT_SECONDS, what);
			return DOCA_ERROR_TIME_OUT;
		}
		nanosleep(&nap, NULL);
	}
	return DOCA_SUCCESS;
}

/* Maps size bytes at mem, or at new zeroed memory when mem is NULL. */
static doca_error_t map(struct doca_dev *dev, void *mem, size_t size, struct mapped *m)
{
	doca_error_t result;

	memset(m, 0, sizeof(*m));
	m->owned = mem == NULL;
	m->mem = m->owned ? calloc(1, size) : mem;
	if (m->mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	result = doca_mmap_create(&m->mmap);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_memrange(m->mmap, m->mem, size);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_set_permissions(m->mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_add_dev(m->mmap, dev);
	if (result == DOCA_SUCCESS)
		result = doca_mmap_start(m->mmap);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_create(1, &m->inv);
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_start(m->inv);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to map the fast-path buffer: %s", doca_error_get_descr(result));
	return result;
}

/* Frees the memory after the map; the map is destroyed after its buffers went back. */
static void unmap(struct mapped *m)
{
	if (m->inv != NULL)
		doca_buf_inventory_destroy(m->inv);
	if (m->mmap != NULL)
		doca_mmap_destroy(m->mmap);
	if (m->owned)
		free(m->mem);
}

/*
 * Stops a context unless it is stopping or stopped already: the completion callbacks stop their endpoint
 * (as NVIDIA's samples do, from inside the callback), and the connection's end stops this side's
 * endpoints when a peer that got what it wanted stops the test and disconnects at once.
 */
static doca_error_t stop_running(struct doca_ctx *ctx)
{
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;

	doca_ctx_get_state(ctx, &state);
	return state == DOCA_CTX_STATE_RUNNING || state == DOCA_CTX_STATE_STARTING ? doca_ctx_stop(ctx) : DOCA_SUCCESS;
}

/* Stops an endpoint's context (stop_running) and waits for IDLE. */
static doca_error_t retire(struct data_path_control *control, struct doca_pe *pe, struct doca_ctx *ctx, const char *what)
{
	enum doca_ctx_states state = DOCA_CTX_STATE_RUNNING;
	const struct timespec nap = {0, 10000};
	double deadline = now() + WAIT_SECONDS;
	doca_error_t result = stop_running(ctx);

	if (result != DOCA_SUCCESS && result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("Failed to stop the %s: %s", what, doca_error_get_descr(result));
		return result;
	}
	for (doca_ctx_get_state(ctx, &state); state != DOCA_CTX_STATE_IDLE; doca_ctx_get_state(ctx, &state)) {
		if ((doca_pe_progress(pe) | doca_pe_progress(control->pe)) == 0) {
			if (now() > deadline) {
				DOCA_LOG_ERR("Timed out waiting for the %s to stop", what);
				return DOCA_ERROR_TIME_OUT;
			}
			nanosleep(&nap, NULL);
		}
	}
	return DOCA_SUCCESS;
}

/* Frees a completed task and, from inside its callback, stops its endpoint: each endpoint does one task. */
static void finish(struct doca_task *task)
{
	struct doca_ctx *ctx = doca_task_get_ctx(task);

	doca_task_free(task);
	stop_running(ctx);
}

/* ---- receiving ---- */

static void recv_done(struct doca_comch_consumer_task_post_recv *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct outcome *outcome = task_user_data.ptr;
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	void *data;
	size_t len;

	(void)ctx_user_data;
	doca_buf_get_data(buf, &data);
	doca_buf_get_data_len(buf, &len);
	DOCA_LOG_INFO("Message received: '%.*s'", (int)len, (const char *)data);
	outcome->result = DOCA_SUCCESS;
	outcome->done = true;
	doca_buf_dec_refcount(buf, NULL);
	finish(doca_comch_consumer_task_post_recv_as_task(task));
}

static void recv_failed(struct doca_comch_consumer_task_post_recv *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct outcome *outcome = task_user_data.ptr;

	(void)ctx_user_data;
	outcome->result = doca_task_get_status(doca_comch_consumer_task_post_recv_as_task(task));
	DOCA_LOG_ERR("The post-receive task failed: %s", doca_error_get_descr(outcome->result));
	outcome->done = true;
	doca_buf_dec_refcount(doca_comch_consumer_task_post_recv_get_buf(task), NULL);
	finish(doca_comch_consumer_task_post_recv_as_task(task));
}

static void consumer_state(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev, enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_RUNNING)
		*(bool *)user_data.ptr = true;
}

doca_error_t data_path_recv_msg(struct doca_dev *dev, struct data_path_control *control)
{
	struct mapped m;
	struct doca_pe *pe = NULL;
	struct doca_comch_consumer *consumer = NULL;
	struct doca_comch_consumer_task_post_recv *task;
	struct doca_buf *buf;
	struct outcome outcome = {false, DOCA_SUCCESS};
	bool running = false;
	union doca_data ud = {.ptr = &running}, task_ud = {.ptr = &outcome};
	doca_error_t result = map(dev, NULL, MAX_BUF_SIZE, &m);

	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&pe);
	if (result == DOCA_SUCCESS)
		result = doca_comch_consumer_create(control->conn, m.mmap, &consumer);
	if (result == DOCA_SUCCESS)
		result = doca_comch_consumer_task_post_recv_set_conf(consumer, recv_done, recv_failed, 2);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(pe, doca_comch_consumer_as_ctx(consumer));
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(doca_comch_consumer_as_ctx(consumer), ud);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_state_changed_cb(doca_comch_consumer_as_ctx(consumer), consumer_state);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create the consumer: %s", doca_error_get_descr(result));
		goto out;
	}
	result = doca_ctx_start(doca_comch_consumer_as_ctx(consumer));
	if (result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("The consumer start returned %s, not DOCA_ERROR_IN_PROGRESS", doca_error_get_name(result));
		result = result == DOCA_SUCCESS ? DOCA_ERROR_UNEXPECTED : result;
		goto out;
	}
	result = data_path_wait(control, pe, &running, "the consumer to register with the peer");
	if (result == DOCA_SUCCESS)
		result = doca_buf_inventory_buf_get_by_addr(m.inv, m.mmap, m.mem, MAX_BUF_SIZE, &buf);
	if (result == DOCA_SUCCESS) {
		result = doca_comch_consumer_task_post_recv_alloc_init(consumer, buf, &task);
		if (result != DOCA_SUCCESS)
			doca_buf_dec_refcount(buf, NULL);
	}
	if (result == DOCA_SUCCESS) {
		doca_task_set_user_data(doca_comch_consumer_task_post_recv_as_task(task), task_ud);
		result = doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task));
		if (result != DOCA_SUCCESS) {
			doca_buf_dec_refcount(buf, NULL);
			doca_task_free(doca_comch_consumer_task_post_recv_as_task(task));
		}
	}
	if (result == DOCA_SUCCESS)
		result = data_path_wait(control, pe, &outcome.done, "a message from the peer's producer");
	if (result == DOCA_SUCCESS)
		result = outcome.result;
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to receive a message: %s", doca_error_get_descr(result));
	{
		doca_error_t stopped = retire(control, pe, doca_comch_consumer_as_ctx(consumer), "consumer");

		if (result == DOCA_SUCCESS)
			result = stopped;
	}
out:
	if (consumer != NULL)
		doca_comch_consumer_destroy(consumer);
	if (pe != NULL)
		doca_pe_destroy(pe);
	unmap(&m);
	return result;
}

/* ---- sending ---- */

static void send_finished(struct doca_comch_producer_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct outcome *outcome = task_user_data.ptr;

	(void)ctx_user_data;
	outcome->result = doca_task_get_status(doca_comch_producer_task_send_as_task(task));
	outcome->done = true;
	doca_buf_dec_refcount((struct doca_buf *)doca_comch_producer_task_send_get_buf(task), NULL);
	finish(doca_comch_producer_task_send_as_task(task));
}

doca_error_t data_path_send_msg(struct doca_dev *dev, struct data_path_control *control, const char *text)
{
	size_t len = strlen(text);
	struct mapped m;
	struct doca_pe *pe = NULL;
	struct doca_comch_producer *producer = NULL;
	struct doca_comch_producer_task_send *task;
	struct doca_buf *buf;
	struct outcome outcome = {false, DOCA_SUCCESS};
	union doca_data task_ud = {.ptr = &outcome};
	doca_error_t result;

	/* The peer's consumer first: its id comes with the new-consumer event. */
	result = data_path_wait(control, NULL, &control->consumer_known, "the peer's consumer");
	if (result != DOCA_SUCCESS)
		return result;
	if (control->remote_consumer_id == INVALID_CONSUMER_ID) {
		DOCA_LOG_ERR("The test was stopped before the peer created its consumer");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	/* The text's own bytes, its terminating zero too when it is empty (a map is never empty). */
	result = map(dev, (void *)text, len > 0 ? len : 1, &m);
	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&pe);
	if (result == DOCA_SUCCESS)
		result = doca_comch_producer_create(control->conn, &producer);
	if (result == DOCA_SUCCESS)
		result = doca_comch_producer_task_send_set_conf(producer, send_finished, send_finished, 2);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(pe, doca_comch_producer_as_ctx(producer));
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_comch_producer_as_ctx(producer));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start the producer: %s", doca_error_get_descr(result));
		goto out;
	}
	result = doca_buf_inventory_buf_get_by_data(m.inv, m.mmap, m.mem, len, &buf);
	if (result == DOCA_SUCCESS) {
		result = doca_comch_producer_task_send_alloc_init(producer, buf, NULL, 0, control->remote_consumer_id, &task);
		if (result != DOCA_SUCCESS)
			doca_buf_dec_refcount(buf, NULL);
	}
	if (result == DOCA_SUCCESS) {
		double deadline = now() + WAIT_SECONDS;

		doca_task_set_user_data(doca_comch_producer_task_send_as_task(task), task_ud);
		/* AGAIN: the peer has not posted its buffer yet; progress both engines and submit again. */
		while ((result = doca_task_submit(doca_comch_producer_task_send_as_task(task))) == DOCA_ERROR_AGAIN && now() < deadline) {
			doca_pe_progress(control->pe);
			doca_pe_progress(pe);
		}
		if (result != DOCA_SUCCESS) {
			doca_buf_dec_refcount(buf, NULL);
			doca_task_free(doca_comch_producer_task_send_as_task(task));
		}
	}
	if (result == DOCA_SUCCESS)
		result = data_path_wait(control, pe, &outcome.done, "the send to complete");
	if (result == DOCA_SUCCESS)
		result = outcome.result;
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to send the message: %s", doca_error_get_descr(result));
	{
		doca_error_t stopped = retire(control, pe, doca_comch_producer_as_ctx(producer), "producer");

		if (result == DOCA_SUCCESS)
			result = stopped;
	}
out:
	if (producer != NULL)
		doca_comch_producer_destroy(producer);
	if (pe != NULL)
		doca_pe_destroy(pe);
	unmap(&m);
	return result;
}

/* ---- the peer's consumers ---- */

void data_path_consumer_new(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	struct data_path_control *control = doca_comch_connection_get_user_data(conn).ptr;

	(void)event;
	if (control != NULL) {
		control->remote_consumer_id = id;
		control->consumer_known = true;
	}
}

void data_path_consumer_expired(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	(void)conn;
	(void)id;
}
