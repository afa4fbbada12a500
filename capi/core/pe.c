/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_pe.h: the engine's loop and its notification handle, the read end of its doorbell pipe
 * (docs/wakeup.md). doca_pe_progress never makes a syscall: it runs one unit of work, or harvests the
 * doorbell's bits (atomic loads, an exchange per word that has one) and polls the sources that rang, or,
 * before the first sleep and in PROGRESS_ALL, polls every source (loads of their shared words).
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/pe.h"
#include "fabric/faults.h"

#define SOURCE "doca_pe"

doca_error_t doca_pe_create(struct doca_pe **pe)
{
	struct doca_pe *p;
	doca_error_t err;

	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	p->sources = calloc(SDPU_BELL_CAPACITY, sizeof(*p->sources));
	if (p->sources == NULL) {
		free(p);
		return DOCA_ERROR_NO_MEMORY;
	}
	err = sdpu_bell_create(&p->bell);
	if (err != DOCA_SUCCESS) {
		free(p->sources);
		free(p);
		return err;
	}
	p->mode = DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE;
	*pe = p;
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_destroy(struct doca_pe *pe)
{
	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (pe->nctxs > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_pe_destroy: %zu context(s) are still connected; destroy them first",
			     pe->nctxs);
		return DOCA_ERROR_IN_USE;
	}
	sdpu_bell_close(pe->bell);
	free(pe->sources);
	free(pe->ctxs);
	free(pe);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx)
{
	struct doca_ctx **grown;

	if (pe == NULL || ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (ctx->pe != NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_pe_connect_ctx: the %s is already connected to a progress engine",
			     ctx->ops->name);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ctx->state != DOCA_CTX_STATE_IDLE)
		return DOCA_ERROR_BAD_STATE;
	grown = realloc(pe->ctxs, (pe->nctxs + 1) * sizeof(*grown));
	if (grown == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pe->ctxs = grown;
	pe->ctxs[pe->nctxs++] = ctx;
	ctx->pe = pe;
	return DOCA_SUCCESS;
}

void sdpu_pe_detach(struct doca_pe *pe, struct doca_ctx *ctx)
{
	for (size_t i = 0; i < pe->nctxs; i++)
		if (pe->ctxs[i] == ctx) {
			memmove(pe->ctxs + i, pe->ctxs + i + 1, (pe->nctxs - i - 1) * sizeof(*pe->ctxs));
			pe->nctxs--;
			break;
		}
	pe->next = 0;
	if (pe->current == ctx)
		pe->current = NULL;
	if (ctx->queued) {
		struct doca_ctx **at = &pe->ready_head, *last = NULL;

		while (*at != NULL && *at != ctx) {
			last = *at;
			at = &(*at)->ready_next;
		}
		if (*at == ctx) {
			*at = ctx->ready_next;
			if (pe->ready_tail == ctx)
				pe->ready_tail = last;
		}
		ctx->queued = false;
	}
	ctx->pe = NULL;
}

static void push_ready(struct doca_pe *pe, struct doca_ctx *ctx)
{
	ctx->queued = true;
	ctx->ready_next = NULL;
	if (pe->ready_tail != NULL)
		pe->ready_tail->ready_next = ctx;
	else
		pe->ready_head = ctx;
	pe->ready_tail = ctx;
}

static struct doca_ctx *pop_ready(struct doca_pe *pe)
{
	struct doca_ctx *ctx = pe->ready_head;

	if (ctx != NULL) {
		pe->ready_head = ctx->ready_next;
		if (pe->ready_head == NULL)
			pe->ready_tail = NULL;
	}
	return ctx;
}

/* Work found by this thread while armed: take ARMED -> RUNG so no ringer writes, and show it on the handle. */
static void claim_and_wake(struct doca_pe *pe)
{
	if (sdpu_bell_claim(pe->bell) && pe->handle_given)
		sdpu_bell_ring_self(pe->bell);
	pe->notified = true;
}

void sdpu_pe_signal(struct doca_pe *pe, struct doca_ctx *ctx)
{
	if (!ctx->queued)
		push_ready(pe, ctx);
	if (pe->armed && !pe->notified)
		claim_and_wake(pe);
}

static void on_bit(void *arg, uint32_t bit)
{
	struct doca_pe *pe = arg;
	struct sdpu_source *source = __atomic_load_n(&pe->sources[bit], __ATOMIC_SEQ_CST);

	if (source != NULL)
		sdpu_source_ready(source);
}

static void drop_bit(void *arg, uint32_t bit)
{
	(void)arg;
	(void)bit;
}

/* Round robin over the contexts that have work or whose sources rang. */
static uint8_t progress_ready(struct doca_pe *pe)
{
	sdpu_bell_harvest(pe->bell, on_bit, pe);
	for (struct doca_ctx *ctx = pop_ready(pe); ctx != NULL; ctx = pop_ready(pe)) {
		bool ran;

		pe->current = ctx;
		ran = sdpu_ctx_progress_one(ctx, false);
		if (pe->current == NULL)
			return 1; /* a callback destroyed it */
		pe->current = NULL;
		if (ran) {
			push_ready(pe, ctx); /* it may have more; the others get their turn first */
			return 1;
		}
		ctx->queued = false;
	}
	return 0;
}

/* Every context, each polling all its sources (before the first sleep, or in PROGRESS_ALL). */
static uint8_t progress_all(struct doca_pe *pe)
{
	size_t n = pe->nctxs;

	if (pe->tracking)
		sdpu_bell_harvest(pe->bell, drop_bit, NULL);
	for (size_t i = 0; i < n && i < pe->nctxs; i++) {
		size_t index = (pe->next + i) % pe->nctxs;
		bool ran;

		pe->current = pe->ctxs[index];
		ran = sdpu_ctx_progress_one(pe->current, true);
		if (pe->current == NULL)
			return 1; /* a callback destroyed it */
		pe->current = NULL;
		if (ran) {
			pe->next = (index + 1) % pe->nctxs;
			return 1;
		}
	}
	return 0;
}

uint8_t doca_pe_progress(struct doca_pe *pe)
{
	uint8_t r;

	if (pe == NULL || pe->nctxs == 0)
		return 0;
	if (pe->in_callback) {
		if (!pe->nested_reported)
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_pe_progress was called from inside a callback of the same engine; it does nothing there");
		pe->nested_reported = true;
		return 0;
	}
	if (SDPU_FAULTS_ON(SDPU_FAULTS_STALL) && sdpu_fault_stalls(pe))
		return 0;
	pe->in_callback = true;
	r = pe->tracking && pe->mode == DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE ? progress_ready(pe) : progress_all(pe);
	pe->in_callback = false;
	return r;
}

doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode event_mode)
{
	if (pe == NULL || (event_mode != DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE && event_mode != DOCA_PE_EVENT_MODE_PROGRESS_ALL))
		return DOCA_ERROR_INVALID_VALUE;
	if (pe->in_callback) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_pe_set_event_mode: called from inside a callback");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	pe->mode = event_mode;
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks)
{
	size_t n = 0;

	if (pe == NULL || num_inflight_tasks == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < pe->nctxs; i++)
		n += pe->ctxs[i]->inflight;
	*num_inflight_tasks = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle)
{
	if (pe == NULL || handle == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	((struct doca_pe *)pe)->handle_given = true;
	*handle = pe->bell->read_fd;
	return DOCA_SUCCESS;
}

/* Drops contexts listed as ready that have nothing queued; true if one has something. */
static bool prune_ready(struct doca_pe *pe)
{
	struct doca_ctx *keep_head = NULL, *keep_tail = NULL;

	for (struct doca_ctx *ctx = pop_ready(pe); ctx != NULL; ctx = pop_ready(pe)) {
		if (!sdpu_ctx_has_queued_work(ctx)) {
			ctx->queued = false;
			continue;
		}
		ctx->ready_next = NULL;
		if (keep_tail != NULL)
			keep_tail->ready_next = ctx;
		else
			keep_head = ctx;
		keep_tail = ctx;
	}
	pe->ready_head = keep_head;
	pe->ready_tail = keep_tail;
	return keep_head != NULL;
}

doca_error_t doca_pe_request_notification(struct doca_pe *pe)
{
	bool work;

	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (pe->armed)
		return DOCA_SUCCESS;
	pe->armed = true;
	work = sdpu_bell_arm(pe->bell);
	if (!pe->tracking) {
		/* Leaving POLL: ringers skipped their bits until now, so every source is looked at once more. */
		pe->tracking = true;
		for (size_t i = 0; i < pe->nctxs; i++)
			sdpu_ctx_poll_every_source(pe->ctxs[i]);
	}
	if (work || prune_ready(pe))
		claim_and_wake(pe);
	return DOCA_SUCCESS;
}

doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle)
{
	(void)handle; /* ignored on Linux, as DOCA's reference says */
	if (pe == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!pe->armed)
		return DOCA_SUCCESS;
	pe->armed = false;
	pe->notified = false;
	/* RUNG: a ringer (or this engine, for the handle) may have written a byte. */
	if (sdpu_bell_disarm(pe->bell) == SDPU_BELL_RUNG)
		sdpu_bell_drain(pe->bell);
	return DOCA_SUCCESS;
}
