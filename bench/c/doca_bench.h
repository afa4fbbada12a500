/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the benchmarks' DOCA programs (comch_pingpong.c, se_pingpong.c, fastpath.c) share, written
 * against DOCA's API alone (the headers of a `softdpu sdk` tree): devices by PCI address, the comch
 * endpoints of the bench (server "bench" on the Arm at 03:00.0 for the host's b1:00.0, as
 * bench/peer-lib.ts opens them, so that either side may be a TypeScript peer), the two ways to progress
 * (spinning on doca_pe_progress, or asleep on the engine's notification handle), and a watchdog. A
 * failure names its call and DOCA's error on stderr and exits 1. Included once per program (static inline definitions).
 */
#ifndef SOFTDPU_DOCA_BENCH_H_
#define SOFTDPU_DOCA_BENCH_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>

#include "bench.h"

#define ARM_PCI "03:00.0"
#define HOST_PCI "b1:00.0"
#define SERVER_NAME "bench"

static const char *prog = "bench";

static inline void check(const char *what, doca_error_t err)
{
	if (err == DOCA_SUCCESS)
		return;
	fprintf(stderr, "%s: %s: %s\n", prog, what, doca_error_get_name(err));
	exit(1);
}

/* A program that outlives its peer would wait forever: it ends itself after `seconds`. */
static inline void watchdog(const char *name, unsigned seconds)
{
	prog = name;
	alarm(seconds);
}

static inline struct doca_dev *open_dev(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;
	uint8_t eq = 0;

	check("doca_devinfo_create_list", doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			check("doca_dev_open", doca_dev_open(list[i], &dev));
	doca_devinfo_destroy_list(list);
	if (dev == NULL)
		check(pci, DOCA_ERROR_NOT_FOUND);
	return dev;
}

static inline struct doca_dev_rep *open_rep(struct doca_dev *dev, const char *pci)
{
	struct doca_devinfo_rep **list;
	struct doca_dev_rep *rep = NULL;
	uint32_t n;
	uint8_t eq = 0;

	check("doca_devinfo_rep_create_list", doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n));
	for (uint32_t i = 0; i < n && rep == NULL; i++)
		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			check("doca_dev_rep_open", doca_dev_rep_open(list[i], &rep));
	doca_devinfo_rep_destroy_list(list);
	if (rep == NULL)
		check(pci, DOCA_ERROR_NOT_FOUND);
	return rep;
}

/* How a side progresses: spinning, or asleep on the notification handle between events. */
struct engine {
	struct doca_pe *pe;
	bool asleep;
	int epoll;
};

static inline struct engine engine_create(bool asleep)
{
	struct engine e = {.asleep = asleep, .epoll = -1};

	check("doca_pe_create", doca_pe_create(&e.pe));
	if (asleep) {
		doca_notification_handle_t fd;
		struct epoll_event ev = {.events = EPOLLIN};

		check("doca_pe_get_notification_handle", doca_pe_get_notification_handle(e.pe, &fd));
		e.epoll = epoll_create1(EPOLL_CLOEXEC);
		ev.data.fd = fd;
		if (e.epoll < 0 || epoll_ctl(e.epoll, EPOLL_CTL_ADD, fd, &ev) != 0)
			check("epoll on the notification handle", DOCA_ERROR_OPERATING_SYSTEM);
	}
	return e;
}

/*
 * One step: spinning, a progress call; asleep, progress until there is nothing to do, then request a
 * notification, sleep on the handle (at most 100 ms: the caller's condition is looked at again), clear it.
 */
static inline void engine_step(struct engine *e)
{
	struct epoll_event ev;

	if (!e->asleep) {
		doca_pe_progress(e->pe);
		return;
	}
	while (doca_pe_progress(e->pe))
		;
	check("doca_pe_request_notification", doca_pe_request_notification(e->pe));
	epoll_wait(e->epoll, &ev, 1, 100);
	check("doca_pe_clear_notification", doca_pe_clear_notification(e->pe, 0));
}

static inline enum doca_ctx_states ctx_state(struct doca_ctx *ctx)
{
	enum doca_ctx_states s;

	check("doca_ctx_get_state", doca_ctx_get_state(ctx, &s));
	return s;
}

/* Progresses until `ctx` is in `state` (the watchdog bounds it). */
static inline void await_state(struct engine *e, struct doca_ctx *ctx, enum doca_ctx_states state)
{
	while (ctx_state(ctx) != state)
		engine_step(e);
}

/* Stops `ctx` (unless it is idle already) and progresses until it is idle. */
static inline void stop_ctx(struct engine *e, struct doca_ctx *ctx)
{
	enum doca_ctx_states s = ctx_state(ctx);

	if (s != DOCA_CTX_STATE_IDLE && s != DOCA_CTX_STATE_STOPPING) {
		doca_error_t err = doca_ctx_stop(ctx);

		if (err != DOCA_ERROR_IN_PROGRESS) /* a stop that waits for the peer, or tasks */
			check("doca_ctx_stop", err);
	}
	await_state(e, ctx, DOCA_CTX_STATE_IDLE);
}

/* Starts `ctx`: DOCA_ERROR_IN_PROGRESS is a client's start going on (it connects while progressed). */
static inline void start_ctx(struct doca_ctx *ctx)
{
	doca_error_t err = doca_ctx_start(ctx);

	if (err != DOCA_ERROR_IN_PROGRESS)
		check("doca_ctx_start", err);
}

/* For the runner: a server says it accepts clients (bench/lib/processes.ts waits for this line). */
static inline void say_ready(void)
{
	fputs("ready\n", stdout);
	fflush(stdout);
}

#endif /* SOFTDPU_DOCA_BENCH_H_ */
