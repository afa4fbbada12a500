/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every context shares (struct doca_ctx): DOCA's state machine (IDLE -> (STARTING ->) RUNNING ->
 * (STOPPING ->) IDLE), the work its engine runs one unit at a time (task completions, events,
 * transitions), its in-flight tasks and task pools, and its sources: things in shared memory a peer
 * changes and rings the engine's doorbell for (docs/wakeup.md). Everything here runs on the thread that
 * progresses the engine; the helper thread (core/io.h) only rings.
 */
#ifndef SOFTDPU_CAPI_CTX_H_
#define SOFTDPU_CAPI_CTX_H_

#include <stdbool.h>
#include <stddef.h>

#include <doca_ctx.h>
#include <doca_pe.h>

#include "fabric/introspect.h"

/* A unit of work for doca_pe_progress: run once, from the context's FIFO. */
struct sdpu_work {
	struct sdpu_work *next;
	void (*run)(struct sdpu_work *work);
	bool queued;
};

/* Something a peer changes in shared memory; its context polls it when it rang (or always, while polling). */
struct sdpu_source {
	struct doca_ctx *ctx;
	/* Looks at shared memory and queues work; true when it stopped early and must look again. */
	bool (*poll)(struct sdpu_source *source);
	/* The engine's bit for it (-1: none), and whether it is in its context's list yet. */
	int bit;
	bool attached;
	bool ready;
	struct sdpu_source *ready_next;
	struct sdpu_source *prev, *next;
};

enum sdpu_task_state { SDPU_TASK_ALLOCATED, SDPU_TASK_SUBMITTED, SDPU_TASK_COMPLETED, SDPU_TASK_FREED };

struct sdpu_task_conf;

struct doca_task {
	struct doca_ctx *ctx;
	struct sdpu_task_conf *conf;
	union doca_data user_data;
	doca_error_t status;
	enum sdpu_task_state state;
	struct doca_task *prev, *next;
	struct doca_task *free_next;
	struct sdpu_work completion;
};

/* A task type's pool (`*_task_*_set_conf`): its callbacks are called through `dispatch`. */
struct sdpu_task_conf {
	const char *type;
	uint32_t capacity;
	uint32_t live;
	size_t task_size;
	uint8_t *pool;
	struct doca_task *free_list;
	/* Performs a submission (INVALID_VALUE, NOT_CONNECTED...: the task stays the caller's). */
	doca_error_t (*execute)(struct doca_task *task);
	/* Calls the success or error callback the user configured. */
	void (*dispatch)(struct doca_task *task, bool success);
};

#define SDPU_TASK_TYPES 6

/* What a kind of context does at each step. */
struct sdpu_ctx_ops {
	/* "doca_comch_server": what messages call it. */
	const char *name;
	/* Starts its resources; *running false for an asynchronous start (STARTING). An error leaves it IDLE. */
	doca_error_t (*start)(struct doca_ctx *ctx, bool *running);
	/* Begins teardown; in-flight tasks are flushed right after. */
	void (*stop)(struct doca_ctx *ctx);
	/* False while an asynchronous teardown is still running. */
	bool (*stop_complete)(struct doca_ctx *ctx);
	/* IDLE was reached. */
	void (*idle)(struct doca_ctx *ctx);
	/* An in-flight task the stop does not flush: it completes later (a receive a producer is filling). */
	bool (*holds)(struct doca_ctx *ctx, struct doca_task *task);
};

struct doca_ctx {
	const struct sdpu_ctx_ops *ops;
	enum doca_ctx_states state;
	struct doca_pe *pe;
	doca_ctx_state_changed_callback_t state_cb;
	union doca_data user_data;
	struct sdpu_work *work_head, *work_tail;
	struct doca_task *inflight_head, *inflight_tail;
	size_t inflight;
	struct sdpu_task_conf *confs[SDPU_TASK_TYPES];
	doca_error_t stop_error;
	doca_error_t fail_error;
	struct sdpu_work started, failed;
	struct sdpu_source *sources;
	struct sdpu_source *ready_head, *ready_tail;
	size_t nready;
	/* In its engine's ready list. */
	bool queued;
	struct doca_ctx *ready_next;
	bool leak_reported;
	/* Its record for observers (fabric/introspect.h): private until the context opens it; the state follows. */
	struct sdpu_stat stat;
};

void sdpu_ctx_init(struct doca_ctx *ctx, const struct sdpu_ctx_ops *ops);
/* `*_destroy`: IN_USE unless IDLE; leaves the engine and frees the task pools. */
doca_error_t sdpu_ctx_destroy(struct doca_ctx *ctx);

/* BAD_STATE (logged, naming `call`) unless IDLE, or unless RUNNING. */
doca_error_t sdpu_ctx_require_idle(struct doca_ctx *ctx, const char *call);
doca_error_t sdpu_ctx_require_running(struct doca_ctx *ctx, const char *call);

/* Queues work for the engine (nothing if it is queued already). */
void sdpu_ctx_queue(struct doca_ctx *ctx, struct sdpu_work *work);
/* STARTING -> RUNNING inside the next progress. */
void sdpu_ctx_start_completed(struct doca_ctx *ctx);
/* A fatal error: STOPPING inside the next progress, in-flight tasks fail with `err`. */
void sdpu_ctx_fail(struct doca_ctx *ctx, doca_error_t err);

/* Takes an engine bit for `source` (any thread; the engine must be connected); false when none is left. */
bool sdpu_source_reserve(struct doca_ctx *ctx, struct sdpu_source *source, bool (*poll)(struct sdpu_source *));
/* The context's thread takes it in: polled from now on, and once now. */
void sdpu_source_attach(struct sdpu_source *source);
/* Gives its bit back and forgets it (a ring still in flight is dropped). */
void sdpu_source_release(struct sdpu_source *source);
/* Look at it in the next progress (the context's thread). */
void sdpu_source_ready(struct sdpu_source *source);
/* Rings it from the helper thread, as a peer would. */
void sdpu_source_ring(struct sdpu_source *source);

/* `*_task_*_set_conf`: IDLE only (BAD_STATE), 1 <= num <= max (INVALID_VALUE). */
doca_error_t sdpu_task_conf_set(struct doca_ctx *ctx, unsigned type, const char *name, uint32_t num, uint32_t max,
				size_t task_size, doca_error_t (*execute)(struct doca_task *),
				void (*dispatch)(struct doca_task *, bool), const char *call);
/* `*_alloc_init`: RUNNING only (BAD_STATE), NO_MEMORY when the pool is empty or was never configured. */
doca_error_t sdpu_task_alloc(struct doca_ctx *ctx, unsigned type, const char *call, struct doca_task **task);
/* The task's completion, with `err` (DOCA_SUCCESS for success), queued once. */
void sdpu_task_complete(struct doca_task *task, doca_error_t err);

/* For the engine: one unit of work (polling every source when `all`); true if something ran. */
bool sdpu_ctx_progress_one(struct doca_ctx *ctx, bool all);
/* For the engine: whether a progress would find work without polling shared memory. */
bool sdpu_ctx_has_queued_work(const struct doca_ctx *ctx);
/* For the engine: polls every source once, queueing what they hold (the engine's first sleep). */
void sdpu_ctx_poll_every_source(struct doca_ctx *ctx);

#endif /* SOFTDPU_CAPI_CTX_H_ */
