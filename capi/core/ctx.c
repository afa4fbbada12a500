/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_ctx.h, and the work and sources behind doca_pe_progress (core/ctx.h). Transitions made by
 * doca_ctx_start and doca_ctx_stop call the state callback before they return, as DOCA's do; the
 * asynchronous ones (STARTING -> RUNNING, STOPPING -> IDLE) happen inside doca_pe_progress. Stopping
 * flushes every in-flight task through its error callback (DOCA_ERROR_SHUTDOWN, or the fatal error that
 * stopped the context), and the context stays STOPPING until every allocated task was freed.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "core/ctx.h"
#include "core/internal.h"
#include "core/pe.h"
#include "fabric/faults.h"

static const char *const STATE_NAMES[] = {"IDLE", "STARTING", "RUNNING", "STOPPING"};

static void run_started(struct sdpu_work *work);
static void run_failed(struct sdpu_work *work);

void sdpu_ctx_init(struct doca_ctx *ctx, const struct sdpu_ctx_ops *ops)
{
	ctx->ops = ops;
	ctx->state = DOCA_CTX_STATE_IDLE;
	ctx->started.run = run_started;
	ctx->failed.run = run_failed;
	sdpu_stat_private(&ctx->stat);
}

static void set_state(struct doca_ctx *ctx, enum doca_ctx_states next)
{
	enum doca_ctx_states prev = ctx->state;

	ctx->state = next;
	sdpu_stat_state(&ctx->stat, (int32_t)next);
	sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, ctx->ops->name, "%s -> %s", STATE_NAMES[prev], STATE_NAMES[next]);
	if (ctx->state_cb != NULL)
		ctx->state_cb(ctx->user_data, ctx, prev, next);
}

void sdpu_ctx_queue(struct doca_ctx *ctx, struct sdpu_work *work)
{
	if (work->queued)
		return;
	work->queued = true;
	work->next = NULL;
	if (ctx->work_tail != NULL)
		ctx->work_tail->next = work;
	else
		ctx->work_head = work;
	ctx->work_tail = work;
	if (ctx->pe != NULL)
		sdpu_pe_signal(ctx->pe, ctx);
}

static struct sdpu_work *pop_work(struct doca_ctx *ctx)
{
	struct sdpu_work *work = ctx->work_head;

	if (work != NULL) {
		ctx->work_head = work->next;
		if (ctx->work_head == NULL)
			ctx->work_tail = NULL;
		work->queued = false;
	}
	return work;
}

static size_t live_tasks(const struct doca_ctx *ctx)
{
	size_t n = 0;

	for (unsigned i = 0; i < SDPU_TASK_TYPES; i++)
		if (ctx->confs[i] != NULL)
			n += ctx->confs[i]->live;
	return n;
}

static bool can_finish_stop(const struct doca_ctx *ctx)
{
	return ctx->state == DOCA_CTX_STATE_STOPPING && ctx->inflight == 0 && live_tasks(ctx) == 0 &&
	       (ctx->ops->stop_complete == NULL || ctx->ops->stop_complete((struct doca_ctx *)ctx));
}

/* What the run used is released first: the state callback may destroy the context. */
static void finish_stop(struct doca_ctx *ctx)
{
	if (ctx->ops->idle != NULL)
		ctx->ops->idle(ctx);
	set_state(ctx, DOCA_CTX_STATE_IDLE);
}

/*
 * Enters STOPPING and flushes; a stop with nothing left to wait for goes straight to IDLE (true: then the
 * state callback may have destroyed the context).
 */
static bool begin_stop(struct doca_ctx *ctx, doca_error_t err, bool direct)
{
	enum doca_ctx_states prev = ctx->state;

	ctx->state = DOCA_CTX_STATE_STOPPING;
	ctx->stop_error = err;
	ctx->leak_reported = false;
	if (ctx->ops->stop != NULL)
		ctx->ops->stop(ctx);
	for (struct doca_task *t = ctx->inflight_head; t != NULL; t = t->next)
		if (ctx->ops->holds == NULL || !ctx->ops->holds(ctx, t))
			sdpu_task_complete(t, err);
	bool idle = direct && ctx->work_head == NULL && can_finish_stop(ctx);

	ctx->state = prev;
	if (idle) {
		finish_stop(ctx);
		return true;
	}
	set_state(ctx, DOCA_CTX_STATE_STOPPING);
	return false;
}

static void run_started(struct sdpu_work *work)
{
	struct doca_ctx *ctx = (struct doca_ctx *)((char *)work - offsetof(struct doca_ctx, started));

	if (ctx->state == DOCA_CTX_STATE_STARTING)
		set_state(ctx, DOCA_CTX_STATE_RUNNING);
}

static void run_failed(struct sdpu_work *work)
{
	struct doca_ctx *ctx = (struct doca_ctx *)((char *)work - offsetof(struct doca_ctx, failed));

	if (ctx->state == DOCA_CTX_STATE_STARTING || ctx->state == DOCA_CTX_STATE_RUNNING)
		begin_stop(ctx, ctx->fail_error, false);
}

void sdpu_ctx_start_completed(struct doca_ctx *ctx)
{
	sdpu_ctx_queue(ctx, &ctx->started);
}

void sdpu_ctx_fail(struct doca_ctx *ctx, doca_error_t err)
{
	if (!ctx->failed.queued)
		ctx->fail_error = err;
	sdpu_ctx_queue(ctx, &ctx->failed);
}

doca_error_t sdpu_ctx_require_idle(struct doca_ctx *ctx, const char *call)
{
	if (ctx->state == DOCA_CTX_STATE_IDLE)
		return DOCA_SUCCESS;
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "%s: the context is %s; configuration is allowed only while IDLE", call,
		     STATE_NAMES[ctx->state]);
	return DOCA_ERROR_BAD_STATE;
}

doca_error_t sdpu_ctx_require_running(struct doca_ctx *ctx, const char *call)
{
	if (ctx->state == DOCA_CTX_STATE_RUNNING)
		return DOCA_SUCCESS;
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "%s: the context is %s, not RUNNING", call, STATE_NAMES[ctx->state]);
	return DOCA_ERROR_BAD_STATE;
}

doca_error_t sdpu_ctx_destroy(struct doca_ctx *ctx)
{
	if (ctx->state != DOCA_CTX_STATE_IDLE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "the context is %s; stop it and wait for IDLE first",
			     STATE_NAMES[ctx->state]);
		return DOCA_ERROR_IN_USE;
	}
	if (ctx->pe != NULL)
		sdpu_pe_detach(ctx->pe, ctx);
	for (unsigned i = 0; i < SDPU_TASK_TYPES; i++) {
		if (ctx->confs[i] != NULL)
			free(ctx->confs[i]->pool);
		free(ctx->confs[i]);
	}
	sdpu_stat_close(&ctx->stat);
	return DOCA_SUCCESS;
}

/* ---- sources ---- */

bool sdpu_source_reserve(struct doca_ctx *ctx, struct sdpu_source *source, bool (*poll)(struct sdpu_source *))
{
	int bit = sdpu_bell_take(ctx->pe->bell);

	source->ctx = ctx;
	source->poll = poll;
	source->attached = false;
	source->ready = false;
	source->bit = bit;
	if (bit < 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "the progress engine already watches %d sources", SDPU_BELL_CAPACITY);
		return false;
	}
	__atomic_store_n(&ctx->pe->sources[bit], source, __ATOMIC_SEQ_CST);
	return true;
}

void sdpu_source_attach(struct sdpu_source *source)
{
	struct doca_ctx *ctx = source->ctx;

	source->attached = true;
	source->prev = NULL;
	source->next = ctx->sources;
	if (ctx->sources != NULL)
		ctx->sources->prev = source;
	ctx->sources = source;
	sdpu_source_ready(source);
}

void sdpu_source_release(struct sdpu_source *source)
{
	struct doca_ctx *ctx = source->ctx;

	if (source->attached) {
		if (source->prev != NULL)
			source->prev->next = source->next;
		else
			ctx->sources = source->next;
		if (source->next != NULL)
			source->next->prev = source->prev;
		source->attached = false;
	}
	if (source->ready) {
		struct sdpu_source **at = &ctx->ready_head, *last = NULL;

		while (*at != source) {
			last = *at;
			at = &(*at)->ready_next;
		}
		*at = source->ready_next;
		if (ctx->ready_tail == source)
			ctx->ready_tail = last;
		source->ready = false;
		ctx->nready--;
	}
	if (source->bit >= 0) {
		__atomic_store_n(&ctx->pe->sources[source->bit], NULL, __ATOMIC_SEQ_CST);
		sdpu_bell_give(ctx->pe->bell, (uint32_t)source->bit);
		source->bit = -1;
	}
}

void sdpu_source_ready(struct sdpu_source *source)
{
	struct doca_ctx *ctx = source->ctx;

	if (!source->attached)
		return;
	if (!source->ready) {
		source->ready = true;
		source->ready_next = NULL;
		if (ctx->ready_tail != NULL)
			ctx->ready_tail->ready_next = source;
		else
			ctx->ready_head = source;
		ctx->ready_tail = source;
		ctx->nready++;
	}
	if (ctx->pe != NULL)
		sdpu_pe_signal(ctx->pe, ctx);
}

void sdpu_source_ring(struct sdpu_source *source)
{
	if (source->bit >= 0)
		sdpu_bell_ring_local(source->ctx->pe->bell, (uint32_t)source->bit);
}

static struct sdpu_source *pop_ready(struct doca_ctx *ctx)
{
	struct sdpu_source *s = ctx->ready_head;

	if (s != NULL) {
		ctx->ready_head = s->ready_next;
		if (ctx->ready_head == NULL)
			ctx->ready_tail = NULL;
		s->ready = false;
		ctx->nready--;
	}
	return s;
}

void sdpu_ctx_poll_every_source(struct doca_ctx *ctx)
{
	for (struct sdpu_source *s = ctx->sources, *next; s != NULL; s = next) {
		next = s->next;
		if (s->poll(s))
			sdpu_source_ready(s);
	}
}

/* Looks at the sources that rang (or at all of them while the engine polls everything) until one queues work. */
static void poll_sources(struct doca_ctx *ctx, bool all)
{
	if (all) {
		while (pop_ready(ctx) != NULL)
			;
		for (struct sdpu_source *s = ctx->sources, *next; s != NULL; s = next) {
			next = s->next;
			s->poll(s);
		}
		return;
	}
	for (size_t n = ctx->nready; n > 0 && ctx->work_head == NULL; n--) {
		struct sdpu_source *s = pop_ready(ctx);

		if (s == NULL)
			break;
		if (s->poll(s))
			sdpu_source_ready(s);
	}
}

bool sdpu_ctx_has_queued_work(const struct doca_ctx *ctx)
{
	return ctx->work_head != NULL || ctx->ready_head != NULL || can_finish_stop(ctx);
}

bool sdpu_ctx_progress_one(struct doca_ctx *ctx, bool all)
{
	struct sdpu_work *work = pop_work(ctx);

	if (work == NULL) {
		poll_sources(ctx, all);
		work = pop_work(ctx);
	}
	if (work != NULL) {
		work->run(work);
		return true;
	}
	if (can_finish_stop(ctx)) {
		finish_stop(ctx);
		return true;
	}
	if (ctx->state == DOCA_CTX_STATE_STOPPING && ctx->inflight == 0 && !ctx->leak_reported && live_tasks(ctx) > 0) {
		ctx->leak_reported = true;
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, ctx->ops->name,
			     "stays STOPPING: %zu task(s) allocated and never freed; free them (doca_task_free) to let it reach IDLE",
			     live_tasks(ctx));
	}
	return false;
}

/* ---- doca_ctx.h ---- */

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	bool running = false;
	doca_error_t err;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (ctx->state != DOCA_CTX_STATE_IDLE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "doca_ctx_start: the context is %s, not IDLE", STATE_NAMES[ctx->state]);
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->pe == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "doca_ctx_start: the context is not connected to a progress engine");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	ctx->stop_error = DOCA_SUCCESS;
	err = SDPU_FAULTS_ON(SDPU_FAULTS_START) ? sdpu_fault_at_start(ctx) : DOCA_SUCCESS;
	if (err == DOCA_SUCCESS)
		err = ctx->ops->start(ctx, &running);
	if (err != DOCA_SUCCESS)
		return err;
	set_state(ctx, running ? DOCA_CTX_STATE_RUNNING : DOCA_CTX_STATE_STARTING);
	sdpu_pe_signal(ctx->pe, ctx);
	return running ? DOCA_SUCCESS : DOCA_ERROR_IN_PROGRESS;
}

doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (ctx->state == DOCA_CTX_STATE_IDLE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "doca_ctx_stop: the context is already IDLE");
		return DOCA_ERROR_BAD_STATE;
	}
	if (ctx->state == DOCA_CTX_STATE_STOPPING)
		return DOCA_ERROR_IN_PROGRESS;
	if (begin_stop(ctx, DOCA_ERROR_SHUTDOWN, true))
		return DOCA_SUCCESS;
	if (ctx->pe != NULL)
		sdpu_pe_signal(ctx->pe, ctx);
	return DOCA_ERROR_IN_PROGRESS;
}

doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state)
{
	if (ctx == NULL || state == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*state = ctx->state;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb)
{
	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx->state_cb = cb;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data)
{
	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data)
{
	if (ctx == NULL || user_data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = ctx->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks)
{
	if (ctx == NULL || num_inflight_tasks == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_inflight_tasks = ctx->inflight;
	return DOCA_SUCCESS;
}

/* Every submission is handed over at once here: there is nothing to flush. */
void doca_ctx_flush_tasks(struct doca_ctx *ctx)
{
	(void)ctx;
}
