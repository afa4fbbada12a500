/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sync event control block (docs/protocol.md, "Sync event control block"): 64 magic 'SEVT',
 * 68 version 2, 72 waiter capacity, 76 state, 128 the counter (unless set_addr gave it), 192 the count
 * of entries that want, 196 the high-water mark, then 128-byte waiter entries from 256: +0 state,
 * +4 wants, +8 generation, +16 owner thread (u32 pid, u32 tid, f64 start, f64 thread start), +64 the
 * bell reference of the waiting context. Everything read from the table is checked: a bad entry is
 * skipped, and one whose thread died is given back by the next updater that finds it.
 */
#include <string.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/shm.h"
#include "fabric/liveness.h"
#include "syncevent/syncevent.h"

doca_error_t sdpu_se_control_create(struct sdpu_segment **out)
{
	struct sdpu_segment *s;
	doca_error_t err = sdpu_segment_create("syncevent", SDPU_SE_TABLE - SDPU_SEGMENT_HEADER + SDPU_SE_CAPACITY * SDPU_SE_ENTRY_SIZE, &s);

	if (err != DOCA_SUCCESS)
		return err;
	sdpu_put_u32(s->base + SDPU_SE_OFF_VERSION, SDPU_SE_VERSION);
	sdpu_put_u32(s->base + SDPU_SE_OFF_CAPACITY, SDPU_SE_CAPACITY);
	sdpu_store(s->base + SDPU_SE_OFF_STATE, SDPU_SE_LIVE);
	sdpu_store(s->base + SDPU_SE_OFF_MAGIC, SDPU_SE_MAGIC);
	*out = s;
	return DOCA_SUCCESS;
}

const char *sdpu_se_control_problem(const struct sdpu_segment *s)
{
	uint32_t capacity;

	if (s->size < SDPU_SE_TABLE || (uint32_t)sdpu_load(s->base + SDPU_SE_OFF_MAGIC) != SDPU_SE_MAGIC)
		return "is not a sync event control block";
	if (sdpu_get_u32(s->base + SDPU_SE_OFF_VERSION) != SDPU_SE_VERSION)
		return "is a control block of another version";
	capacity = sdpu_get_u32(s->base + SDPU_SE_OFF_CAPACITY);
	if (capacity < 1 || SDPU_SE_TABLE + (uint64_t)capacity * SDPU_SE_ENTRY_SIZE > s->size)
		return "declares more waiters than it has room for";
	if (sdpu_load(s->base + SDPU_SE_OFF_STATE) != SDPU_SE_LIVE)
		return "belongs to an event that was destroyed";
	return NULL;
}

static uint8_t *field(const struct sdpu_se_waiters *w, uint32_t entry, uint32_t offset)
{
	return w->base + SDPU_SE_TABLE + (size_t)entry * SDPU_SE_ENTRY_SIZE + offset;
}

void sdpu_se_waiters_init(struct sdpu_se_waiters *w, const struct sdpu_segment *control)
{
	uint32_t declared = sdpu_get_u32(control->base + SDPU_SE_OFF_CAPACITY);
	uint32_t room = (uint32_t)((control->size - SDPU_SE_TABLE) / SDPU_SE_ENTRY_SIZE);

	memset(w, 0, sizeof(*w));
	w->base = control->base;
	w->capacity = declared < room ? declared : room;
	if (w->capacity > SDPU_SE_CAPACITY)
		w->capacity = SDPU_SE_CAPACITY; /* this handle keeps a bell for at most this many */
	w->entry = -1;
}

/* The owner thread an entry names; false if its fields are not what a live thread could have. */
static bool owner_alive(const struct sdpu_se_waiters *w, uint32_t i)
{
	uint32_t pid = sdpu_get_u32(field(w, i, SDPU_SE_E_OWNER));
	uint32_t tid = sdpu_get_u32(field(w, i, SDPU_SE_E_OWNER + 4));
	double start = sdpu_get_f64(field(w, i, SDPU_SE_E_OWNER + 8));
	double tstart = sdpu_get_f64(field(w, i, SDPU_SE_E_OWNER + 16));

	if (!sdpu_safe_integer(start) || !sdpu_safe_integer(tstart))
		return false;
	return sdpu_thread_alive(pid, (uint64_t)start, tid, (uint64_t)tstart);
}

/* Gives back the entry of a waiter that died, and its part of the waiting count. */
static void reap(struct sdpu_se_waiters *w, uint32_t i)
{
	int32_t generation = sdpu_load(field(w, i, SDPU_SE_E_GEN));

	if (sdpu_cas(field(w, i, SDPU_SE_E_WANTS), 1, 0))
		sdpu_add(w->base + SDPU_SE_WAITING, -1);
	/* Only if nobody claimed it again meanwhile (the generation would differ). */
	if (sdpu_load(field(w, i, SDPU_SE_E_GEN)) == generation) {
		sdpu_bell_ref_withdraw(field(w, i, SDPU_SE_E_BELL));
		sdpu_cas(field(w, i, SDPU_SE_E_STATE), 1, 0);
	}
}

/* The bell of entry i for its current claim: NULL when it cannot be reached (not published, does not open). */
static struct sdpu_remote_bell *bell_of(struct sdpu_se_waiters *w, uint32_t i)
{
	int32_t generation = sdpu_load(field(w, i, SDPU_SE_E_GEN));
	struct sdpu_se_bell *b = &w->bells[i];
	struct sdpu_bell_ref ref;
	int published;

	if (b->opened && b->generation == generation)
		return b->bell;
	sdpu_remote_bell_close(b->bell);
	b->bell = NULL;
	b->opened = false;
	published = sdpu_bell_ref_read(field(w, i, SDPU_SE_E_BELL), &ref);
	b->opened = true;
	b->generation = generation;
	if (published == 1 && sdpu_remote_bell_open(&ref, &b->bell) == DOCA_SUCCESS)
		b->bit = ref.bit;
	else
		b->bell = NULL;
	return b->bell;
}

static void ring(struct sdpu_se_waiters *w, bool only_wanting)
{
	uint32_t high = (uint32_t)sdpu_load(w->base + SDPU_SE_HIGH);
	uint32_t n = high < w->capacity ? high : w->capacity;
	bool audit = (++w->rings & (SDPU_SE_AUDIT_EVERY - 1)) == 0;

	for (uint32_t i = 0; i < n; i++) {
		if (sdpu_load(field(w, i, SDPU_SE_E_STATE)) != 1)
			continue;
		if (only_wanting && sdpu_load(field(w, i, SDPU_SE_E_WANTS)) != 1)
			continue;
		struct sdpu_bell_ref ref;

		/* Claimed, its reference not published yet: being claimed (the owner fields may not be written yet). */
		if (sdpu_bell_ref_read(field(w, i, SDPU_SE_E_BELL), &ref) == 0)
			continue;
		struct sdpu_remote_bell *bell = bell_of(w, i);
		bool unreachable = bell == NULL || bell->gone || sdpu_segment_revoked(bell->segment);
		bool dead = unreachable || (audit && !owner_alive(w, i));

		if (!dead)
			sdpu_remote_bell_ring(bell, w->bells[i].bit);
		else if ((int)i != w->entry && !owner_alive(w, i))
			reap(w, i);
	}
}

void sdpu_se_waiters_ring_if_waiting(struct sdpu_se_waiters *w)
{
	if (sdpu_load(w->base + SDPU_SE_WAITING) > 0)
		ring(w, true);
}

void sdpu_se_waiters_ring_all(struct sdpu_se_waiters *w)
{
	ring(w, false);
}

static bool claim(struct sdpu_se_waiters *w, const struct sdpu_bell_ref *ref)
{
	uint32_t tid;
	uint64_t tstart;
	struct sdpu_identity self = sdpu_self();

	sdpu_self_thread(&tid, &tstart);
	for (uint32_t i = 0; i < w->capacity; i++) {
		if (!sdpu_cas(field(w, i, SDPU_SE_E_STATE), 0, 1))
			continue;
		sdpu_add(field(w, i, SDPU_SE_E_GEN), 1);
		sdpu_put_u32(field(w, i, SDPU_SE_E_OWNER), self.pid);
		sdpu_put_u32(field(w, i, SDPU_SE_E_OWNER + 4), tid);
		sdpu_put_f64(field(w, i, SDPU_SE_E_OWNER + 8), (double)self.start);
		sdpu_put_f64(field(w, i, SDPU_SE_E_OWNER + 16), (double)tstart);
		sdpu_bell_ref_publish(field(w, i, SDPU_SE_E_BELL), ref);
		for (int32_t high = sdpu_load(w->base + SDPU_SE_HIGH); high < (int32_t)i + 1; high = sdpu_load(w->base + SDPU_SE_HIGH))
			if (sdpu_cas(w->base + SDPU_SE_HIGH, high, (int32_t)i + 1))
				break;
		w->entry = (int)i;
		return true;
	}
	return false;
}

bool sdpu_se_waiters_want(struct sdpu_se_waiters *w, bool on, const struct sdpu_bell_ref *ref)
{
	if (on == w->wanting)
		return true;
	if (on && w->entry < 0 && !claim(w, ref))
		return false;
	w->wanting = on;
	sdpu_store(field(w, (uint32_t)w->entry, SDPU_SE_E_WANTS), on ? 1 : 0);
	sdpu_add(w->base + SDPU_SE_WAITING, on ? 1 : -1);
	return true;
}

void sdpu_se_waiters_release(struct sdpu_se_waiters *w)
{
	if (w->entry < 0)
		return;
	if (w->wanting) {
		w->wanting = false;
		sdpu_store(field(w, (uint32_t)w->entry, SDPU_SE_E_WANTS), 0);
		sdpu_add(w->base + SDPU_SE_WAITING, -1);
	}
	sdpu_bell_ref_withdraw(field(w, (uint32_t)w->entry, SDPU_SE_E_BELL));
	sdpu_store(field(w, (uint32_t)w->entry, SDPU_SE_E_STATE), 0);
	w->entry = -1;
}

void sdpu_se_waiters_close(struct sdpu_se_waiters *w)
{
	for (uint32_t i = 0; i < SDPU_SE_CAPACITY; i++) {
		sdpu_remote_bell_close(w->bells[i].bell);
		w->bells[i].bell = NULL;
		w->bells[i].opened = false;
	}
}
