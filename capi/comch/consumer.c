/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch consumer (doca_comch_consumer.h; docs/protocol.md, "Consumer queue"): a context that posts
 * buffers of a map with PCI_READ_WRITE permission into a queue segment of its own, which producers on
 * the other side of the connection fill. Start is asynchronous (DOCA_ERROR_IN_PROGRESS): its entry goes
 * REQUESTED, this side's context announces it, the peer's context registers it and rings it, and then
 * it is RUNNING. Completions are taken in posting order; what a producer wrote is checked against what
 * this side posted (never read back), and a violation fails the consumer with CONNECTION_ABORTED, nothing
 * read. A stop completes what was filled, withdraws the rest, and waits for the buffers a producer
 * already claimed (they complete when filled, or fail if that producer's thread died).
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "comch/endpoint.h"
#include "core/internal.h"
#include "core/io.h"
#include "core/pe.h"
#include "core/shm.h"
#include "fabric/names.h"
#include "fabric/topology.h"
#include "mmap/mmap.h"

#define NAME "doca_comch_consumer"
#define TASK_POST_RECV 0
/* A claim whose producer never wrote its name (it died between the claim and the name). */
#define ANONYMOUS_CLAIM_MS 1000
/* How old an answer about a claiming producer's thread may be (protocol.md, ANSWER_TTL_MS). */
#define CLAIM_CHECK_MS 20

struct doca_comch_consumer_task_post_recv {
	struct doca_task base;
	struct doca_buf *buf;
	uint32_t producer_id;
	uint32_t imm_len;
	uint8_t imm[SDPU_MAX_IMM];
	bool held;
};

struct doca_comch_consumer {
	struct sdpu_endpoint ep;
	struct doca_mmap *mmap;
	uint32_t imm_len;
	doca_comch_consumer_task_post_recv_completion_cb_t ok, err;
	struct sdpu_segment *queue;
	uint32_t slots;
	int32_t tail, head;
	/* What was posted in each slot, as this side knows it. */
	uint32_t *capacity;
	struct doca_comch_consumer_task_post_recv **posted;
	uint32_t held;
	bool registered;
	int64_t anonymous_since, claim_checked_ms;
	uint64_t anonymous_timer;
	/* Polls that found the head unfilled (claim_dead's cadence while the engine never slept). */
	uint32_t unfilled_polls;
};

/*
 * Polls finding the head unfilled per look at its claim while the engine has never slept: the look reads
 * the claim head, which producers write with every claim, and a busy consumer polls many times per
 * message; a look per poll took that cache line from the producer on every message (docs/protocol.md,
 * Dead claims).
 */
#define CLAIM_LOOK_POLLS 256u

static struct doca_comch_consumer *of(struct doca_ctx *ctx)
{
	return (struct doca_comch_consumer *)ctx;
}

static uint8_t *slot_at(const struct doca_comch_consumer *c, int32_t position)
{
	return c->queue->base + SDPU_CQ_SLOTS + (size_t)((uint32_t)position & (c->slots - 1)) * SDPU_CQ_SLOT_SIZE;
}

static uint32_t outstanding(const struct doca_comch_consumer *c)
{
	return (uint32_t)(c->tail - c->head);
}

static void post(struct doca_comch_consumer *c, struct doca_comch_consumer_task_post_recv *t)
{
	uint8_t *s = slot_at(c, c->tail);
	struct doca_buf *b = t->buf;
	uint32_t i = (uint32_t)c->tail & (c->slots - 1);

	c->capacity[i] = (uint32_t)b->len;
	c->posted[i] = t;
	sdpu_put_u32(s + SDPU_CQ_S_CAPACITY, (uint32_t)b->len);
	sdpu_put_f64(s + SDPU_CQ_S_OFFSET, (double)(c->mmap->offset + (size_t)(b->head - c->mmap->addr)));
	sdpu_put_u32(s + SDPU_CQ_S_CLAIMER, 0);
	sdpu_store(s + SDPU_CQ_S_STATE, SDPU_CQ_POSTED);
	c->tail++;
	sdpu_store(c->queue->base + SDPU_CQ_POST_TAIL, c->tail);
}

/* Frees the oldest slot; its task. */
static struct doca_comch_consumer_task_post_recv *release_head(struct doca_comch_consumer *c)
{
	uint32_t i = (uint32_t)c->head & (c->slots - 1);
	struct doca_comch_consumer_task_post_recv *t = c->posted[i];

	c->posted[i] = NULL;
	sdpu_store(slot_at(c, c->head) + SDPU_CQ_S_STATE, SDPU_CQ_EMPTY);
	c->head++;
	return t;
}

static void violation(struct doca_comch_consumer *c, const char *what, uint32_t value, uint32_t limit)
{
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "consumer %u: a producer %s (%u; at most %u); failing the consumer with DOCA_ERROR_CONNECTION_ABORTED",
		     c->ep.id, what, value, limit);
	sdpu_ctx_fail(&c->ep.ctx, DOCA_ERROR_CONNECTION_ABORTED);
}

/* 1: the oldest slot was filled and its task completed with `ok_err`; 0: not filled; -1: a violation. */
static int take_one(struct doca_comch_consumer *c, doca_error_t ok_err)
{
	uint8_t *s;
	uint32_t i, length, producer, imm_len, max_imm;
	struct doca_comch_consumer_task_post_recv *t;

	if (c->head == c->tail)
		return 0;
	s = slot_at(c, c->head);
	if (sdpu_load(s + SDPU_CQ_S_STATE) != SDPU_CQ_FILLED)
		return 0;
	i = (uint32_t)c->head & (c->slots - 1);
	length = sdpu_get_u32(s + SDPU_CQ_S_LENGTH);
	producer = sdpu_get_u32(s + SDPU_CQ_S_PRODUCER);
	imm_len = sdpu_get_u32(s + SDPU_CQ_S_IMM_LEN);
	max_imm = c->imm_len < SDPU_MAX_IMM ? c->imm_len : SDPU_MAX_IMM;
	if (length > c->capacity[i] || imm_len > max_imm || producer == 0) {
		if (c->ep.ctx.state == DOCA_CTX_STATE_RUNNING) {
			if (length > c->capacity[i])
				violation(c, "reported more bytes than the posted buffer holds", length, c->capacity[i]);
			else if (imm_len > max_imm)
				violation(c, "reported more immediate data than the consumer takes", imm_len, max_imm);
			else
				violation(c, "filled a buffer without its producer id", producer, 0);
		}
		return -1;
	}
	t = release_head(c);
	memcpy(t->imm, s + SDPU_CQ_S_IMM, imm_len);
	t->imm_len = imm_len;
	t->producer_id = producer;
	t->buf->data = t->buf->head;
	t->buf->data_len = length;
	if (t->held) {
		t->held = false;
		c->held--;
	}
	sdpu_task_complete(&t->base, ok_err);
	return 1;
}

static void take_filled(struct doca_comch_consumer *c)
{
	while (take_one(c, DOCA_SUCCESS) == 1)
		;
}

static void on_anonymous(void *arg)
{
	struct doca_comch_consumer *c = arg;

	c->anonymous_timer = 0;
	sdpu_source_ring(&c->ep.source);
}

/* Whether the oldest buffer was claimed by a producer that is gone. */
static bool claim_dead(struct doca_comch_consumer *c)
{
	uint8_t *s;
	int32_t state;
	uint32_t claimer;

	if (c->head == c->tail || (int32_t)(sdpu_load(c->queue->base + SDPU_CQ_CLAIM_HEAD) - c->head) <= 0) {
		c->anonymous_since = 0;
		return false;
	}
	s = slot_at(c, c->head);
	state = sdpu_load(s + SDPU_CQ_S_STATE);
	if (state == SDPU_CQ_FILLED)
		return false;
	int64_t now = sdpu_now_ms();

	if (state == SDPU_CQ_CLAIMED) {
		claimer = sdpu_get_u32(s + SDPU_CQ_S_CLAIMER);
		c->anonymous_since = 0;
		if (claimer == 0 || claimer - 1 >= c->ep.layout.entries)
			return true;
		/* A live producer may take a while to copy a large buffer: ask /proc at most every 20 ms (ANSWER_TTL_MS). */
		if (c->claim_checked_ms != 0 && now - c->claim_checked_ms < CLAIM_CHECK_MS)
			return false;
		c->claim_checked_ms = now;
		return !sdpu_endpoint_owner_alive(&c->ep, claimer - 1);
	}

	if (c->anonymous_since == 0) {
		c->anonymous_since = now;
		sdpu_io_lock();
		if (c->anonymous_timer == 0)
			c->anonymous_timer = sdpu_io_timer(ANONYMOUS_CLAIM_MS + 10, on_anonymous, c);
		sdpu_io_unlock();
	}
	if (now - c->anonymous_since < ANONYMOUS_CLAIM_MS)
		return false;
	c->anonymous_since = 0;
	return true;
}

/* Stopping: the claimed buffers complete as they are filled, or fail if their producer is gone. */
static void finish_held(struct doca_comch_consumer *c)
{
	while (c->held > 0) {
		int r = take_one(c, DOCA_SUCCESS);

		if (r == 1)
			continue;
		if (r == 0 && !claim_dead(c))
			return;
		struct doca_comch_consumer_task_post_recv *t = release_head(c);

		t->held = false;
		c->held--;
		sdpu_task_complete(&t->base, c->ep.ctx.stop_error);
	}
}

static bool poll_consumer(struct sdpu_source *source)
{
	struct doca_comch_consumer *c = (struct doca_comch_consumer *)((char *)source - offsetof(struct sdpu_endpoint, source));
	enum doca_ctx_states state = c->ep.ctx.state;

	if (state == DOCA_CTX_STATE_IDLE || c->queue == NULL)
		return false;
	if (state == DOCA_CTX_STATE_STOPPING) {
		if (c->held > 0)
			finish_held(c);
		return false;
	}
	if (!sdpu_endpoint_alive(&c->ep))
		return false;
	if (state == DOCA_CTX_STATE_STARTING && !c->registered &&
	    sdpu_load(sdpu_entry(&c->ep, c->ep.index) + SDPU_ENTRY_STATE) == SDPU_ENDPOINT_REGISTERED) {
		c->registered = true;
		sdpu_ctx_start_completed(&c->ep.ctx);
	}
	if (state != DOCA_CTX_STATE_RUNNING)
		return false;
	take_filled(c);
	/* Every poll once the engine slept (a poll may be the one a ring brought), else one in CLAIM_LOOK_POLLS. */
	if (c->head != c->tail && (c->ep.ctx.pe->tracking || ++c->unfilled_polls % CLAIM_LOOK_POLLS == 0) && claim_dead(c)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, NAME, "consumer %u: the producer that claimed a posted buffer is gone; posting the buffer again",
			     c->ep.id);
		post(c, release_head(c));
	}
	return false;
}

/* ---- the context's steps ---- */

static doca_error_t consumer_start(struct doca_ctx *ctx, bool *running)
{
	struct doca_comch_consumer *c = of(ctx);
	const char *call = "doca_ctx_start";
	uint8_t *e = sdpu_entry(&c->ep, c->ep.index);
	uint32_t slots = 1, position = 0;
	doca_error_t err;

	if (ctx->confs[TASK_POST_RECV] == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: set the post-receive task configuration (doca_comch_consumer_task_post_recv_set_conf) first", call);
		return DOCA_ERROR_BAD_STATE;
	}
	err = sdpu_mmap_usable(c->mmap, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (c->mmap->segment == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: the consumer's map is not in shared memory", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdpu_endpoint_connected(&c->ep)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: the consumer's connection ended", call);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	if (!sdpu_start_position(&position))
		return DOCA_ERROR_INVALID_VALUE;
	while (slots < ctx->confs[TASK_POST_RECV]->capacity)
		slots <<= 1;
	err = sdpu_io_start();
	if (err != DOCA_SUCCESS)
		return err;
	err = sdpu_segment_create("consumer", SDPU_CQ_SLOTS - SDPU_SEGMENT_HEADER + (size_t)slots * SDPU_CQ_SLOT_SIZE, &c->queue);
	if (err != DOCA_SUCCESS)
		return err;
	c->capacity = calloc(slots, sizeof(*c->capacity));
	c->posted = calloc(slots, sizeof(*c->posted));
	if (c->capacity == NULL || c->posted == NULL || (err = sdpu_endpoint_publish(&c->ep, poll_consumer)) != DOCA_SUCCESS) {
		free(c->capacity);
		free(c->posted);
		c->capacity = NULL;
		c->posted = NULL;
		sdpu_segment_close(c->queue);
		c->queue = NULL;
		return err != DOCA_SUCCESS ? err : DOCA_ERROR_NO_MEMORY;
	}
	c->slots = slots;
	c->tail = c->head = (int32_t)position;
	c->held = 0;
	c->registered = false;
	c->anonymous_since = 0;
	sdpu_put_u32(c->queue->base + SDPU_CQ_OFF_VERSION, SDPU_CQ_VERSION);
	sdpu_put_u32(c->queue->base + SDPU_CQ_OFF_SLOTS, slots);
	sdpu_store(c->queue->base + SDPU_CQ_POST_TAIL, c->tail);
	sdpu_store(c->queue->base + SDPU_CQ_CLAIM_HEAD, c->head);
	sdpu_store(c->queue->base + SDPU_CQ_OFF_MAGIC, SDPU_CQ_MAGIC);
	/* The entry: plain fields, then the generation, then REQUESTED; this side's context announces it. */
	sdpu_put_u32(e + SDPU_ENTRY_IMM_LEN, c->imm_len);
	sdpu_descriptor_encode(&c->queue->descriptor, e + SDPU_ENTRY_QUEUE);
	sdpu_descriptor_encode(&c->mmap->segment->descriptor, e + SDPU_ENTRY_MEMORY);
	sdpu_add(e + SDPU_ENTRY_GENERATION, 1);
	sdpu_store(e + SDPU_ENTRY_STATE, SDPU_ENDPOINT_REQUESTED);
	sdpu_endpoint_request(&c->ep);
	*running = false;
	return DOCA_SUCCESS;
}

static void consumer_stop(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = of(ctx);
	uint8_t *e = sdpu_entry(&c->ep, c->ep.index);

	if (c->queue == NULL)
		return;
	take_filled(c); /* delivered before the stop: they complete successfully */
	for (;;) {
		int32_t head = sdpu_load(c->queue->base + SDPU_CQ_CLAIM_HEAD);

		if (sdpu_cas(c->queue->base + SDPU_CQ_CLAIM_HEAD, head, c->tail)) {
			uint32_t claimed = (uint32_t)(head - c->head);

			if (claimed > outstanding(c))
				claimed = 0; /* a claim head outside the queue: nothing a producer can still be filling */
			for (uint32_t k = 0; k < claimed; k++) {
				struct doca_comch_consumer_task_post_recv *t = c->posted[(uint32_t)(c->head + (int32_t)k) & (c->slots - 1)];

				t->held = true;
			}
			c->held = claimed;
			break;
		}
	}
	/* The unclaimed rest is flushed by the context; their slots are forgotten with the queue. */
	if (!sdpu_endpoint_connected(&c->ep))
		return;
	for (;;) {
		int32_t state = sdpu_load(e + SDPU_ENTRY_STATE);

		if (state == SDPU_ENDPOINT_CREATED || state == SDPU_ENDPOINT_EXPIRING || state == SDPU_ENDPOINT_EXPIRED)
			break;
		if (sdpu_cas(e + SDPU_ENTRY_STATE, state, SDPU_ENDPOINT_EXPIRING)) {
			sdpu_endpoint_request(&c->ep);
			break;
		}
	}
}

static bool consumer_holds(struct doca_ctx *ctx, struct doca_task *task)
{
	(void)ctx;
	return ((struct doca_comch_consumer_task_post_recv *)task)->held;
}

static bool consumer_stop_complete(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = of(ctx);
	int32_t state;

	if (c->held > 0 && sdpu_endpoint_connected(&c->ep))
		return false;
	if (c->held > 0) {
		/* The connection ended: nobody fills them any more. */
		for (; c->head != c->tail && c->held > 0; c->held--) {
			struct doca_comch_consumer_task_post_recv *t = release_head(c);

			if (t != NULL && t->held) {
				t->held = false;
				sdpu_task_complete(&t->base, ctx->stop_error);
			}
		}
		c->held = 0;
		return false;
	}
	if (!sdpu_endpoint_connected(&c->ep))
		return true;
	state = sdpu_load(sdpu_entry(&c->ep, c->ep.index) + SDPU_ENTRY_STATE);
	return state == SDPU_ENDPOINT_EXPIRED || state == SDPU_ENDPOINT_CREATED;
}

static void consumer_idle(struct doca_ctx *ctx)
{
	struct doca_comch_consumer *c = of(ctx);

	if (sdpu_endpoint_connected(&c->ep))
		sdpu_store(sdpu_entry(&c->ep, c->ep.index) + SDPU_ENTRY_STATE, SDPU_ENDPOINT_CREATED);
	sdpu_io_lock();
	sdpu_io_cancel(c->anonymous_timer);
	c->anonymous_timer = 0;
	sdpu_io_unlock();
	sdpu_endpoint_unpublish(&c->ep);
	sdpu_segment_close(c->queue);
	c->queue = NULL;
	free(c->capacity);
	free(c->posted);
	c->capacity = NULL;
	c->posted = NULL;
}

static const struct sdpu_ctx_ops CONSUMER_OPS = {
	.name = NAME,
	.start = consumer_start,
	.stop = consumer_stop,
	.stop_complete = consumer_stop_complete,
	.idle = consumer_idle,
	.holds = consumer_holds,
};

/* ---- doca_comch_consumer.h ---- */

doca_error_t doca_comch_consumer_create(struct doca_comch_connection *conn, struct doca_mmap *buf_mmap, struct doca_comch_consumer **consumer)
{
	const char *call = "doca_comch_consumer_create";
	struct doca_comch_consumer *c;
	doca_error_t err;

	if (conn == NULL || buf_mmap == NULL || consumer == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_mmap_usable(buf_mmap, call);
	if (err != DOCA_SUCCESS)
		return DOCA_ERROR_INVALID_VALUE;
	if (!(buf_mmap->permissions & DOCA_ACCESS_FLAG_PCI_READ_WRITE)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: the map lacks PCI_READ_WRITE permission; producers on the other side write into it", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = sdpu_endpoint_init(&c->ep, conn, true, &CONSUMER_OPS, call);
	if (err != DOCA_SUCCESS) {
		free(c);
		return err;
	}
	c->mmap = buf_mmap;
	buf_mmap->users++; /* the consumer uses the map until it is destroyed */
	*consumer = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_consumer_destroy(struct doca_comch_consumer *c)
{
	doca_error_t err;

	if (c == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_destroy(&c->ep.ctx);
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_endpoint_release(&c->ep);
	c->mmap->users--;
	free(c);
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_consumer_get_id(const struct doca_comch_consumer *c, uint32_t *id)
{
	if (c == NULL || id == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*id = c->ep.id;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_consumer_get_imm_data_len(const struct doca_comch_consumer *c, uint32_t *imm_data_len)
{
	if (c == NULL || imm_data_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*imm_data_len = c->imm_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_consumer_set_imm_data_len(struct doca_comch_consumer *c, uint32_t imm_data_len)
{
	const char *call = "doca_comch_consumer_set_imm_data_len";
	uint32_t max;
	doca_error_t err;

	if (c == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_idle(&c->ep.ctx, call);
	if (err != DOCA_SUCCESS)
		return err;
	max = sdpu_endpoint_cap(&c->ep, SDPU_CAP_CONSUMER_MAX_IMM_DATA_LEN);
	if (max > SDPU_MAX_IMM)
		max = SDPU_MAX_IMM;
	if (imm_data_len > max) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: imm_data_len %u is more than %u", call, imm_data_len, max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	c->imm_len = imm_data_len;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_comch_consumer_as_ctx(struct doca_comch_consumer *c)
{
	return c == NULL ? NULL : &c->ep.ctx;
}

/* ---- the post-receive task ---- */

static doca_error_t execute(struct doca_task *task)
{
	struct doca_comch_consumer *c = of(task->ctx);
	struct doca_comch_consumer_task_post_recv *t = (struct doca_comch_consumer_task_post_recv *)task;
	doca_error_t err;

	if (!sdpu_endpoint_alive(&c->ep))
		return DOCA_ERROR_NOT_CONNECTED;
	err = sdpu_mmap_usable(c->mmap, "doca_task_submit");
	if (err != DOCA_SUCCESS)
		return err;
	if (t->buf == NULL || t->buf->refs == 0 || t->buf->mmap != c->mmap) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "doca_task_submit: the task's buffer is not a live buffer of the consumer's map");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (outstanding(c) >= c->slots)
		return DOCA_ERROR_NO_MEMORY; /* never: the pool holds at most `slots` tasks */
	t->held = false;
	post(c, t);
	return DOCA_SUCCESS;
}

static void dispatch(struct doca_task *task, bool success)
{
	struct doca_comch_consumer *c = of(task->ctx);
	doca_comch_consumer_task_post_recv_completion_cb_t cb = success ? c->ok : c->err;

	cb((struct doca_comch_consumer_task_post_recv *)task, task->user_data, c->ep.ctx.user_data);
}

doca_error_t doca_comch_consumer_task_post_recv_set_conf(struct doca_comch_consumer *c, doca_comch_consumer_task_post_recv_completion_cb_t ok,
							 doca_comch_consumer_task_post_recv_completion_cb_t err, uint32_t num)
{
	doca_error_t r;

	if (c == NULL || ok == NULL || err == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	r = sdpu_task_conf_set(&c->ep.ctx, TASK_POST_RECV, "post_recv", num, sdpu_endpoint_cap(&c->ep, SDPU_CAP_CONSUMER_MAX_NUM_TASKS),
			       sizeof(struct doca_comch_consumer_task_post_recv), execute, dispatch,
			       "doca_comch_consumer_task_post_recv_set_conf");
	if (r == DOCA_SUCCESS) {
		c->ok = ok;
		c->err = err;
	}
	return r;
}

doca_error_t doca_comch_consumer_task_post_recv_alloc_init(struct doca_comch_consumer *c, struct doca_buf *buf,
							   struct doca_comch_consumer_task_post_recv **task)
{
	const char *call = "doca_comch_consumer_task_post_recv_alloc_init";
	struct doca_task *t;
	uint32_t max;
	doca_error_t err;

	if (c == NULL || buf == NULL || task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf->refs == 0 || buf->mmap != c->mmap) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: the buffer is not in the consumer's memory map", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	max = sdpu_endpoint_cap(&c->ep, SDPU_CAP_CONSUMER_MAX_BUF_SIZE);
	if (buf->len > max) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: a %zu-byte buffer exceeds max_buf_size %u", call, buf->len, max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	err = sdpu_task_alloc(&c->ep.ctx, TASK_POST_RECV, call, &t);
	if (err != DOCA_SUCCESS)
		return err;
	*task = (struct doca_comch_consumer_task_post_recv *)t;
	(*task)->buf = buf;
	(*task)->imm_len = 0;
	(*task)->producer_id = 0;
	(*task)->held = false;
	return DOCA_SUCCESS;
}

struct doca_buf *doca_comch_consumer_task_post_recv_get_buf(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? NULL : task->buf;
}

void doca_comch_consumer_task_post_recv_set_buf(struct doca_comch_consumer_task_post_recv *task, struct doca_buf *buf)
{
	if (task != NULL)
		task->buf = buf;
}

uint32_t doca_comch_consumer_task_post_recv_get_producer_id(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? 0 : task->producer_id;
}

const uint8_t *doca_comch_consumer_task_post_recv_get_imm_data(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL || task->imm_len == 0 ? NULL : task->imm;
}

uint32_t doca_comch_consumer_task_post_recv_get_imm_data_len(const struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? 0 : task->imm_len;
}

struct doca_task *doca_comch_consumer_task_post_recv_as_task(struct doca_comch_consumer_task_post_recv *task)
{
	return task == NULL ? NULL : &task->base;
}
