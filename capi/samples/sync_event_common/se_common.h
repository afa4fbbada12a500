/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What softdpu's two sync event samples share (sync_event_local_pci exports an event, sync_event_remote_pci
 * imports it): their flags, the comch connection that carries the export blob (the DPU's Arm side is the
 * server, the host the client, chosen at build time by DOCA_ARCH_DPU as in DOCA's samples), starting the
 * event in either mode, the updates and waits of both modes, and the teardown. The flow and the flags are
 * DOCA's (the Sync Event guide's samples); the code is softdpu's own.
 */
#ifndef SYNC_EVENT_COMMON_H_
#define SYNC_EVENT_COMMON_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#define SE_SERVICE_NAME "sync_event_cc" /* DOCA's samples' comch server name */
#define SE_MAX_MSG_SIZE 1024		/* the largest blob the comch connection carries */
#define SE_RECV_QUEUE_SIZE 8
#define SE_SEND_TASKS 8
#define SE_TIMEOUT_SEC 30 /* for the connection, the blob, each task and each teardown step */

struct se_config {
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];	  /* -d, --pci-addr */
	char rep_pci[DOCA_DEVINFO_PCI_ADDR_SIZE]; /* -r, --rep-pci (DPU) */
	bool async;				  /* --async: the event as a context, updates and waits as tasks */
	bool atomic;				  /* --atomic: update by adding 1, not by setting the value */
	int num_tasks;				  /* --async-num-tasks: each task kind's pool */
};

struct se_sample {
	struct se_config cfg;
	struct doca_dev *dev;
	struct doca_dev_rep *rep; /* on the DPU */
	struct doca_pe *comch_pe;
	struct doca_ctx *comch_ctx;
#ifdef DOCA_ARCH_DPU
	struct doca_comch_server *server;
#else
	struct doca_comch_client *client;
#endif
	struct doca_comch_connection *connection;
	bool sent;		   /* the send task completed */
	doca_error_t comch_result; /* the first comch failure */
	uint8_t blob[SE_MAX_MSG_SIZE];
	size_t blob_len; /* 0 until the peer's message arrived */
	struct doca_sync_event *event;
	bool started; /* doca_sync_event_start succeeded (synchronous mode) */
	struct doca_pe *se_pe;
	struct doca_ctx *se_ctx;
	bool task_done;
	doca_error_t task_result;
	uint64_t fetched; /* the value before an atomic add */
};

/*
 * A sample's main: the log backends, the flags, `run`, the teardown; EXIT_SUCCESS or EXIT_FAILURE with
 * DOCA's lines.
 */
int se_main(int argc, char **argv, const char *program, doca_error_t (*run)(struct se_sample *s));

/* Opens the device (-d) if it passes `check`, and on the DPU the representor (-r). */
doca_error_t se_open(struct se_sample *s, doca_error_t (*check)(const struct doca_devinfo *));

/* Makes the comch connection: the DPU serves SE_SERVICE_NAME for the representor, the host connects. */
doca_error_t se_connect(struct se_sample *s);

/* Sends one message and progresses until it was delivered. */
doca_error_t se_send(struct se_sample *s, const uint8_t *data, size_t len);

/* Progresses until the peer's message (the blob) is in s->blob. */
doca_error_t se_receive(struct se_sample *s);

/* Starts s->event: doca_sync_event_start, or (--async) as a context on its own progress engine. */
doca_error_t se_start(struct se_sample *s);

/* Signals the peer: sets `value`, or (--atomic) adds 1; a notify task in --async. */
doca_error_t se_signal(struct se_sample *s, uint64_t value);

/* Waits until the event is `value`: busy or yielding, or a wait_eq task in --async. */
doca_error_t se_wait(struct se_sample *s, uint64_t value, bool yield);

/* The teardown's halves (se_main runs them): the comch side first, as DOCA's samples do, then the event. */
void se_comch_close(struct se_sample *s);
void se_event_close(struct se_sample *s);

/*
 * Progresses `pe` until done(s), napping 10 us whenever a call finds nothing to do; DOCA_ERROR_TIME_OUT,
 * with a line naming `what`, after SE_TIMEOUT_SEC.
 */
doca_error_t se_progress_until(struct se_sample *s, struct doca_pe *pe, bool (*done)(const struct se_sample *s),
			       const char *what);

#endif /* SYNC_EVENT_COMMON_H_ */
