/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_pe.h: the progress engine, which runs every completion and event callback of the
 * contexts connected to it, and the generic task calls. Written for softdpu from DOCA's public API
 * reference; no NVIDIA text.
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_pe;
struct doca_task;
struct doca_task_batch;
struct doca_devinfo;

enum doca_task_batch_max_tasks_number {
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16 = 0,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_32 = 1,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_64 = 2,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128 = 3,
};

enum doca_event_batch_events_number {
	DOCA_EVENT_BATCH_EVENTS_NUMBER_1 = 0,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_2 = 1,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_4 = 2,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_8 = 3,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_16 = 4,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_32 = 5,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_64 = 6,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_128 = 7,
};

enum doca_task_submit_flag {
	DOCA_TASK_SUBMIT_FLAG_NONE = 0U,
	DOCA_TASK_SUBMIT_FLAG_FLUSH = 1U << 0,
	DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS = 1U << 1,
};

/*
 * SELECTIVE (the default): a progress call looks at the contexts that had work or an event; clear the
 * notification after every wake-up. ALL: every call looks at every context.
 */
enum doca_pe_event_mode {
	DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE = 0,
	DOCA_PE_EVENT_MODE_PROGRESS_ALL = 1,
};

/* A task's completion (or error) callback: the task, its user data and its context's user data. */
typedef void (*doca_task_completion_cb_t)(struct doca_task *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

/* The engine. */
DOCA_STABLE doca_error_t doca_pe_create(struct doca_pe **pe);
DOCA_STABLE doca_error_t doca_pe_destroy(struct doca_pe *pe);
/* Runs at most one callback; 1 if something happened, else 0. Never from inside a callback. */
DOCA_STABLE uint8_t doca_pe_progress(struct doca_pe *pe);
DOCA_STABLE doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);
DOCA_EXPERIMENTAL doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode event_mode);
DOCA_STABLE doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);

/* Sleeping: a file descriptor to wait on, armed by request and consumed by clear. */
DOCA_STABLE doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle);
DOCA_STABLE doca_error_t doca_pe_request_notification(struct doca_pe *pe);
DOCA_STABLE doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

/* Tasks: submitted, they belong to DOCA until their callback runs. */
DOCA_STABLE doca_error_t doca_task_submit(struct doca_task *task);
DOCA_EXPERIMENTAL doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags);
DOCA_STABLE doca_error_t doca_task_try_submit(struct doca_task *task);
DOCA_STABLE void doca_task_free(struct doca_task *task);
DOCA_STABLE doca_error_t doca_task_get_status(const struct doca_task *task);
DOCA_STABLE void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);
DOCA_STABLE union doca_data doca_task_get_user_data(const struct doca_task *task);
DOCA_STABLE struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

/* Task batches. */
DOCA_EXPERIMENTAL doca_error_t doca_task_batch_submit(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL doca_error_t doca_task_batch_try_submit(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL void doca_task_batch_free(struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL doca_error_t doca_task_batch_get_status(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL void doca_task_batch_set_user_data(struct doca_task_batch *task_batch, union doca_data user_data);
DOCA_EXPERIMENTAL union doca_data doca_task_batch_get_user_data(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL struct doca_ctx *doca_task_batch_get_ctx(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL union doca_data doca_task_batch_get_ctx_user_data(const struct doca_task_batch *task_batch);
DOCA_EXPERIMENTAL uint16_t doca_task_batch_get_tasks_num(struct doca_task_batch *task_batch);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
