/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch producer (doca_comch_producer.h; docs/protocol.md, "Endpoint table", "Consumer queue"): a
 * send claims the remote consumer's next posted buffer, copies the buffer's data into the consumer's
 * memory (one copy, like DMA), publishes the length, its id and the immediate data, rings the
 * consumer's engine and completes. With no buffer posted it is refused with DOCA_ERROR_AGAIN and nothing
 * changes. Everything the consumer side wrote (its entry, its queue, each posted buffer's place) is
 * checked before anything is written: a consumer that wrote what no queue holds fails that send with
 * CONNECTION_ABORTED, and is looked up afresh next time. No syscall per message unless the consumer sleeps.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "comch/endpoint.h"
#include "core/internal.h"
#include "core/shm.h"
#include "fabric/topology.h"
#include "mmap/mmap.h"

#define NAME "doca_comch_producer"
#define TASK_SEND 0

struct doca_comch_producer_task_send {
	struct doca_task base;
	const struct doca_buf *buf;
	uint32_t consumer_id;
	uint32_t imm_len;
	uint8_t imm[SDPU_MAX_IMM];
};

/* A remote consumer, mapped while its id, generation and state (ANNOUNCED or REGISTERED) stay. */
struct target {
	uint32_t id, index;
	int32_t generation;
	uint32_t slots;
	/*
	 * The post tail as last read: while it is ahead of a fresh claim head the buffers between are posted
	 * (a tail only grows), so a claim need not read the word the consumer writes with every post.
	 */
	int32_t tail_seen;
	uint32_t imm_len;
	struct sdpu_segment *queue, *memory;
	struct sdpu_remote_bell *bell;
	uint32_t bit;
};

struct doca_comch_producer {
	struct sdpu_endpoint ep;
	doca_comch_producer_task_send_completion_cb_t ok, err;
	struct target *targets;
	uint32_t ntargets;
};

static struct doca_comch_producer *of(struct doca_ctx *ctx)
{
	return (struct doca_comch_producer *)ctx;
}

static void forget(struct doca_comch_producer *p, uint32_t k)
{
	struct target *t = &p->targets[k];

	if (t->memory != t->queue)
		sdpu_segment_close(t->memory);
	sdpu_segment_close(t->queue);
	sdpu_remote_bell_close(t->bell);
	p->targets[k] = p->targets[--p->ntargets];
}

static bool live_consumer(int32_t state)
{
	return state == SDPU_ENDPOINT_ANNOUNCED || state == SDPU_ENDPOINT_REGISTERED;
}

static doca_error_t aborted(struct doca_comch_producer *p, uint32_t id, const char *what)
{
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "producer %u: consumer %u %s; the send fails with DOCA_ERROR_CONNECTION_ABORTED", p->ep.id, id, what);
	return DOCA_ERROR_CONNECTION_ABORTED;
}

/* Maps consumer `id` of the other side (protocol.md, "Producer lookup"). */
static doca_error_t lookup(struct doca_comch_producer *p, uint32_t id, struct target *t)
{
	const char *call = "doca_task_submit";
	uint32_t other = p->ep.server_side ? 1 : 0;
	struct sdpu_descriptor qd, md;
	struct sdpu_bell_ref ref;
	uint8_t *e = NULL, *q;
	uint32_t slots;
	doca_error_t err;
	int32_t state = SDPU_ENDPOINT_FREE;

	memset(t, 0, sizeof(*t));
	for (uint32_t i = 0; i < p->ep.layout.entries; i++) {
		uint8_t *x = sdpu_entry(&p->ep, i);
		int32_t s = sdpu_load(x + SDPU_ENTRY_STATE);

		if (s != SDPU_ENDPOINT_FREE && s != SDPU_ENDPOINT_RESERVING && sdpu_get_u32(x + SDPU_ENTRY_KIND) == SDPU_KIND_CONSUMER &&
		    sdpu_get_u32(x + SDPU_ENTRY_ID) == id) {
			e = x;
			t->index = i;
			state = s;
			break;
		}
	}
	if (e == NULL || sdpu_get_u32(e + SDPU_ENTRY_SIDE) != other || !live_consumer(state)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: there is no live consumer %u on the other side of the connection", call, id);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	t->id = id;
	t->generation = sdpu_load(e + SDPU_ENTRY_GENERATION);
	t->imm_len = sdpu_get_u32(e + SDPU_ENTRY_IMM_LEN);
	if (sdpu_descriptor_decode(e + SDPU_ENTRY_QUEUE, &qd) != DOCA_SUCCESS || sdpu_descriptor_decode(e + SDPU_ENTRY_MEMORY, &md) != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: consumer %u's entry names a segment no process could have", call, id);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (md.pid != qd.pid) {
		char what[96];

		snprintf(what, sizeof(what), "names memory of pid %u for a queue of pid %u", md.pid, qd.pid);
		return aborted(p, id, what);
	}
	err = sdpu_segment_open(&qd, "consumer", call, &t->queue);
	if (err != DOCA_SUCCESS)
		return err;
	if (sdpu_descriptor_equal(&md, &qd))
		t->memory = t->queue;
	else if ((err = sdpu_segment_open(&md, "mem", call, &t->memory)) != DOCA_SUCCESS) {
		sdpu_segment_close(t->queue);
		return err;
	}
	q = t->queue->base;
	slots = sdpu_get_u32(q + SDPU_CQ_OFF_SLOTS);
	if ((uint32_t)sdpu_load(q + SDPU_CQ_OFF_MAGIC) != SDPU_CQ_MAGIC || sdpu_get_u32(q + SDPU_CQ_OFF_VERSION) != SDPU_CQ_VERSION || slots == 0 ||
	    (slots & (slots - 1)) != 0 || SDPU_CQ_SLOTS + (uint64_t)slots * SDPU_CQ_SLOT_SIZE > t->queue->size) {
		if (t->memory != t->queue)
			sdpu_segment_close(t->memory);
		sdpu_segment_close(t->queue);
		return aborted(p, id, "has a queue that is not a consumer queue of version 2 (magic, version or slot count)");
	}
	t->slots = slots;
	t->tail_seen = sdpu_load(q + SDPU_CQ_CLAIM_HEAD); /* nothing known posted: the first claim reads the tail */
	if (sdpu_bell_ref_read(e + SDPU_ENTRY_BELL, &ref) == 1 && sdpu_remote_bell_open(&ref, &t->bell) == DOCA_SUCCESS)
		t->bit = ref.bit;
	return DOCA_SUCCESS;
}

/* The cached target for `id` if it is still that consumer, else a fresh lookup. */
static doca_error_t target(struct doca_comch_producer *p, uint32_t id, struct target **out)
{
	struct target fresh, *grown;
	doca_error_t err;

	for (uint32_t k = 0; k < p->ntargets; k++) {
		struct target *t = &p->targets[k];
		uint8_t *e;

		if (t->id != id)
			continue;
		e = sdpu_entry(&p->ep, t->index);
		if (live_consumer(sdpu_load(e + SDPU_ENTRY_STATE)) && sdpu_get_u32(e + SDPU_ENTRY_ID) == id &&
		    sdpu_load(e + SDPU_ENTRY_GENERATION) == t->generation) {
			*out = t;
			return DOCA_SUCCESS;
		}
		forget(p, k);
		break;
	}
	err = lookup(p, id, &fresh);
	if (err != DOCA_SUCCESS)
		return err;
	grown = realloc(p->targets, (p->ntargets + 1) * sizeof(*grown));
	if (grown == NULL) {
		if (fresh.memory != fresh.queue)
			sdpu_segment_close(fresh.memory);
		sdpu_segment_close(fresh.queue);
		sdpu_remote_bell_close(fresh.bell);
		return DOCA_ERROR_NO_MEMORY;
	}
	p->targets = grown;
	p->targets[p->ntargets] = fresh;
	*out = &p->targets[p->ntargets++];
	return DOCA_SUCCESS;
}

static doca_error_t send_one(struct doca_comch_producer *p, struct doca_comch_producer_task_send *task)
{
	const char *call = "doca_task_submit";
	size_t length = task->buf->data_len;
	struct target *t;
	doca_error_t err;

	if (!sdpu_endpoint_alive(&p->ep)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: the producer's connection ended", call);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	err = target(p, task->consumer_id, &t);
	if (err != DOCA_SUCCESS)
		return err;
	if (task->imm_len > t->imm_len) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: immediate data of %u bytes exceeds consumer %u's imm_data_len %u", call, task->imm_len,
			     t->id, t->imm_len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	uint8_t *q = t->queue->base;

	for (;;) {
		int32_t head = sdpu_load(q + SDPU_CQ_CLAIM_HEAD), tail;
		int32_t waiting = (int32_t)((uint32_t)t->tail_seen - (uint32_t)head);
		uint8_t *s;
		uint32_t capacity;
		double offset;

		/* A tail read before this head and still ahead of it bounds what is posted from head on. */
		if (waiting <= 0 || (uint32_t)waiting > t->slots) {
			tail = sdpu_load(q + SDPU_CQ_POST_TAIL);
			if (sdpu_load(q + SDPU_CQ_CLAIM_HEAD) != head)
				continue; /* another producer claimed meanwhile: a stale pair proves nothing */
			t->tail_seen = tail;
			waiting = (int32_t)((uint32_t)tail - (uint32_t)head);
		}
		if (waiting == 0)
			return DOCA_ERROR_AGAIN;
		if (waiting < 0 || (uint32_t)waiting > t->slots) {
			char what[96];
			uint32_t id = t->id;

			snprintf(what, sizeof(what), "says %d buffers are posted in %u slots", waiting, t->slots);
			forget(p, (uint32_t)(t - p->targets));
			return aborted(p, id, what);
		}
		s = q + SDPU_CQ_SLOTS + (size_t)((uint32_t)head & (t->slots - 1)) * SDPU_CQ_SLOT_SIZE;
		capacity = sdpu_get_u32(s + SDPU_CQ_S_CAPACITY);
		offset = sdpu_get_f64(s + SDPU_CQ_S_OFFSET);
		if (!sdpu_safe_integer(offset) || offset < SDPU_SEGMENT_HEADER || offset + capacity > (double)t->memory->size) {
			char what[128];
			uint32_t id = t->id;

			snprintf(what, sizeof(what), "posted a %u-byte buffer at byte %.17g of a %zu-byte segment", capacity, offset, t->memory->size);
			forget(p, (uint32_t)(t - p->targets));
			return aborted(p, id, what);
		}
		if (length > capacity) {
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: a %zu-byte payload exceeds consumer %u's next posted buffer (%u bytes)", call, length,
				     t->id, capacity);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (!sdpu_cas(q + SDPU_CQ_CLAIM_HEAD, head, head + 1))
			continue;
		sdpu_put_u32(s + SDPU_CQ_S_CLAIMER, p->ep.index + 1);
		sdpu_store(s + SDPU_CQ_S_STATE, SDPU_CQ_CLAIMED);
		memcpy(t->memory->base + (size_t)offset, task->buf->data, length);
		sdpu_put_u32(s + SDPU_CQ_S_LENGTH, (uint32_t)length);
		sdpu_put_u32(s + SDPU_CQ_S_PRODUCER, p->ep.id);
		sdpu_put_u32(s + SDPU_CQ_S_IMM_LEN, task->imm_len);
		memcpy(s + SDPU_CQ_S_IMM, task->imm, task->imm_len);
		sdpu_store(s + SDPU_CQ_S_STATE, SDPU_CQ_FILLED);
		if (t->bell != NULL)
			sdpu_remote_bell_ring(t->bell, t->bit);
		sdpu_task_complete(&task->base, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
}

/* Rung when the connection ends: fail. */
static bool poll_producer(struct sdpu_source *source)
{
	struct doca_comch_producer *p = (struct doca_comch_producer *)((char *)source - offsetof(struct sdpu_endpoint, source));

	if (p->ep.ctx.state != DOCA_CTX_STATE_IDLE)
		sdpu_endpoint_alive(&p->ep);
	return false;
}

static doca_error_t producer_start(struct doca_ctx *ctx, bool *running)
{
	struct doca_comch_producer *p = of(ctx);

	if (ctx->confs[TASK_SEND] == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "doca_ctx_start: set the send task configuration (doca_comch_producer_task_send_set_conf) first");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!sdpu_endpoint_connected(&p->ep)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "doca_ctx_start: the producer's connection ended");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	*running = true;
	return sdpu_endpoint_publish(&p->ep, poll_producer);
}

static void producer_idle(struct doca_ctx *ctx)
{
	struct doca_comch_producer *p = of(ctx);

	while (p->ntargets > 0)
		forget(p, p->ntargets - 1);
	free(p->targets);
	p->targets = NULL;
	sdpu_endpoint_unpublish(&p->ep);
}

static const struct sdpu_ctx_ops PRODUCER_OPS = {
	.name = NAME,
	.start = producer_start,
	.idle = producer_idle,
};

/* ---- doca_comch_producer.h ---- */

doca_error_t doca_comch_producer_create(struct doca_comch_connection *conn, struct doca_comch_producer **producer)
{
	struct doca_comch_producer *p;
	doca_error_t err;

	if (conn == NULL || producer == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = sdpu_endpoint_init(&p->ep, conn, false, &PRODUCER_OPS, "doca_comch_producer_create");
	if (err != DOCA_SUCCESS) {
		free(p);
		return err;
	}
	*producer = p;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *p)
{
	doca_error_t err;

	if (p == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_destroy(&p->ep.ctx);
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_endpoint_release(&p->ep);
	free(p);
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_producer_get_id(const struct doca_comch_producer *p, uint32_t *id)
{
	if (p == NULL || id == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*id = p->ep.id;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *p)
{
	return p == NULL ? NULL : &p->ep.ctx;
}

/* ---- the send task ---- */

static doca_error_t execute(struct doca_task *task)
{
	return send_one(of(task->ctx), (struct doca_comch_producer_task_send *)task);
}

static void dispatch(struct doca_task *task, bool success)
{
	struct doca_comch_producer *p = of(task->ctx);
	doca_comch_producer_task_send_completion_cb_t cb = success ? p->ok : p->err;

	cb((struct doca_comch_producer_task_send *)task, task->user_data, p->ep.ctx.user_data);
}

doca_error_t doca_comch_producer_task_send_set_conf(struct doca_comch_producer *p, doca_comch_producer_task_send_completion_cb_t ok,
						    doca_comch_producer_task_send_completion_cb_t err, uint32_t num)
{
	doca_error_t r;

	if (p == NULL || ok == NULL || err == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	r = sdpu_task_conf_set(&p->ep.ctx, TASK_SEND, "send", num, sdpu_endpoint_cap(&p->ep, SDPU_CAP_PRODUCER_MAX_NUM_TASKS),
			       sizeof(struct doca_comch_producer_task_send), execute, dispatch, "doca_comch_producer_task_send_set_conf");
	if (r == DOCA_SUCCESS) {
		p->ok = ok;
		p->err = err;
	}
	return r;
}

static doca_error_t check_send(struct doca_comch_producer *p, const struct doca_buf *buf, uint32_t imm_len, const char *call)
{
	uint32_t max_buf = sdpu_endpoint_cap(&p->ep, SDPU_CAP_PRODUCER_MAX_BUF_SIZE);
	uint32_t max_imm = sdpu_endpoint_cap(&p->ep, SDPU_CAP_CONSUMER_MAX_IMM_DATA_LEN);

	if (max_imm > SDPU_MAX_IMM)
		max_imm = SDPU_MAX_IMM;
	if (buf == NULL || buf->refs == 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: the buffer is not a live doca_buf", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (buf->data_len > max_buf) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: a %zu-byte payload exceeds max_buf_size %u", call, buf->data_len, max_buf);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (imm_len > max_imm) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "%s: immediate data of %u bytes exceeds %u", call, imm_len, max_imm);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *p, const struct doca_buf *buf, uint8_t *imm_data,
						      uint32_t imm_data_len, uint32_t consumer_id,
						      struct doca_comch_producer_task_send **task)
{
	const char *call = "doca_comch_producer_task_send_alloc_init";
	struct doca_task *t;
	doca_error_t err;

	if (p == NULL || task == NULL || (imm_data == NULL && imm_data_len > 0))
		return DOCA_ERROR_INVALID_VALUE;
	err = check_send(p, buf, imm_data_len, call);
	if (err != DOCA_SUCCESS)
		return err;
	err = sdpu_task_alloc(&p->ep.ctx, TASK_SEND, call, &t);
	if (err != DOCA_SUCCESS)
		return err;
	*task = (struct doca_comch_producer_task_send *)t;
	(*task)->buf = buf;
	(*task)->consumer_id = consumer_id;
	(*task)->imm_len = imm_data_len;
	if (imm_data_len > 0)
		memcpy((*task)->imm, imm_data, imm_data_len);
	return DOCA_SUCCESS;
}

const struct doca_buf *doca_comch_producer_task_send_get_buf(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? NULL : task->buf;
}

void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf)
{
	if (task != NULL && buf != NULL)
		task->buf = buf;
}

uint32_t doca_comch_producer_task_send_get_consumer_id(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? 0 : task->consumer_id;
}

void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task, const uint32_t consumer_id)
{
	if (task != NULL)
		task->consumer_id = consumer_id;
}

uint8_t *doca_comch_producer_task_send_get_imm_data(const struct doca_comch_producer_task_send *task)
{
	return task == NULL || task->imm_len == 0 ? NULL : (uint8_t *)task->imm;
}

uint32_t doca_comch_producer_task_send_get_imm_data_len(const struct doca_comch_producer_task_send *task)
{
	return task == NULL ? 0 : task->imm_len;
}

void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task, uint8_t *imm_data, uint32_t imm_data_len)
{
	if (task == NULL || imm_data_len > SDPU_MAX_IMM || (imm_data == NULL && imm_data_len > 0)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, NAME, "doca_comch_producer_task_send_set_imm_data: at most %d bytes of immediate data", SDPU_MAX_IMM);
		return;
	}
	task->imm_len = imm_data_len;
	if (imm_data_len > 0)
		memcpy(task->imm, imm_data, imm_data_len);
}

struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task)
{
	return task == NULL ? NULL : &task->base;
}
