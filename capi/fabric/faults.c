/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fabric/faults.h: the faults in force (hooks.ts) and where they come from (sources.ts): $SOFTDPU_FAULTS
 * and the fabric's plan file, followed on the helper thread's cadence. Each fault keeps, per target (the
 * context for again, driver and events; the engine for stall; the process for crash), the matching calls
 * it saw and whether it fired, and keeps them across a re-read that leaves it unchanged.
 */
#define _GNU_SOURCE
#include "fabric/faults.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/ctx.h"
#include "core/internal.h"
#include "core/io.h"
#include "core/pe.h"
#include "fabric/fault_files.h"
#include "fabric/fault_plan.h"
#include "fabric/introspect.h"

#define SOURCE "faults"
#define CADENCE_MS 200

int sdpu_faults_on;

_Static_assert(SDPU_FAULTS_SUBMIT == ((1 << SDPU_FAULT_CRASH) | (1 << SDPU_FAULT_AGAIN)) && SDPU_FAULTS_STALL == 1 << SDPU_FAULT_STALL &&
		       SDPU_FAULTS_EVENT == 1 << SDPU_FAULT_LOSE_EVENT && SDPU_FAULTS_START == 1 << SDPU_FAULT_DRIVER,
	       "faults.h's kind bits follow enum sdpu_fault_kind");

struct target {
	const void *at;
	uint64_t calls, injections;
	bool fired;
};

struct running {
	struct sdpu_fault f;
	/* "fabric" or "env", and the seed of its plan. */
	const char *source;
	uint32_t plan_seed;
	uint32_t rng;
	int64_t since;
	struct target *targets;
	size_t ntargets;
	uint64_t injections;
	struct sdpu_stat record;
	bool recorded;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct running *running;
static size_t nrunning;
static bool changed, followed, published;
static char dir[4096], stamp[96];
static struct sdpu_fault_plan env_plan, file_plan;
static uint32_t env_seed = 1, file_seed = 1;
static uint32_t self_pid;
/* The process, as the target of crash faults. */
static const char PROCESS = 0;
static struct {
	char pci[13];
	bool dpu;
} opened[64];
static size_t nopened;

static void take_record(struct running *r)
{
	char name[320];
	const struct sdpu_fault *f = &r->f;

	if (r->recorded || (f->pid != 0 && f->pid != self_pid))
		return;
	snprintf(name, sizeof(name), "%s %s%s%s%s%s%s%s%s%s (%s)", f->id, sdpu_fault_kind_names[f->kind], f->ctx[0] ? " " : "", f->ctx,
		 f->task[0] ? " " : "", f->task, f->event[0] ? " " : "", f->event, f->blob[0] ? " " : "", f->blob, r->source);
	sdpu_stat_open(&r->record, SDPU_STAT_FAULT, name, NULL, 0);
	r->record.c[0] = (double)r->injections;
	r->recorded = true;
}

/* Puts the env plan and the file's plan in force; a fault already in force (same source, seed, text) keeps its state. */
static void install(void)
{
	size_t n = env_plan.count + file_plan.count, k = 0;
	struct running *next = calloc(n ? n : 1, sizeof(*next));

	if (next == NULL)
		return;
	for (int source = 0; source < 2; source++) {
		const struct sdpu_fault_plan *p = source == 0 ? &env_plan : &file_plan;
		uint32_t seed = source == 0 ? env_seed : file_seed;
		const char *name = source == 0 ? "env" : "fabric";

		for (size_t i = 0; i < p->count; i++, k++) {
			struct running *r = &next[k];

			for (size_t j = 0; j < nrunning; j++)
				if (running[j].source != NULL && strcmp(running[j].source, name) == 0 && running[j].plan_seed == seed && strcmp(running[j].f.key, p->faults[i].key) == 0 &&
				    running[j].f.kind == p->faults[i].kind) {
					*r = running[j];
					sdpu_stat_moved(&r->record);
					running[j].source = NULL; /* moved */
					break;
				}
			if (r->source != NULL)
				continue;
			r->f = p->faults[i];
			r->source = name;
			r->plan_seed = seed;
			r->rng = sdpu_fault_seed(&r->f, seed);
			r->since = sdpu_now_ms();
			sdpu_stat_private(&r->record);
		}
	}
	for (size_t j = 0; j < nrunning; j++) {
		if (running[j].source == NULL)
			continue;
		if (running[j].injections > 0)
			changed = true;
		free(running[j].targets);
		sdpu_stat_close(&running[j].record);
	}
	free(running);
	running = next;
	nrunning = n;
	if (sdpu_stat_publishing())
		for (size_t i = 0; i < n; i++)
			take_record(&running[i]);
	int kinds = 0;

	for (size_t i = 0; i < n; i++)
		kinds |= 1 << running[i].f.kind;
	__atomic_store_n(&sdpu_faults_on, kinds, __ATOMIC_RELAXED);
}

/* ---- matching and firing (hooks.ts matches, fires) ---- */

struct point {
	const char *ctx, *task, *event;
	const struct doca_pe *pe;
};

static __thread uint32_t my_tid;

static bool matches(const struct sdpu_fault *f, const struct point *p)
{
	if (f->pid != 0 && f->pid != self_pid)
		return false;
	if (f->thread != 0) {
		if (my_tid == 0)
			my_tid = (uint32_t)gettid();
		if ((f->thread == 1) != (my_tid == self_pid))
			return false;
	}
	if (f->ctx[0]) {
		bool any = false;

		if (p->pe != NULL)
			for (size_t i = 0; i < p->pe->nctxs && !any; i++)
				any = strcmp(p->pe->ctxs[i]->ops->name, f->ctx) == 0;
		else
			any = p->ctx != NULL && strcmp(p->ctx, f->ctx) == 0;
		if (!any)
			return false;
	}
	if (f->task[0] && (p->task == NULL || strcmp(f->task, p->task) != 0))
		return false;
	if (f->event[0] && (p->event == NULL || (strcmp(f->event, p->event) != 0 &&
						  !(strcmp(f->event, "connection_status") == 0 && strncmp(p->event, "connection_", 11) == 0))))
		return false;
	if (f->blob[0])
		return false; /* no blob passes a hook here */
	if (f->side == 0 && f->device[0] == '\0')
		return true;
	for (size_t i = 0; i < nopened; i++)
		if ((f->side == 0 || (f->side == 1) == opened[i].dpu) && (f->device[0] == '\0' || strcmp(f->device, opened[i].pci) == 0))
			return true;
	return false;
}

static void inject(struct running *r, struct target *t)
{
	t->injections++;
	r->injections++;
	changed = true;
	if (!r->recorded)
		take_record(r); /* the first injection publishes the process, if nothing did yet */
	r->record.c[0] = (double)r->injections;
}

static bool fires(struct running *r, const void *at)
{
	struct target *t = NULL;
	const struct sdpu_fault *f = &r->f;

	for (size_t i = 0; i < r->ntargets && t == NULL; i++)
		if (r->targets[i].at == at)
			t = &r->targets[i];
	if (t == NULL) {
		struct target *more = realloc(r->targets, (r->ntargets + 1) * sizeof(*more));

		if (more == NULL)
			return false;
		r->targets = more;
		t = &more[r->ntargets++];
		*t = (struct target){.at = at};
	}
	t->calls++;
	if (!f->has_count && t->fired) {
		if (f->kind != SDPU_FAULT_STALL)
			inject(r, t);
		return true;
	}
	if (f->has_count && t->injections >= f->count)
		return false;
	if (t->calls <= f->after)
		return false;
	if (f->after_ms > 0 && sdpu_now_ms() - r->since < (int64_t)f->after_ms)
		return false;
	if (f->probability < 1 && !(sdpu_mulberry32(&r->rng) < f->probability))
		return false;
	t->fired = true;
	inject(r, t);
	return true;
}

/* The first ten injections of a fault and every 1000th after (a probabilistic AGAIN must not flood). */
static void warn(struct running *r, const char *what)
{
	if (r->injections > 10 && r->injections % 1000 != 0)
		return;
	if (r->injections > 1)
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "fault %s (%s): %s (%llu injections so far)", r->f.id,
			     sdpu_fault_kind_names[r->f.kind], what, (unsigned long long)r->injections);
	else
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "fault %s (%s): %s", r->f.id, sdpu_fault_kind_names[r->f.kind], what);
	sdpu_stat_event(&r->record, SDPU_STAT_EV_FAULT, "%s: %s", r->f.id, what);
}

static void publish(void)
{
	struct sdpu_fault_count counts[256];
	size_t n = 0;

	for (size_t i = 0; i < nrunning && n < 256; i++)
		if (running[i].injections > 0)
			counts[n++] = (struct sdpu_fault_count){running[i].f.id, running[i].source, sdpu_fault_kind_names[running[i].f.kind],
								 running[i].injections};
	if (n > 0 || published)
		published = sdpu_fault_counts_write(dir, counts, n);
	changed = false;
}

/* A crash (scope process; a thread crash fires only in worker threads, which a C program's library has none of). */
static bool crashes(struct running *r, const struct point *p)
{
	return r->f.kind == SDPU_FAULT_CRASH && !r->f.scope_thread && matches(&r->f, p) && fires(r, &PROCESS);
}

static __attribute__((noreturn)) void crash(struct running *r, const char *where)
{
	publish();
	sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "fault %s (crash): process %u kills itself with SIGKILL %s", r->f.id, self_pid, where);
	for (;;)
		kill((pid_t)self_pid, SIGKILL);
}

doca_error_t sdpu_fault_at_submit(struct doca_ctx *ctx, const char *task)
{
	struct point p = {.ctx = ctx->ops->name, .task = task};
	doca_error_t err = DOCA_SUCCESS;
	char what[160];

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrunning; i++)
		if (crashes(&running[i], &p)) {
			snprintf(what, sizeof(what), "at a %s submit of %s", task, p.ctx);
			crash(&running[i], what);
		}
	for (size_t i = 0; i < nrunning && err == DOCA_SUCCESS; i++) {
		struct running *r = &running[i];

		if (r->f.kind != SDPU_FAULT_AGAIN || !matches(&r->f, &p) || !fires(r, ctx))
			continue;
		snprintf(what, sizeof(what), "AGAIN at a %s submit of %s", task, p.ctx);
		warn(r, what);
		err = DOCA_ERROR_AGAIN;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

doca_error_t sdpu_fault_at_start(struct doca_ctx *ctx)
{
	struct point p = {.ctx = ctx->ops->name};
	doca_error_t err = DOCA_SUCCESS;
	char what[128];

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrunning && err == DOCA_SUCCESS; i++) {
		struct running *r = &running[i];

		if (r->f.kind != SDPU_FAULT_DRIVER || !matches(&r->f, &p) || !fires(r, ctx))
			continue;
		snprintf(what, sizeof(what), "DRIVER at the start of %s", p.ctx);
		warn(r, what);
		err = DOCA_ERROR_DRIVER;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

bool sdpu_fault_stalls(struct doca_pe *pe)
{
	struct point p = {.pe = pe};
	bool stalled = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrunning; i++) {
		struct running *r = &running[i];
		bool already = false;

		if (r->f.kind != SDPU_FAULT_STALL)
			continue;
		for (size_t t = 0; t < r->ntargets; t++)
			already = already || (r->targets[t].at == pe && r->targets[t].fired);
		if (!matches(&r->f, &p) || !fires(r, pe))
			continue;
		if (!already) {
			char what[160];

			snprintf(what, sizeof(what), "the progress engine of %s%s stops progressing", pe->nctxs ? pe->ctxs[0]->ops->name : "nothing",
				 pe->nctxs > 1 ? ", ..." : "");
			warn(r, what);
		}
		stalled = true;
	}
	pthread_mutex_unlock(&lock);
	return stalled;
}

bool sdpu_fault_lose_event(struct doca_ctx *ctx, const char *event)
{
	struct point p = {.ctx = ctx->ops->name, .event = event};
	bool lost = false;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrunning && !lost; i++) {
		struct running *r = &running[i];

		if (r->f.kind != SDPU_FAULT_LOSE_EVENT || !matches(&r->f, &p) || !fires(r, ctx))
			continue;
		char what[160];

		snprintf(what, sizeof(what), "lost a %s event of %s", event, p.ctx);
		warn(r, what);
		lost = true;
	}
	pthread_mutex_unlock(&lock);
	return lost;
}

void sdpu_faults_device(const char *pci, bool dpu_side)
{
	pthread_mutex_lock(&lock);
	bool known = false;

	for (size_t i = 0; i < nopened; i++)
		known = known || strcmp(opened[i].pci, pci) == 0;
	if (!known && nopened < sizeof(opened) / sizeof(opened[0])) {
		snprintf(opened[nopened].pci, sizeof(opened[nopened].pci), "%s", pci);
		opened[nopened++].dpu = dpu_side;
	}
	pthread_mutex_unlock(&lock);
}

/* ---- sources and the cadence (sources.ts) ---- */

/* Re-reads the plan file if its stamp changed (lock held). */
static void refresh(void)
{
	char now[96], error[512];
	struct sdpu_fault_plan plan;
	uint32_t seed = 1;

	sdpu_fault_plan_stamp(dir, now, sizeof(now));
	if (strcmp(now, stamp) == 0)
		return;
	snprintf(stamp, sizeof(stamp), "%s", now);
	if (!sdpu_fault_plan_read(dir, &plan, &seed, error, sizeof(error))) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s; its faults are not in force", error);
		memset(&plan, 0, sizeof(plan));
	}
	sdpu_fault_plan_free(&file_plan);
	file_plan = plan;
	file_seed = seed;
	install();
}

static void pass(void *unused)
{
	struct point none = {0};

	(void)unused;
	pthread_mutex_lock(&lock);
	refresh();
	for (size_t i = 0; i < nrunning; i++)
		if (crashes(&running[i], &none))
			crash(&running[i], "on the liveness cadence");
	if (sdpu_stat_publishing())
		for (size_t i = 0; i < nrunning; i++)
			take_record(&running[i]);
	if (changed)
		publish();
	pthread_mutex_unlock(&lock);
	sdpu_io_timer(CADENCE_MS, pass, NULL); /* the io lock is held: we run on the helper thread */
}

/* Counts published on the cadence would miss the last 200 ms: once more at exit. */
static void at_exit(void)
{
	pthread_mutex_lock(&lock);
	if (changed && getpid() == (pid_t)self_pid)
		publish();
	pthread_mutex_unlock(&lock);
}

doca_error_t sdpu_faults_follow(const char *fabric_dir)
{
	doca_error_t err = DOCA_SUCCESS;
	char error[512];

	pthread_mutex_lock(&lock);
	if (followed)
		goto done;
	self_pid = (uint32_t)getpid();
	if (!sdpu_fault_env_read(&env_plan, &env_seed, error, sizeof(error))) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_dev_open: %s", error);
		err = DOCA_ERROR_INVALID_VALUE;
		goto done;
	}
	followed = true;
	snprintf(dir, sizeof(dir), "%s", fabric_dir);
	stamp[0] = '\0';
	refresh();
	if (stamp[0] == '\0')
		install(); /* no file: the env plan alone */
	atexit(at_exit);
	pthread_mutex_unlock(&lock);
	if (sdpu_io_start() == DOCA_SUCCESS) {
		sdpu_io_lock();
		sdpu_io_timer(CADENCE_MS, pass, NULL);
		sdpu_io_unlock();
	}
	return DOCA_SUCCESS;
done:
	pthread_mutex_unlock(&lock);
	return err;
}
