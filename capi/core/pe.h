/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The progress engine (struct doca_pe): its contexts, its doorbell (fabric/bell.h) and the sources its
 * bits stand for. Until the program first requests a notification the engine polls every source on every
 * call (POLL: peers ring nothing); from then on, in PROGRESS_SELECTIVE, it looks only at what rang.
 */
#ifndef SOFTDPU_CAPI_PE_H_
#define SOFTDPU_CAPI_PE_H_

#include <stdbool.h>

#include <doca_pe.h>

#include "core/ctx.h"
#include "fabric/bell.h"

struct doca_pe {
	struct doca_ctx **ctxs;
	size_t nctxs;
	size_t next;
	struct sdpu_bell *bell;
	/* The source each bit stands for (written by any thread that reserves a bit, read by the harvest). */
	struct sdpu_source **sources;
	struct doca_ctx *ready_head, *ready_tail;
	/* The context being progressed (NULL again if a callback destroys it). */
	struct doca_ctx *current;
	enum doca_pe_event_mode mode;
	bool in_callback;
	bool armed;
	bool notified;
	bool tracking;
	bool handle_given;
	bool nested_reported;
};

/* A context has work (or may now finish stopping): look at it, and wake the engine if it sleeps. */
void sdpu_pe_signal(struct doca_pe *pe, struct doca_ctx *ctx);
/* A destroyed context leaves its engine. */
void sdpu_pe_detach(struct doca_pe *pe, struct doca_ctx *ctx);

#endif /* SOFTDPU_CAPI_PE_H_ */
