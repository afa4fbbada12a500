/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection (docs/faults.md, docs/protocol.md "Fault plan files"): the fabric's plan file
 * (faults.json, written by `softdpu fault add`) and $SOFTDPU_FAULTS, read with the rules of
 * src/fabric/faults/plan.ts, run with those of hooks.ts, so that one plan reaches TypeScript and C
 * processes alike. The C library fires `again`, `crash`, `stall`, `lose-event` and `driver`; the other
 * kinds are accepted, listed and never fire here.
 *
 * Every hook is called behind SDPU_FAULTS_ON(kinds), one relaxed load of the kinds in force, 0 while no
 * fault of the hook's kinds is; behind it a hook takes the faults' lock (no syscall). The plan file is looked at, and the
 * counts are published, on the helper thread's 200 ms cadence (core/io.h).
 */
#ifndef SOFTDPU_CAPI_FAULTS_H_
#define SOFTDPU_CAPI_FAULTS_H_

#include <stdbool.h>

#include <doca_error.h>

struct doca_ctx;
struct doca_pe;

/* The kinds in force, one bit each (1 << enum sdpu_fault_kind): a hook is entered only for its own kinds. */
extern int sdpu_faults_on;
#define SDPU_FAULTS_SUBMIT ((1 << 0) | (1 << 2)) /* crash, again */
#define SDPU_FAULTS_STALL (1 << 1)
#define SDPU_FAULTS_EVENT (1 << 3) /* lose-event */
#define SDPU_FAULTS_START (1 << 8) /* driver */
#define SDPU_FAULTS_ON(kinds) (__atomic_load_n(&sdpu_faults_on, __ATOMIC_RELAXED) & (kinds))

/*
 * The process opens a device of the fabric in `dir`: the first time, $SOFTDPU_FAULTS comes into force
 * (INVALID_VALUE, logged naming the field, for a bad plan) and the fabric's plan file is read and then
 * followed on the cadence.
 */
doca_error_t sdpu_faults_follow(const char *dir);

/* A device the process opened: what the `side` and `device` selectors look at. */
void sdpu_faults_device(const char *pci, bool dpu_side);

/* doca_task_submit, before the task is touched: a crash, or AGAIN (the task unchanged, the caller's). */
doca_error_t sdpu_fault_at_submit(struct doca_ctx *ctx, const char *task);

/* doca_ctx_start, before the context starts anything: DRIVER. */
doca_error_t sdpu_fault_at_start(struct doca_ctx *ctx);

/* doca_pe_progress: true when the engine stalled (the call then does nothing). */
bool sdpu_fault_stalls(struct doca_pe *pe);

/* An event about to be queued (`connection_established`, ...): true when it is lost. */
bool sdpu_fault_lose_event(struct doca_ctx *ctx, const char *event);

#endif /* SOFTDPU_CAPI_FAULTS_H_ */
