/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_pe.h's task calls and the pools behind `*_task_*_set_conf`: a pool holds its tasks in one block
 * allocated when it is configured; allocating takes one from its free list (NO_MEMORY when empty),
 * freeing gives it back. A submitted task belongs to the library until its callback runs, inside
 * doca_pe_progress; a refused submission leaves it with its owner, unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/ctx.h"
#include "core/internal.h"
#include "core/pe.h"
#include "fabric/faults.h"

static void run_completion(struct sdpu_work *work)
{
	struct doca_task *task = (struct doca_task *)((char *)work - offsetof(struct doca_task, completion));
	struct doca_ctx *ctx = task->ctx;

	if (task->prev != NULL)
		task->prev->next = task->next;
	else
		ctx->inflight_head = task->next;
	if (task->next != NULL)
		task->next->prev = task->prev;
	else
		ctx->inflight_tail = task->prev;
	task->prev = task->next = NULL;
	ctx->inflight--;
	task->state = SDPU_TASK_COMPLETED;
	task->conf->dispatch(task, task->status == DOCA_SUCCESS);
}

doca_error_t sdpu_task_conf_set(struct doca_ctx *ctx, unsigned type, const char *name, uint32_t num, uint32_t max,
				size_t task_size, doca_error_t (*execute)(struct doca_task *),
				void (*dispatch)(struct doca_task *, bool), const char *call)
{
	struct sdpu_task_conf *conf;
	doca_error_t err = sdpu_ctx_require_idle(ctx, call);

	if (err != DOCA_SUCCESS)
		return err;
	if (num < 1 || num > max) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "%s: num_tasks %u is not in [1, %u]", call, num, max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	conf = calloc(1, sizeof(*conf));
	if (conf == NULL || (conf->pool = calloc(num, task_size)) == NULL) {
		free(conf);
		return DOCA_ERROR_NO_MEMORY;
	}
	conf->type = name;
	conf->capacity = num;
	conf->task_size = task_size;
	conf->execute = execute;
	conf->dispatch = dispatch;
	for (uint32_t i = num; i > 0; i--) {
		struct doca_task *task = (struct doca_task *)(conf->pool + (size_t)(i - 1) * task_size);

		task->ctx = ctx;
		task->conf = conf;
		task->state = SDPU_TASK_FREED;
		task->completion.run = run_completion;
		task->free_next = conf->free_list;
		conf->free_list = task;
	}
	if (ctx->confs[type] != NULL)
		free(ctx->confs[type]->pool);
	free(ctx->confs[type]);
	ctx->confs[type] = conf;
	return DOCA_SUCCESS;
}

doca_error_t sdpu_task_alloc(struct doca_ctx *ctx, unsigned type, const char *call, struct doca_task **out)
{
	struct sdpu_task_conf *conf = ctx->confs[type];
	struct doca_task *task;
	doca_error_t err = sdpu_ctx_require_running(ctx, call);

	if (err != DOCA_SUCCESS)
		return err;
	if (conf == NULL || conf->free_list == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, ctx->ops->name, "%s: %s", call,
			     conf == NULL ? "no tasks of this type were configured before start" : "every task of the pool is allocated");
		return DOCA_ERROR_NO_MEMORY;
	}
	task = conf->free_list;
	conf->free_list = task->free_next;
	conf->live++;
	task->state = SDPU_TASK_ALLOCATED;
	task->status = DOCA_SUCCESS;
	task->user_data.u64 = 0;
	*out = task;
	return DOCA_SUCCESS;
}

void sdpu_task_complete(struct doca_task *task, doca_error_t err)
{
	if (task->state != SDPU_TASK_SUBMITTED || task->completion.queued)
		return;
	task->status = err;
	sdpu_ctx_queue(task->ctx, &task->completion);
}

doca_error_t doca_task_submit(struct doca_task *task)
{
	struct doca_ctx *ctx;
	enum sdpu_task_state previous;
	doca_error_t err;

	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx = task->ctx;
	if (task->state == SDPU_TASK_FREED || task->state == SDPU_TASK_SUBMITTED) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, ctx->ops->name, "doca_task_submit: the %s task is %s", task->conf->type,
			     task->state == SDPU_TASK_FREED ? "freed" : "already submitted");
		return DOCA_ERROR_BAD_STATE;
	}
	err = sdpu_ctx_require_running(ctx, "doca_task_submit");
	if (err == DOCA_SUCCESS && SDPU_FAULTS_ON(SDPU_FAULTS_SUBMIT))
		err = sdpu_fault_at_submit(ctx, task->conf->type);
	if (err != DOCA_SUCCESS)
		return err;
	previous = task->state;
	task->state = SDPU_TASK_SUBMITTED;
	task->status = DOCA_SUCCESS;
	task->next = NULL;
	task->prev = ctx->inflight_tail;
	if (ctx->inflight_tail != NULL)
		ctx->inflight_tail->next = task;
	else
		ctx->inflight_head = task;
	ctx->inflight_tail = task;
	ctx->inflight++;
	err = task->conf->execute(task);
	if (err != DOCA_SUCCESS) {
		if (task->prev != NULL)
			task->prev->next = NULL;
		else
			ctx->inflight_head = NULL;
		ctx->inflight_tail = task->prev;
		task->prev = NULL;
		ctx->inflight--;
		task->state = previous;
	}
	return err;
}

doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags)
{
	(void)flags; /* every submission is flushed at once */
	return doca_task_submit(task);
}

/* Submissions are always validated first here. */
doca_error_t doca_task_try_submit(struct doca_task *task)
{
	return doca_task_submit(task);
}

void doca_task_free(struct doca_task *task)
{
	struct sdpu_task_conf *conf;

	if (task == NULL)
		return;
	conf = task->conf;
	if (task->state == SDPU_TASK_SUBMITTED || task->state == SDPU_TASK_FREED) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, task->ctx->ops->name, "doca_task_free: the %s task is %s; nothing was freed",
			     conf->type, task->state == SDPU_TASK_FREED ? "already freed" : "submitted (free it in its callback)");
		return;
	}
	task->state = SDPU_TASK_FREED;
	task->free_next = conf->free_list;
	conf->free_list = task;
	conf->live--;
	if (task->ctx->state == DOCA_CTX_STATE_STOPPING && task->ctx->pe != NULL)
		sdpu_pe_signal(task->ctx->pe, task->ctx);
}

doca_error_t doca_task_get_status(const struct doca_task *task)
{
	return task == NULL ? DOCA_ERROR_INVALID_VALUE : task->status;
}

void doca_task_set_user_data(struct doca_task *task, union doca_data user_data)
{
	if (task != NULL)
		task->user_data = user_data;
}

union doca_data doca_task_get_user_data(const struct doca_task *task)
{
	union doca_data none = {.u64 = 0};

	return task == NULL ? none : task->user_data;
}

struct doca_ctx *doca_task_get_ctx(const struct doca_task *task)
{
	return task == NULL ? NULL : task->ctx;
}
