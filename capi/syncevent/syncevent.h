/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DOCA Sync Event in C (docs/protocol.md, "Sync event control block", "Waiter table", "Sync event PCI
 * export"): a 64-bit counter in a control segment its creator makes at the first start, or in memory the
 * program supplied (set_addr), reached by other processes through an exported blob. An event is used
 * either synchronously (doca_sync_event_start: set, add, get and the spinning waits) or as a context
 * (doca_sync_event_as_ctx: the asynchronous tasks on a progress engine), never both.
 *
 * A context with pending wait tasks claims an entry of the event's waiter table with its engine's
 * doorbell; every update rings the entries that want (no syscall unless that engine sleeps). The
 * blocking waits never enter the table: they spin on the counter.
 */
#ifndef SOFTDPU_CAPI_SYNCEVENT_H_
#define SOFTDPU_CAPI_SYNCEVENT_H_

#include <stdbool.h>
#include <stdint.h>

#include <doca_sync_event.h>

#include "core/ctx.h"
#include "fabric/bell.h"
#include "fabric/blob.h"
#include "fabric/exports.h"
#include "fabric/segment.h"

/* The control block (offsets from the segment's first byte). */
#define SDPU_SE_MAGIC 0x54564553 /* 'SEVT' */
#define SDPU_SE_VERSION 2
#define SDPU_SE_OFF_MAGIC 64
#define SDPU_SE_OFF_VERSION 68
#define SDPU_SE_OFF_CAPACITY 72
#define SDPU_SE_OFF_STATE 76
#define SDPU_SE_VALUE 128
#define SDPU_SE_WAITING 192
#define SDPU_SE_HIGH 196
#define SDPU_SE_TABLE 256
#define SDPU_SE_ENTRY_SIZE 128
#define SDPU_SE_E_STATE 0
#define SDPU_SE_E_WANTS 4
#define SDPU_SE_E_GEN 8
#define SDPU_SE_E_OWNER 16
#define SDPU_SE_E_BELL 64
#define SDPU_SE_CAPACITY 128
#define SDPU_SE_LIVE 1
#define SDPU_SE_DESTROYED 2
/* Ringing passes between two looks at the waiters' liveness (a dead waiter's pipe tells sooner). */
#define SDPU_SE_AUDIT_EVERY 1024
/* Blob payload: control descriptor, value descriptor, f64 value offset, PCI trailer. */
#define SDPU_SE_PAYLOAD (2 * SDPU_DESCRIPTOR_SIZE + 8 + SDPU_PCI_TRAILER_SIZE)
#define SDPU_SE_BLOB_SIZE (SDPU_BLOB_HEADER + SDPU_SE_PAYLOAD)

enum sdpu_se_location { SDPU_SE_NONE, SDPU_SE_CPU, SDPU_SE_REMOTE_PCI };
enum sdpu_se_mode { SDPU_SE_MODE_NONE, SDPU_SE_MODE_SYNC, SDPU_SE_MODE_CTX };
enum sdpu_se_task_type { SDPU_SE_TASK_GET, SDPU_SE_TASK_NOTIFY_SET, SDPU_SE_TASK_NOTIFY_ADD, SDPU_SE_TASK_WAIT_EQ, SDPU_SE_TASK_WAIT_NEQ,
			 SDPU_SE_TASK_KINDS };

/* One waiter entry's bell, opened for one claim of it (its generation). */
struct sdpu_se_bell {
	int32_t generation;
	bool opened;
	uint32_t bit;
	struct sdpu_remote_bell *bell;
};

/* One handle's view of an event's waiter table: ringing the waiters, and being one. */
struct sdpu_se_waiters {
	uint8_t *base;
	uint32_t capacity;
	struct sdpu_se_bell bells[SDPU_SE_CAPACITY];
	int entry;
	bool wanting;
	uint32_t rings;
};

struct doca_sync_event_task_get {
	struct doca_task task;
	uint64_t *ret_val_ptr;
};

struct doca_sync_event_task_notify_set {
	struct doca_task task;
	uint64_t set_val;
};

struct doca_sync_event_task_notify_add {
	struct doca_task task;
	uint64_t inc_val;
	uint64_t *fetched_val_ptr;
};

/* wait_eq and wait_neq share their layout; `pending_next` links the waits not yet met. */
struct sdpu_se_task_wait {
	struct doca_task task;
	uint64_t wait_val;
	uint64_t mask;
	bool neq;
	struct sdpu_se_task_wait *pending_next;
};

struct doca_sync_event {
	struct doca_ctx ctx;
	bool imported;
	enum sdpu_se_location publisher, subscriber;
	/* The device the capabilities are asked of: a cpu location's, or the importing one's. */
	const struct doca_devinfo *cap_info;
	/* set_addr's memory (private to this process). */
	uint64_t *user_addr;
	enum sdpu_se_mode mode;
	bool sync_started;
	/* The control segment (made at the first start, or the exporter's), and the counter's segment when it is another. */
	struct sdpu_segment *control;
	struct sdpu_segment *value_segment;
	uint64_t *value;
	struct sdpu_se_waiters waiters;
	/* Exporter: its slot. Importer: the exporter's slot, and the exporter. */
	bool exported;
	struct sdpu_export_slot slot;
	struct sdpu_export_view view;
	uint8_t blob[SDPU_SE_BLOB_SIZE];
	/* As a context: the source the engine's bit stands for, the pending waits, the exporter's watch. */
	struct sdpu_source source;
	bool source_reserved;
	struct sdpu_se_task_wait *pending;
	size_t npending;
	uint64_t exporter_watch;
	int exporter_dead;
	void (*ok_cb[SDPU_SE_TASK_KINDS])(void *, union doca_data, union doca_data);
	void (*err_cb[SDPU_SE_TASK_KINDS])(void *, union doca_data, union doca_data);
};

/* ---- the control block and its waiter table (syncevent/layout.c) ---- */

/* A new control block (kind `syncevent`), live. */
doca_error_t sdpu_se_control_create(struct sdpu_segment **out);
/* Why a mapped segment is not a live control block of this version, or NULL when it is one. */
const char *sdpu_se_control_problem(const struct sdpu_segment *segment);

void sdpu_se_waiters_init(struct sdpu_se_waiters *w, const struct sdpu_segment *control);
/* After an update: rings every engine that waits (one load, unless somebody does). */
void sdpu_se_waiters_ring_if_waiting(struct sdpu_se_waiters *w);
/* Rings every claimed entry, waiting or not (the event is being destroyed). */
void sdpu_se_waiters_ring_all(struct sdpu_se_waiters *w);
/* Says this context waits (`on`) or no longer does; the first time it claims an entry for `ref`. False: the table is full. */
bool sdpu_se_waiters_want(struct sdpu_se_waiters *w, bool on, const struct sdpu_bell_ref *ref);
/* Gives the entry back (the context stops). */
void sdpu_se_waiters_release(struct sdpu_se_waiters *w);
/* Lets go of every bell this handle opened. */
void sdpu_se_waiters_close(struct sdpu_se_waiters *w);

/* ---- shared by the event's files ---- */

/* The counter, checked usable for `call`: started in the mode the call belongs to; for an importer, valid. */
doca_error_t sdpu_se_usable(struct doca_sync_event *ev, bool as_ctx, const char *call);
/* Whether an imported handle still reaches a live event (memory only unless `syscalls`). */
bool sdpu_se_valid(struct doca_sync_event *ev, bool syscalls);
/* The mode starts: the counter comes to exist. */
doca_error_t sdpu_se_prepare(struct doca_sync_event *ev, enum sdpu_se_mode mode, const char *call);
/* Every update of the counter, whoever asks: set or add (returns the value before), then rings the waiters. */
uint64_t sdpu_se_update(struct doca_sync_event *ev, bool add, uint64_t v);

static inline uint64_t sdpu_se_load(const struct doca_sync_event *ev)
{
	return __atomic_load_n(ev->value, __ATOMIC_SEQ_CST);
}

/* The context's ops (syncevent/ctx.c). */
extern const struct sdpu_ctx_ops sdpu_se_ctx_ops;

#endif /* SOFTDPU_CAPI_SYNCEVENT_H_ */
