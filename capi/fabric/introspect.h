/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Introspection (docs/protocol.md, "Introspection", "Epitaphs"): the records `softdpu top` and `softdpu
 * view` read of this process's objects. The process has one stats segment on its fabric (thread id = its
 * pid), announced by stats.<pid>-<start>.<pid> when the first object is recorded, and left as an epitaph
 * when the process exits normally (atexit).
 *
 * An object embeds a struct sdpu_stat. Its counters `c` are the slot's own (plain stores by the thread that
 * owns the object, as the spec says: aligned 8-byte stores outside the seqlock), or the record's private
 * array when nothing publishes (no fabric, every slot in use): either way a hot path stores without a
 * branch and without a syscall. Opening, closing, state changes and events take one lock.
 */
#ifndef SOFTDPU_CAPI_INTROSPECT_H_
#define SOFTDPU_CAPI_INTROSPECT_H_

#include <stdint.h>
#include <string.h>

/* Slot kinds (src/fabric/stats-kinds.ts StatKind). */
#define SDPU_STAT_DEVICE 1
#define SDPU_STAT_SERVER 2
#define SDPU_STAT_CLIENT 3
#define SDPU_STAT_CONNECTION 4
#define SDPU_STAT_CONSUMER 5
#define SDPU_STAT_PRODUCER 6
#define SDPU_STAT_SYNC_EVENT 7
#define SDPU_STAT_FAULT 11

/* Event kinds. */
#define SDPU_STAT_EV_CONNECT 1
#define SDPU_STAT_EV_DISCONNECT 2
#define SDPU_STAT_EV_ERROR 5
#define SDPU_STAT_EV_FAULT 6

#define SDPU_STAT_COUNTERS 20

struct sdpu_stat {
	/* The slot (-1: not published); `c` points into it, or at `own`. */
	int32_t slot;
	double *c;
	double own[SDPU_STAT_COUNTERS];
};

/*
 * Records an object of `kind` named `name` (under `parent`, which may be NULL or unpublished) with `id`.
 * Never fails: without a fabric, or with every slot taken, the record is private.
 */
void sdpu_stat_open(struct sdpu_stat *s, uint32_t kind, const char *name, const struct sdpu_stat *parent, double id);

/* A record nobody sees (before open, or for an object that is never published). */
void sdpu_stat_private(struct sdpu_stat *s);

/* A record copied to another place (a private one's counters move with it). */
static inline void sdpu_stat_moved(struct sdpu_stat *s)
{
	if (s->slot < 0)
		s->c = s->own;
}

/* The object ended: its slot keeps its final values, marked ended, for the epitaph. Once. */
void sdpu_stat_close(struct sdpu_stat *s);

/* The context state (an atomic store), the peer process, an event in the process's ring. NULL is ignored. */
void sdpu_stat_state(struct sdpu_stat *s, int32_t state);
void sdpu_stat_peer(struct sdpu_stat *s, uint32_t pid);
void sdpu_stat_event(struct sdpu_stat *s, uint32_t kind, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* A u64 counter (a sync event's value), stored exactly. */
static inline void sdpu_stat_u64(struct sdpu_stat *s, unsigned index, uint64_t value)
{
	memcpy(&s->c[index], &value, sizeof(value));
}

/* Whether this process publishes already (fault records join then). */
int sdpu_stat_publishing(void);

#endif /* SOFTDPU_CAPI_INTROSPECT_H_ */
