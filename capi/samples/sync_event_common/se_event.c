/* SPDX-License-Identifier: Apache-2.0 */
/*
 * se_common.h: the sync event side of the samples, in DOCA's two modes. Synchronous: doca_sync_event_start,
 * then update_set / update_add and wait_eq (busy) or wait_eq_yield, which have no timeout, as in DOCA.
 * Asynchronous (--async): the event as a context on its own progress engine, one task pool per kind
 * (--async-num-tasks), and each update or wait a task the sample submits and progresses to completion.
 */
#include <inttypes.h>

#include <doca_log.h>

#include "se_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT::EVENT);

static void task_finished(struct doca_task *task, union doca_data ctx_user_data)
{
	struct se_sample *s = ctx_user_data.ptr;

	s->task_result = doca_task_get_status(task);
	s->task_done = true;
	doca_task_free(task);
}

static void set_done(struct doca_sync_event_task_notify_set *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	task_finished(doca_sync_event_task_notify_set_as_doca_task(task), ctx_user_data);
}

static void add_done(struct doca_sync_event_task_notify_add *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	task_finished(doca_sync_event_task_notify_add_as_doca_task(task), ctx_user_data);
}

static void wait_done(struct doca_sync_event_task_wait_eq *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	task_finished(doca_sync_event_task_wait_eq_as_doca_task(task), ctx_user_data);
}

static bool task_done(const struct se_sample *s)
{
	return s->task_done;
}

static bool se_idle(const struct se_sample *s)
{
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;

	doca_ctx_get_state(s->se_ctx, &state);
	return state == DOCA_CTX_STATE_IDLE;
}

static doca_error_t start_async(struct se_sample *s)
{
	union doca_data user_data = {.ptr = s};
	uint32_t n = (uint32_t)s->cfg.num_tasks;
	doca_error_t result;

	s->se_ctx = doca_sync_event_as_ctx(s->event);
	if (s->se_ctx == NULL)
		return DOCA_ERROR_BAD_STATE;
	result = doca_pe_create(&s->se_pe);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(s->se_pe, s->se_ctx);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(s->se_ctx, user_data);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_task_notify_set_set_conf(s->event, set_done, set_done, n);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_task_notify_add_set_conf(s->event, add_done, add_done, n);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_task_wait_eq_set_conf(s->event, wait_done, wait_done, n);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(s->se_ctx);
	return result;
}

doca_error_t se_start(struct se_sample *s)
{
	doca_error_t result;

	if (s->cfg.async) {
		result = start_async(s);
	} else {
		result = doca_sync_event_start(s->event);
		s->started = result == DOCA_SUCCESS;
	}
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to start the sync event%s: %s", s->cfg.async ? " as a context" : "", doca_error_get_descr(result));
	return result;
}

/* Submits `task` and progresses the event's engine until its callback ran. */
static doca_error_t run_task(struct se_sample *s, struct doca_task *task, const char *what)
{
	doca_error_t result;

	s->task_done = false;
	result = doca_task_submit(task);
	if (result != DOCA_SUCCESS) {
		doca_task_free(task);
		return result;
	}
	result = se_progress_until(s, s->se_pe, task_done, what);
	return result == DOCA_SUCCESS ? s->task_result : result;
}

doca_error_t se_signal(struct se_sample *s, uint64_t value)
{
	union doca_data none = {0};
	doca_error_t result;

	if (s->cfg.async && s->cfg.atomic) {
		struct doca_sync_event_task_notify_add *task;

		result = doca_sync_event_task_notify_add_alloc_init(s->event, 1, &s->fetched, none, &task);
		if (result == DOCA_SUCCESS)
			result = run_task(s, doca_sync_event_task_notify_add_as_doca_task(task), "the notify_add task");
	} else if (s->cfg.async) {
		struct doca_sync_event_task_notify_set *task;

		result = doca_sync_event_task_notify_set_alloc_init(s->event, value, none, &task);
		if (result == DOCA_SUCCESS)
			result = run_task(s, doca_sync_event_task_notify_set_as_doca_task(task), "the notify_set task");
	} else if (s->cfg.atomic) {
		result = doca_sync_event_update_add(s->event, 1, &s->fetched);
	} else {
		result = doca_sync_event_update_set(s->event, value);
	}
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to signal the sync event: %s", doca_error_get_descr(result));
	else if (s->cfg.atomic)
		DOCA_LOG_INFO("Signaled the remote side: added 1 to %" PRIu64, s->fetched);
	else
		DOCA_LOG_INFO("Signaled the remote side: set %" PRIu64, value);
	return result;
}

doca_error_t se_wait(struct se_sample *s, uint64_t value, bool yield)
{
	union doca_data none = {0};
	doca_error_t result;

	DOCA_LOG_INFO("Waiting for the sync event to be %" PRIu64, value);
	if (s->cfg.async) {
		struct doca_sync_event_task_wait_eq *task;

		result = doca_sync_event_task_wait_eq_alloc_init(s->event, value, UINT64_MAX, none, &task);
		if (result == DOCA_SUCCESS)
			result = run_task(s, doca_sync_event_task_wait_eq_as_doca_task(task), "the remote side's signal");
	} else if (yield) {
		result = doca_sync_event_wait_eq_yield(s->event, value, UINT64_MAX);
	} else {
		result = doca_sync_event_wait_eq(s->event, value, UINT64_MAX);
	}
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to wait for %" PRIu64 ": %s", value, doca_error_get_descr(result));
	else
		DOCA_LOG_INFO("The remote side signaled: the sync event is %" PRIu64, value);
	return result;
}

void se_event_close(struct se_sample *s)
{
	doca_error_t result;

	if (s->se_ctx != NULL && !se_idle(s)) {
		result = doca_ctx_stop(s->se_ctx);
		if (result == DOCA_ERROR_IN_PROGRESS)
			se_progress_until(s, s->se_pe, se_idle, "the sync event context to stop");
		else if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to stop the sync event context: %s", doca_error_get_descr(result));
	}
	if (s->started) {
		result = doca_sync_event_stop(s->event);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to stop the sync event: %s", doca_error_get_descr(result));
	}
	if (s->event != NULL) {
		result = doca_sync_event_destroy(s->event);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to destroy the sync event: %s", doca_error_get_descr(result));
	}
	if (s->se_pe != NULL)
		doca_pe_destroy(s->se_pe);
}
