/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_sync_event.h: creating and configuring an event, its two modes (start/stop, or as a context),
 * destroying it, and the synchronous data path. Only the creator configures (one publisher and one
 * subscriber location, each cpu or remote_pci here; set_addr), and only before the first start:
 * afterwards the counter exists and may have been exported. The waits spin on the counter with one
 * atomic load per check and no syscall (the _yield forms call sched_yield between loads, as DOCA's
 * do); an imported handle looks at its exporter every 4096 loads, and fails with NOT_CONNECTED once the
 * exporter destroyed the event or died, unless the last value it left satisfies the wait.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/dev.h"
#include "core/internal.h"
#include "core/io.h"
#include "core/shm.h"
#include "fabric/topology.h"
#include "syncevent/syncevent.h"

#define SOURCE "sync_event"
/* Loads of the counter between two looks at an imported handle's exporter. */
#define LIVENESS_EVERY 4096

static const char *const LOCATION_NAMES[] = {"none", "cpu", "remote_pci"};

doca_error_t doca_sync_event_create(struct doca_sync_event **event)
{
	struct doca_sync_event *ev;

	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sdpu_ctx_init(&ev->ctx, &sdpu_se_ctx_ops);
	ev->source.bit = -1;
	ev->waiters.entry = -1;
	*event = ev;
	return DOCA_SUCCESS;
}

/* ---- configuration ---- */

static doca_error_t configurable(struct doca_sync_event *ev, const char *call)
{
	if (ev->imported) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: a handle made from an export cannot be configured", call);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	/* Once started, the counter exists and may have been shared: configuration ends at the first start. */
	if (ev->mode != SDPU_SE_MODE_NONE) {
		bool now = ev->sync_started || ev->ctx.state != DOCA_CTX_STATE_IDLE;

		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the event %s; configure it before start", call,
			     now ? "is started" : "was started before");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t add_location(struct doca_sync_event *ev, bool publisher, enum sdpu_se_location where, struct doca_dev *dev,
				 const char *call)
{
	enum sdpu_se_location *current;
	doca_error_t err;

	if (ev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = configurable(ev, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (where == SDPU_SE_CPU && dev == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: a cpu location needs an open device", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	current = publisher ? &ev->publisher : &ev->subscriber;
	if (*current != SDPU_SE_NONE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the %s location is already %s; a sync event has exactly one", call,
			     publisher ? "publisher" : "subscriber", LOCATION_NAMES[*current]);
		return DOCA_ERROR_INVALID_VALUE;
	}
	*current = where;
	if (where == SDPU_SE_CPU && ev->cap_info == NULL)
		ev->cap_info = dev->info;
	return DOCA_SUCCESS;
}

/* A location this library does not model: one line saying so. */
static doca_error_t unsupported_location(struct doca_sync_event *ev, const char *call, const char *why)
{
	if (ev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s", call, why);
	return DOCA_ERROR_NOT_SUPPORTED;
}

#define NO_DPA "DPA locations are not supported by softdpu's C library (the TypeScript side has them: docs/c.md)"
#define NO_GPU "GPU features are not supported"
#define NO_NET "remote-net sync events are not supported by softdpu's C library (the TypeScript side has them: docs/c.md)"

doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	return add_location(event, true, SDPU_SE_CPU, dev, "doca_sync_event_add_publisher_location_cpu");
}

doca_error_t doca_sync_event_add_publisher_location_remote_pci(struct doca_sync_event *event)
{
	return add_location(event, true, SDPU_SE_REMOTE_PCI, NULL, "doca_sync_event_add_publisher_location_remote_pci");
}

doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	return add_location(event, false, SDPU_SE_CPU, dev, "doca_sync_event_add_subscriber_location_cpu");
}

doca_error_t doca_sync_event_add_subscriber_location_remote_pci(struct doca_sync_event *event)
{
	return add_location(event, false, SDPU_SE_REMOTE_PCI, NULL, "doca_sync_event_add_subscriber_location_remote_pci");
}

doca_error_t doca_sync_event_add_publisher_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	(void)dpa;
	return unsupported_location(event, "doca_sync_event_add_publisher_location_dpa", NO_DPA);
}

doca_error_t doca_sync_event_add_subscriber_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	(void)dpa;
	return unsupported_location(event, "doca_sync_event_add_subscriber_location_dpa", NO_DPA);
}

doca_error_t doca_sync_event_add_publisher_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	(void)gpu;
	return unsupported_location(event, "doca_sync_event_add_publisher_location_gpu", NO_GPU);
}

doca_error_t doca_sync_event_add_subscriber_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	(void)gpu;
	return unsupported_location(event, "doca_sync_event_add_subscriber_location_gpu", NO_GPU);
}

doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event)
{
	return unsupported_location(event, "doca_sync_event_add_publisher_location_remote_net", NO_NET);
}

doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz)
{
	(void)data;
	(void)sz;
	return unsupported_location(event, "doca_sync_event_export_to_remote_net", NO_NET);
}

doca_error_t doca_sync_event_get_dpa_handle(struct doca_sync_event *event, struct doca_dpa *dpa,
					    doca_dpa_dev_sync_event_t *dpa_dev_se_handle)
{
	(void)dpa;
	(void)dpa_dev_se_handle;
	return unsupported_location(event, "doca_sync_event_get_dpa_handle", NO_DPA);
}

doca_error_t doca_sync_event_get_gpu_handle(struct doca_sync_event *event, struct doca_gpu *gpu, doca_gpu_dev_sync_event_t **gpu_dev_se)
{
	(void)gpu;
	(void)gpu_dev_se;
	return unsupported_location(event, "doca_sync_event_get_gpu_handle", NO_GPU);
}

doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr)
{
	const char *call = "doca_sync_event_set_addr";
	doca_error_t err;

	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = configurable(event, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (addr == NULL || (uintptr_t)addr % 8 != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the counter memory at %p is not 8-byte aligned", call, (void *)addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	event->user_addr = addr;
	return DOCA_SUCCESS;
}

/* ---- modes ---- */

/* Its record for observers, at the first start: named after the control segment, as every handle's is. */
static void publish(struct doca_sync_event *ev)
{
	char name[64];
	const struct sdpu_descriptor *d = &ev->control->descriptor;

	if (ev->ctx.stat.slot >= 0)
		return;
	if (ev->imported)
		snprintf(name, sizeof(name), "event %u:%u imported (remote_pci)", d->pid, d->fd);
	else
		snprintf(name, sizeof(name), "event %u:%u %s\u2192%s", d->pid, d->fd, LOCATION_NAMES[ev->publisher], LOCATION_NAMES[ev->subscriber]);
	sdpu_stat_open(&ev->ctx.stat, SDPU_STAT_SYNC_EVENT, name, NULL, d->fd);
	if (ev->imported)
		sdpu_stat_peer(&ev->ctx.stat, d->pid);
	sdpu_stat_u64(&ev->ctx.stat, 0, sdpu_se_load(ev));
}

doca_error_t sdpu_se_prepare(struct doca_sync_event *ev, enum sdpu_se_mode mode, const char *call)
{
	doca_error_t err;

	if (!ev->imported && (ev->publisher == SDPU_SE_NONE || ev->subscriber == SDPU_SE_NONE)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: set a publisher and a subscriber location first (publisher %s, subscriber %s)",
			     call, LOCATION_NAMES[ev->publisher], LOCATION_NAMES[ev->subscriber]);
		return DOCA_ERROR_BAD_STATE;
	}
	if (ev->imported || ev->control != NULL) {
		ev->mode = mode;
		publish(ev);
		return DOCA_SUCCESS;
	}
	err = sdpu_se_control_create(&ev->control);
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_se_waiters_init(&ev->waiters, ev->control);
	ev->value = ev->user_addr != NULL ? ev->user_addr : (uint64_t *)(ev->control->base + SDPU_SE_VALUE);
	ev->mode = mode;
	publish(ev);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_start(struct doca_sync_event *event)
{
	const char *call = "doca_sync_event_start";

	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (event->mode == SDPU_SE_MODE_CTX) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the event is used as a context (doca_sync_event_as_ctx); the modes exclude each other", call);
		return DOCA_ERROR_BAD_STATE;
	}
	if (event->sync_started) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the event is already started", call);
		return DOCA_ERROR_BAD_STATE;
	}
	doca_error_t err = sdpu_se_prepare(event, SDPU_SE_MODE_SYNC, call);

	if (err == DOCA_SUCCESS) {
		event->sync_started = true;
		sdpu_stat_state(&event->ctx.stat, DOCA_CTX_STATE_RUNNING);
	}
	return err;
}

doca_error_t doca_sync_event_stop(struct doca_sync_event *event)
{
	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!event->sync_started) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_sync_event_stop: the event is not started (or runs as a context: stop the context)");
		return DOCA_ERROR_BAD_STATE;
	}
	event->sync_started = false;
	sdpu_stat_state(&event->ctx.stat, DOCA_CTX_STATE_IDLE);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event)
{
	if (event == NULL)
		return NULL;
	if (event->mode == SDPU_SE_MODE_SYNC) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_sync_event_as_ctx: the event was started with doca_sync_event_start; it cannot be a context");
		return NULL;
	}
	return &event->ctx;
}

doca_error_t doca_sync_event_destroy(struct doca_sync_event *event)
{
	doca_error_t err;

	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_destroy(&event->ctx); /* IN_USE unless the context is IDLE */
	if (err != DOCA_SUCCESS)
		return err;
	if (event->exported)
		sdpu_export_revoke(&event->slot);
	if (event->imported) {
		sdpu_se_waiters_close(&event->waiters);
		sdpu_export_view_close(&event->view);
		if (event->value_segment != event->control)
			sdpu_segment_close(event->value_segment);
		sdpu_segment_close(event->control);
	} else if (event->control != NULL) {
		sdpu_store(event->control->base + SDPU_SE_OFF_STATE, SDPU_SE_DESTROYED);
		sdpu_se_waiters_ring_all(&event->waiters); /* sleeping importers wake and find the event gone */
		sdpu_se_waiters_close(&event->waiters);
		sdpu_segment_close(event->control);
	}
	memset(event->blob, 0, sizeof(event->blob)); /* a secret */
	free(event);
	return DOCA_SUCCESS;
}

/* ---- the data path ---- */

bool sdpu_se_valid(struct doca_sync_event *ev, bool syscalls)
{
	if (!ev->imported)
		return true;
	if (__atomic_load_n(&ev->exporter_dead, __ATOMIC_SEQ_CST))
		return false;
	return sdpu_export_view_valid(&ev->view, syscalls);
}

doca_error_t sdpu_se_usable(struct doca_sync_event *ev, bool as_ctx, const char *call)
{
	if (as_ctx ? ev->ctx.state != DOCA_CTX_STATE_RUNNING : !ev->sync_started) {
		const char *why = ev->mode == (as_ctx ? SDPU_SE_MODE_SYNC : SDPU_SE_MODE_CTX)
					  ? (as_ctx ? "the event runs as doca_sync_event_start (synchronous)" : "the event runs as a context: use its tasks")
					  : "the sync event is not started";

		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s", call, why);
		return DOCA_ERROR_BAD_STATE;
	}
	if (!sdpu_se_valid(ev, true)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the exporting process (pid %u) destroyed the event or exited; this handle is no longer valid",
			     call, ev->control->descriptor.pid);
		return DOCA_ERROR_NOT_CONNECTED;
	}
	return DOCA_SUCCESS;
}

uint64_t sdpu_se_update(struct doca_sync_event *ev, bool add, uint64_t v)
{
	uint64_t before = 0;

	if (add)
		before = __atomic_fetch_add(ev->value, v, __ATOMIC_SEQ_CST);
	else
		__atomic_store_n(ev->value, v, __ATOMIC_SEQ_CST);
	sdpu_stat_u64(&ev->ctx.stat, 0, add ? before + v : v);
	ev->ctx.stat.c[2] += 1;
	sdpu_se_waiters_ring_if_waiting(&ev->waiters);
	return before;
}

doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value)
{
	doca_error_t err;

	if (event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_se_usable(event, false, "doca_sync_event_update_set");
	if (err == DOCA_SUCCESS)
		sdpu_se_update(event, false, value);
	return err;
}

doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched)
{
	doca_error_t err;

	if (event == NULL || fetched == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_se_usable(event, false, "doca_sync_event_update_add");
	if (err == DOCA_SUCCESS)
		*fetched = sdpu_se_update(event, true, value);
	return err;
}

doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value)
{
	doca_error_t err;

	if (event == NULL || value == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_se_usable(event, false, "doca_sync_event_get");
	if (err == DOCA_SUCCESS) {
		*value = sdpu_se_load(event);
		sdpu_stat_u64(&event->ctx.stat, 0, *value);
	}
	return err;
}

enum op { GT, EQ, NEQ };

static bool holds(enum op op, uint64_t value, uint64_t operand, uint64_t mask)
{
	uint64_t v = value & mask;

	return op == GT ? v > operand : op == EQ ? v == operand : v != operand;
}

static doca_error_t wait(struct doca_sync_event *ev, enum op op, bool yield, uint64_t operand, uint64_t mask, const char *call)
{
	doca_error_t err;

	if (ev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_se_usable(ev, false, call);
	if (err != DOCA_SUCCESS)
		return err;
	for (uint64_t i = 1;; i++) {
		if (holds(op, sdpu_se_load(ev), operand, mask))
			return DOCA_SUCCESS;
		if (yield)
			sched_yield();
		if (i % LIVENESS_EVERY != 0 || !ev->imported)
			continue;
		/* The exporter's last update may have come just before it left: look once more, then fail. */
		if (!sdpu_se_valid(ev, true) && !holds(op, sdpu_se_load(ev), operand, mask)) {
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the exporting process (pid %u) destroyed the event or exited while we waited",
				     call, ev->control->descriptor.pid);
			return DOCA_ERROR_NOT_CONNECTED;
		}
	}
}

doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait(event, GT, false, value, mask, "doca_sync_event_wait_gt");
}

doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait(event, GT, true, value, mask, "doca_sync_event_wait_gt_yield");
}

doca_error_t doca_sync_event_wait_eq(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait(event, EQ, false, value, mask, "doca_sync_event_wait_eq");
}

doca_error_t doca_sync_event_wait_eq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait(event, EQ, true, value, mask, "doca_sync_event_wait_eq_yield");
}

doca_error_t doca_sync_event_wait_neq(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait(event, NEQ, false, value, mask, "doca_sync_event_wait_neq");
}

doca_error_t doca_sync_event_wait_neq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask)
{
	return wait(event, NEQ, true, value, mask, "doca_sync_event_wait_neq_yield");
}
