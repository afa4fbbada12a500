/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sync event as a context (doca_sync_event_as_ctx): its asynchronous tasks on a progress engine. Get,
 * notify_set and notify_add act at submission and complete in the next progress; a wait task completes
 * at once if its condition holds, else the context says it waits (its entry of the waiter table, with
 * the engine's bell) before a last look at the counter, so an update in between either is seen or rings.
 * The engine's bit is polled when rung: the waits whose condition holds complete. An imported handle's
 * exporter is watched by the helper thread's liveness cadence (a process killed with SIGKILL rings
 * nothing); once it destroyed the event or died, the context fails with NOT_CONNECTED, after the waits
 * its last value satisfies have completed. Task configuration after start is NOT_PERMITTED, as DOCA says.
 */
#include <stdlib.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/io.h"
#include "core/pe.h"
#include "fabric/topology.h"
#include "syncevent/syncevent.h"

#define SOURCE "sync_event"
/* Task pools hold up to this many tasks of each kind (the TypeScript side's MAX_TASKS). */
#define MAX_TASKS (1u << 16)

static const char *const KIND_NAMES[] = {"get", "notify_set", "notify_add", "wait_eq", "wait_neq"};
static const enum sdpu_cap KIND_CAPS[] = {SDPU_CAP_SE_TASK_GET, SDPU_CAP_SE_TASK_NOTIFY_SET, SDPU_CAP_SE_TASK_NOTIFY_ADD,
					  SDPU_CAP_SE_TASK_WAIT_EQ, SDPU_CAP_SE_TASK_WAIT_NEQ};

static struct doca_sync_event *event_of(struct doca_ctx *ctx)
{
	return (struct doca_sync_event *)ctx;
}

/* ---- the waits ---- */

static bool holds(const struct sdpu_se_task_wait *t, uint64_t value)
{
	uint64_t v = value & t->mask;

	return t->neq ? v != t->wait_val : v == t->wait_val;
}

/* Completes the pending waits the counter's value satisfies now; says it no longer waits once none is left. */
static void complete_holding(struct doca_sync_event *ev)
{
	uint64_t value = sdpu_se_load(ev);

	for (struct sdpu_se_task_wait **at = &ev->pending; *at != NULL;) {
		struct sdpu_se_task_wait *t = *at;

		if (!holds(t, value)) {
			at = &t->pending_next;
			continue;
		}
		*at = t->pending_next;
		ev->npending--;
		sdpu_task_complete(&t->task, DOCA_SUCCESS);
	}
	if (ev->npending == 0)
		sdpu_se_waiters_want(&ev->waiters, false, NULL);
	sdpu_stat_u64(&ev->ctx.stat, 0, value);
	ev->ctx.stat.c[1] = (double)ev->npending;
}

/* Rung by updates, the event's end or the exporter's death (the helper thread): memory only, no syscall. */
static bool poll_event(struct sdpu_source *source)
{
	struct doca_sync_event *ev = (struct doca_sync_event *)((char *)source - offsetof(struct doca_sync_event, source));
	bool gone;

	if (ev->ctx.state != DOCA_CTX_STATE_RUNNING)
		return false;
	gone = !sdpu_se_valid(ev, false);
	/* The exporter's last updates came before it left (the counter stays mapped here): waits they satisfied complete. */
	if (ev->npending > 0)
		complete_holding(ev);
	if (gone) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the exporting process (pid %u) destroyed the event or exited; the context fails",
			     ev->control->descriptor.pid);
		sdpu_ctx_fail(&ev->ctx, DOCA_ERROR_NOT_CONNECTED);
	}
	return false;
}

/* The helper thread (io lock held): the exporter is gone, and cannot ring. */
static void on_exporter_dead(void *arg)
{
	struct doca_sync_event *ev = arg;

	ev->exporter_watch = 0;
	__atomic_store_n(&ev->exporter_dead, 1, __ATOMIC_SEQ_CST);
	sdpu_source_ring(&ev->source);
}

/* ---- the context's steps ---- */

static doca_error_t se_start(struct doca_ctx *ctx, bool *running)
{
	struct doca_sync_event *ev = event_of(ctx);
	doca_error_t err;

	if (ev->sync_started || ev->mode == SDPU_SE_MODE_SYNC) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_ctx_start: the event was started with doca_sync_event_start; it cannot run as a context");
		return DOCA_ERROR_BAD_STATE;
	}
	err = sdpu_se_prepare(ev, SDPU_SE_MODE_CTX, "doca_ctx_start");
	if (err != DOCA_SUCCESS)
		return err;
	if (ev->imported) {
		err = sdpu_io_start();
		if (err != DOCA_SUCCESS)
			return err;
	}
	if (!sdpu_source_reserve(ctx, &ev->source, poll_event))
		return DOCA_ERROR_NO_MEMORY;
	ev->source_reserved = true;
	if (ev->imported) {
		sdpu_io_lock();
		ev->exporter_watch = sdpu_io_watch_process(ev->control->descriptor.pid, (uint64_t)ev->control->descriptor.start,
							   on_exporter_dead, ev);
		sdpu_io_unlock();
	}
	sdpu_source_attach(&ev->source);
	*running = true;
	return DOCA_SUCCESS;
}

static void se_stop(struct doca_ctx *ctx)
{
	struct doca_sync_event *ev = event_of(ctx);

	ev->pending = NULL; /* the context flushes them next */
	ev->npending = 0;
	ev->ctx.stat.c[1] = 0;
	sdpu_se_waiters_release(&ev->waiters);
	sdpu_io_lock();
	sdpu_io_unwatch(ev->exporter_watch);
	ev->exporter_watch = 0;
	sdpu_io_unlock();
}

static void se_idle(struct doca_ctx *ctx)
{
	struct doca_sync_event *ev = event_of(ctx);

	if (ev->source_reserved)
		sdpu_source_release(&ev->source);
	ev->source_reserved = false;
}

const struct sdpu_ctx_ops sdpu_se_ctx_ops = {
	.name = "doca_sync_event",
	.start = se_start,
	.stop = se_stop,
	.idle = se_idle,
};

/* ---- task pools ---- */

static doca_error_t execute(struct doca_task *task);

static void dispatch(struct doca_task *task, bool success)
{
	struct doca_sync_event *ev = event_of(task->ctx);
	unsigned kind;

	for (kind = 0; kind < SDPU_SE_TASK_KINDS; kind++)
		if (ev->ctx.confs[kind] == task->conf)
			break;
	if (kind == SDPU_SE_TASK_KINDS)
		return;
	void (*cb)(void *, union doca_data, union doca_data) = success ? ev->ok_cb[kind] : ev->err_cb[kind];

	switch (kind) {
	case SDPU_SE_TASK_GET:
		((doca_sync_event_task_get_completion_cb_t)(void (*)(void))cb)((struct doca_sync_event_task_get *)task, task->user_data,
									       ev->ctx.user_data);
		break;
	case SDPU_SE_TASK_NOTIFY_SET:
		((doca_sync_event_task_notify_set_completion_cb_t)(void (*)(void))cb)((struct doca_sync_event_task_notify_set *)task,
										      task->user_data, ev->ctx.user_data);
		break;
	case SDPU_SE_TASK_NOTIFY_ADD:
		((doca_sync_event_task_notify_add_completion_cb_t)(void (*)(void))cb)((struct doca_sync_event_task_notify_add *)task,
										      task->user_data, ev->ctx.user_data);
		break;
	case SDPU_SE_TASK_WAIT_EQ:
		((doca_sync_event_task_wait_eq_completion_cb_t)(void (*)(void))cb)((struct doca_sync_event_task_wait_eq *)task,
										   task->user_data, ev->ctx.user_data);
		break;
	default:
		((doca_sync_event_task_wait_neq_completion_cb_t)(void (*)(void))cb)((struct doca_sync_event_task_wait_neq *)task,
										    task->user_data, ev->ctx.user_data);
		break;
	}
}

static doca_error_t set_conf(struct doca_sync_event *ev, unsigned kind, void (*ok)(void), void (*err)(void), uint32_t num, const char *call)
{
	static const size_t SIZES[] = {sizeof(struct doca_sync_event_task_get), sizeof(struct doca_sync_event_task_notify_set),
				       sizeof(struct doca_sync_event_task_notify_add), sizeof(struct sdpu_se_task_wait),
				       sizeof(struct sdpu_se_task_wait)};
	doca_error_t r;

	if (ev == NULL || ok == NULL || err == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (ev->ctx.state != DOCA_CTX_STATE_IDLE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the context is not IDLE; tasks are configured before start", call);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ev->cap_info != NULL && ev->cap_info->caps.value[KIND_CAPS[kind]] == 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the device does not support the %s task (its topology says so)", call,
			     KIND_NAMES[kind]);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	r = sdpu_task_conf_set(&ev->ctx, kind, KIND_NAMES[kind], num, MAX_TASKS, SIZES[kind], execute, dispatch, call);
	if (r == DOCA_SUCCESS) {
		ev->ok_cb[kind] = (void (*)(void *, union doca_data, union doca_data))ok;
		ev->err_cb[kind] = (void (*)(void *, union doca_data, union doca_data))err;
	}
	return r;
}

/* The async wait tasks' mask: 0, or 1, 2, 4 or 8 consecutive 0xff bytes aligned to their size (as the TypeScript side requires). */
static bool task_mask_ok(uint64_t mask)
{
	unsigned shift = 0;
	uint64_t run;

	if (mask == 0)
		return true;
	while (((mask >> shift) & 0xff) == 0)
		shift += 8;
	run = mask >> shift;
	unsigned bytes = run == 0xff ? 1 : run == 0xffff ? 2 : run == 0xffffffffu ? 4 : run == UINT64_MAX ? 8 : 0;

	return bytes != 0 && (shift / 8) % bytes == 0;
}

static doca_error_t check_mask(uint64_t mask, const char *call)
{
	if (task_mask_ok(mask))
		return DOCA_SUCCESS;
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: mask 0x%llx is not 0, 1, 2, 4 or 8 consecutive 0xff bytes (aligned to their size)", call,
		     (unsigned long long)mask);
	return DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t wait_submitted(struct doca_sync_event *ev, struct sdpu_se_task_wait *t)
{
	const char *call = "doca_task_submit";
	struct sdpu_bell_ref ref;

	if (holds(t, sdpu_se_load(ev))) {
		sdpu_task_complete(&t->task, DOCA_SUCCESS);
		return DOCA_SUCCESS;
	}
	ref = sdpu_bell_ref_of(ev->ctx.pe->bell, (uint32_t)ev->source.bit);
	if (!sdpu_se_waiters_want(&ev->waiters, true, &ref)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %u engines already wait on this sync event", call, ev->waiters.capacity);
		return DOCA_ERROR_NO_MEMORY;
	}
	/* Said before this look: an update in between is seen here, or rings. */
	if (holds(t, sdpu_se_load(ev))) {
		sdpu_task_complete(&t->task, DOCA_SUCCESS);
		if (ev->npending == 0)
			sdpu_se_waiters_want(&ev->waiters, false, NULL);
		return DOCA_SUCCESS;
	}
	t->pending_next = ev->pending;
	ev->pending = t;
	ev->npending++;
	ev->ctx.stat.c[1] = (double)ev->npending;
	return DOCA_SUCCESS;
}

static doca_error_t execute(struct doca_task *task)
{
	struct doca_sync_event *ev = event_of(task->ctx);
	const char *call = "doca_task_submit";
	unsigned kind;
	doca_error_t err;

	for (kind = 0; kind < SDPU_SE_TASK_KINDS; kind++)
		if (ev->ctx.confs[kind] == task->conf)
			break;
	if (kind == SDPU_SE_TASK_WAIT_EQ || kind == SDPU_SE_TASK_WAIT_NEQ) {
		err = check_mask(((struct sdpu_se_task_wait *)task)->mask, call);
		if (err != DOCA_SUCCESS)
			return err;
	}
	if (kind == SDPU_SE_TASK_GET && ((struct doca_sync_event_task_get *)task)->ret_val_ptr == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the get task has no ret_val_ptr", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	err = sdpu_se_usable(ev, true, call);
	if (err != DOCA_SUCCESS)
		return err;
	switch (kind) {
	case SDPU_SE_TASK_GET:
		*((struct doca_sync_event_task_get *)task)->ret_val_ptr = sdpu_se_load(ev);
		sdpu_stat_u64(&ev->ctx.stat, 0, *((struct doca_sync_event_task_get *)task)->ret_val_ptr);
		break;
	case SDPU_SE_TASK_NOTIFY_SET:
		sdpu_se_update(ev, false, ((struct doca_sync_event_task_notify_set *)task)->set_val);
		break;
	case SDPU_SE_TASK_NOTIFY_ADD: {
		struct doca_sync_event_task_notify_add *t = (struct doca_sync_event_task_notify_add *)task;
		uint64_t before = sdpu_se_update(ev, true, t->inc_val);

		if (t->fetched_val_ptr != NULL)
			*t->fetched_val_ptr = before;
		break;
	}
	default:
		return wait_submitted(ev, (struct sdpu_se_task_wait *)task);
	}
	sdpu_task_complete(task, DOCA_SUCCESS);
	return DOCA_SUCCESS;
}

static doca_error_t alloc(struct doca_sync_event *ev, unsigned kind, union doca_data user_data, const char *call, struct doca_task **out)
{
	doca_error_t err;

	if (ev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_task_alloc(&ev->ctx, kind, call, out);
	if (err == DOCA_SUCCESS)
		(*out)->user_data = user_data;
	return err;
}

/* ---- get ---- */

doca_error_t doca_sync_event_task_get_set_conf(struct doca_sync_event *event, doca_sync_event_task_get_completion_cb_t completion_cb,
					       doca_sync_event_task_get_completion_cb_t error_cb, uint32_t num_tasks)
{
	return set_conf(event, SDPU_SE_TASK_GET, (void (*)(void))completion_cb, (void (*)(void))error_cb, num_tasks,
			"doca_sync_event_task_get_set_conf");
}

doca_error_t doca_sync_event_task_get_alloc_init(struct doca_sync_event *event, uint64_t *ret_val_ptr, union doca_data user_data,
						 struct doca_sync_event_task_get **task)
{
	struct doca_task *t;
	doca_error_t err;

	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = alloc(event, SDPU_SE_TASK_GET, user_data, "doca_sync_event_task_get_alloc_init", &t);
	if (err != DOCA_SUCCESS)
		return err;
	((struct doca_sync_event_task_get *)t)->ret_val_ptr = ret_val_ptr;
	*task = (struct doca_sync_event_task_get *)t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_sync_event_task_get_as_doca_task(struct doca_sync_event_task_get *task)
{
	return task == NULL ? NULL : &task->task;
}

void doca_sync_event_task_get_set_ret_val_ptr(struct doca_sync_event_task_get *task, uint64_t *ret_val_ptr)
{
	if (task != NULL)
		task->ret_val_ptr = ret_val_ptr;
}

uint64_t *doca_sync_event_task_get_get_ret_val_ptr(const struct doca_sync_event_task_get *task)
{
	return task == NULL ? NULL : task->ret_val_ptr;
}

/* ---- notify_set ---- */

doca_error_t doca_sync_event_task_notify_set_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_set_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_set_completion_cb_t error_cb, uint32_t num_tasks)
{
	return set_conf(event, SDPU_SE_TASK_NOTIFY_SET, (void (*)(void))completion_cb, (void (*)(void))error_cb, num_tasks,
			"doca_sync_event_task_notify_set_set_conf");
}

doca_error_t doca_sync_event_task_notify_set_alloc_init(struct doca_sync_event *event, uint64_t set_val, union doca_data user_data,
							struct doca_sync_event_task_notify_set **task)
{
	struct doca_task *t;
	doca_error_t err;

	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = alloc(event, SDPU_SE_TASK_NOTIFY_SET, user_data, "doca_sync_event_task_notify_set_alloc_init", &t);
	if (err != DOCA_SUCCESS)
		return err;
	((struct doca_sync_event_task_notify_set *)t)->set_val = set_val;
	*task = (struct doca_sync_event_task_notify_set *)t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_sync_event_task_notify_set_as_doca_task(struct doca_sync_event_task_notify_set *task)
{
	return task == NULL ? NULL : &task->task;
}

void doca_sync_event_task_notify_set_set_set_val(struct doca_sync_event_task_notify_set *task, uint64_t set_val)
{
	if (task != NULL)
		task->set_val = set_val;
}

uint64_t doca_sync_event_task_notify_set_get_set_val(const struct doca_sync_event_task_notify_set *task)
{
	return task == NULL ? 0 : task->set_val;
}

/* ---- notify_add ---- */

doca_error_t doca_sync_event_task_notify_add_set_conf(struct doca_sync_event *event,
						      doca_sync_event_task_notify_add_completion_cb_t completion_cb,
						      doca_sync_event_task_notify_add_completion_cb_t error_cb, uint32_t num_tasks)
{
	return set_conf(event, SDPU_SE_TASK_NOTIFY_ADD, (void (*)(void))completion_cb, (void (*)(void))error_cb, num_tasks,
			"doca_sync_event_task_notify_add_set_conf");
}

doca_error_t doca_sync_event_task_notify_add_alloc_init(struct doca_sync_event *event, uint64_t inc_val, uint64_t *fetched_val_ptr,
							union doca_data user_data, struct doca_sync_event_task_notify_add **task)
{
	struct doca_task *t;
	doca_error_t err;

	if (task == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = alloc(event, SDPU_SE_TASK_NOTIFY_ADD, user_data, "doca_sync_event_task_notify_add_alloc_init", &t);
	if (err != DOCA_SUCCESS)
		return err;
	((struct doca_sync_event_task_notify_add *)t)->inc_val = inc_val;
	((struct doca_sync_event_task_notify_add *)t)->fetched_val_ptr = fetched_val_ptr;
	*task = (struct doca_sync_event_task_notify_add *)t;
	return DOCA_SUCCESS;
}

struct doca_task *doca_sync_event_task_notify_add_as_doca_task(struct doca_sync_event_task_notify_add *task)
{
	return task == NULL ? NULL : &task->task;
}

void doca_sync_event_task_notify_add_set_inc_val(struct doca_sync_event_task_notify_add *task, uint64_t inc_val)
{
	if (task != NULL)
		task->inc_val = inc_val;
}

uint64_t doca_sync_event_task_notify_add_get_inc_val(const struct doca_sync_event_task_notify_add *task)
{
	return task == NULL ? 0 : task->inc_val;
}

void doca_sync_event_task_notify_add_set_fetched_val_ptr(struct doca_sync_event_task_notify_add *task, uint64_t *fetched_val_ptr)
{
	if (task != NULL)
		task->fetched_val_ptr = fetched_val_ptr;
}

uint64_t *doca_sync_event_task_notify_add_get_fetched_val_ptr(const struct doca_sync_event_task_notify_add *task)
{
	return task == NULL ? NULL : task->fetched_val_ptr;
}

/* ---- wait_eq and wait_neq ---- */

static doca_error_t wait_alloc(struct doca_sync_event *event, unsigned kind, uint64_t wait_val, uint64_t mask, union doca_data user_data,
			       const char *call, struct doca_task **out)
{
	doca_error_t err;

	if (out == NULL || event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = check_mask(mask, call);
	if (err == DOCA_SUCCESS)
		err = alloc(event, kind, user_data, call, out);
	if (err != DOCA_SUCCESS)
		return err;
	((struct sdpu_se_task_wait *)*out)->wait_val = wait_val;
	((struct sdpu_se_task_wait *)*out)->mask = mask;
	((struct sdpu_se_task_wait *)*out)->neq = kind == SDPU_SE_TASK_WAIT_NEQ;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_task_wait_eq_set_conf(struct doca_sync_event *event, doca_sync_event_task_wait_eq_completion_cb_t completion_cb,
						   doca_sync_event_task_wait_eq_completion_cb_t error_cb, uint32_t num_tasks)
{
	return set_conf(event, SDPU_SE_TASK_WAIT_EQ, (void (*)(void))completion_cb, (void (*)(void))error_cb, num_tasks,
			"doca_sync_event_task_wait_eq_set_conf");
}

doca_error_t doca_sync_event_task_wait_eq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask, union doca_data user_data,
						     struct doca_sync_event_task_wait_eq **task)
{
	return wait_alloc(event, SDPU_SE_TASK_WAIT_EQ, wait_val, mask, user_data, "doca_sync_event_task_wait_eq_alloc_init",
			  (struct doca_task **)task);
}

struct doca_task *doca_sync_event_task_wait_eq_as_doca_task(struct doca_sync_event_task_wait_eq *task)
{
	return (struct doca_task *)task;
}

void doca_sync_event_task_wait_eq_set_wait_val(struct doca_sync_event_task_wait_eq *task, uint64_t wait_val)
{
	if (task != NULL)
		((struct sdpu_se_task_wait *)task)->wait_val = wait_val;
}

uint64_t doca_sync_event_task_wait_eq_get_wait_val(const struct doca_sync_event_task_wait_eq *task)
{
	return task == NULL ? 0 : ((const struct sdpu_se_task_wait *)task)->wait_val;
}

/* A mask of another shape is refused when the task is submitted (INVALID_VALUE): this call returns nothing. */
void doca_sync_event_task_wait_eq_set_mask(struct doca_sync_event_task_wait_eq *task, uint64_t mask)
{
	if (task != NULL)
		((struct sdpu_se_task_wait *)task)->mask = mask;
}

uint64_t doca_sync_event_task_wait_eq_get_mask(const struct doca_sync_event_task_wait_eq *task)
{
	return task == NULL ? 0 : ((const struct sdpu_se_task_wait *)task)->mask;
}

doca_error_t doca_sync_event_task_wait_neq_set_conf(struct doca_sync_event *event,
						    doca_sync_event_task_wait_neq_completion_cb_t completion_cb,
						    doca_sync_event_task_wait_neq_completion_cb_t error_cb, uint32_t num_tasks)
{
	return set_conf(event, SDPU_SE_TASK_WAIT_NEQ, (void (*)(void))completion_cb, (void (*)(void))error_cb, num_tasks,
			"doca_sync_event_task_wait_neq_set_conf");
}

doca_error_t doca_sync_event_task_wait_neq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask,
						      union doca_data user_data, struct doca_sync_event_task_wait_neq **task)
{
	return wait_alloc(event, SDPU_SE_TASK_WAIT_NEQ, wait_val, mask, user_data, "doca_sync_event_task_wait_neq_alloc_init",
			  (struct doca_task **)task);
}

struct doca_task *doca_sync_event_task_wait_neq_as_doca_task(struct doca_sync_event_task_wait_neq *task)
{
	return (struct doca_task *)task;
}

void doca_sync_event_task_wait_neq_set_wait_val(struct doca_sync_event_task_wait_neq *task, uint64_t wait_val)
{
	if (task != NULL)
		((struct sdpu_se_task_wait *)task)->wait_val = wait_val;
}

uint64_t doca_sync_event_task_wait_neq_get_wait_val(const struct doca_sync_event_task_wait_neq *task)
{
	return task == NULL ? 0 : ((const struct sdpu_se_task_wait *)task)->wait_val;
}

void doca_sync_event_task_wait_neq_set_mask(struct doca_sync_event_task_wait_neq *task, uint64_t mask)
{
	if (task != NULL)
		((struct sdpu_se_task_wait *)task)->mask = mask;
}

uint64_t doca_sync_event_task_wait_neq_get_mask(const struct doca_sync_event_task_wait_neq *task)
{
	return task == NULL ? 0 : ((const struct sdpu_se_task_wait *)task)->mask;
}
