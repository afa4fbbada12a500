/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Doorbells (docs/protocol.md, "Doorbells"; docs/wakeup.md): how anything in the fabric wakes a
 * sleeping progress engine. An engine owns a bell: a pipe whose read end is its notification handle and a
 * segment with its state word and one ready bit per source. A ringer publishes its data, sets the
 * source's bit and writes one byte only if it moves the state from ARMED to RUNG.
 */
#ifndef SOFTDPU_CAPI_BELL_H_
#define SOFTDPU_CAPI_BELL_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <doca_error.h>

#include "fabric/segment.h"

enum sdpu_bell_state { SDPU_BELL_POLL = 0, SDPU_BELL_AWAKE = 1, SDPU_BELL_ARMED = 2, SDPU_BELL_RUNG = 3 };

#define SDPU_BELL_CAPACITY 16384
#define SDPU_BELL_REF_SIZE 64

/* What a peer needs to ring one source: the bell segment and the bit. */
struct sdpu_bell_ref {
	struct sdpu_descriptor segment;
	uint32_t bit;
};

/* An engine's own bell. Bits are taken and given back under `lock` (any thread); the rest is lock-free. */
struct sdpu_bell {
	struct sdpu_segment *segment;
	int read_fd;
	int write_fd;
	pthread_mutex_t lock;
	uint32_t used_words;
	uint32_t used[SDPU_BELL_CAPACITY / 32];
};

doca_error_t sdpu_bell_create(struct sdpu_bell **out);
void sdpu_bell_close(struct sdpu_bell *bell);

/* A free bit, or -1 when the engine already has SDPU_BELL_CAPACITY sources. */
int sdpu_bell_take(struct sdpu_bell *bell);
void sdpu_bell_give(struct sdpu_bell *bell, uint32_t bit);

struct sdpu_bell_ref sdpu_bell_ref_of(const struct sdpu_bell *bell, uint32_t bit);

uint32_t sdpu_bell_state(const struct sdpu_bell *bell);
/* Stores ARMED; true if a ringer already set a bit (then do not sleep). */
bool sdpu_bell_arm(struct sdpu_bell *bell);
/* ARMED -> RUNG by the engine itself (local work); false if a ringer did it first. */
bool sdpu_bell_claim(struct sdpu_bell *bell);
/* AWAKE again; the state it left. */
uint32_t sdpu_bell_disarm(struct sdpu_bell *bell);
bool sdpu_bell_any(const struct sdpu_bell *bell);
/* Takes every set bit, clearing it, and passes it to `visit`. */
void sdpu_bell_harvest(struct sdpu_bell *bell, void (*visit)(void *arg, uint32_t bit), void *arg);
/* One byte into the engine's own pipe (its handle shows the work). */
void sdpu_bell_ring_self(struct sdpu_bell *bell);
void sdpu_bell_drain(struct sdpu_bell *bell);
/* Rings source `bit` from another thread of this process, as a peer would. */
void sdpu_bell_ring_local(struct sdpu_bell *bell, uint32_t bit);

/* Bell references inside other segments (64 bytes at `at`). */
void sdpu_bell_ref_publish(uint8_t *at, const struct sdpu_bell_ref *ref);
void sdpu_bell_ref_withdraw(uint8_t *at);
/* 1 and the reference if one is published, 0 if none is, -1 if what is there cannot be one. */
int sdpu_bell_ref_read(const uint8_t *at, struct sdpu_bell_ref *ref);

/* A peer's bell, opened to ring it. */
struct sdpu_remote_bell {
	struct sdpu_segment *segment;
	int fd;
	uint32_t capacity;
	bool gone;
};

/* NOT_FOUND for a bell that is gone, INVALID_VALUE for one that cannot be (or a bit beyond its capacity). */
doca_error_t sdpu_remote_bell_open(const struct sdpu_bell_ref *ref, struct sdpu_remote_bell **out);
void sdpu_remote_bell_ring(struct sdpu_remote_bell *bell, uint32_t bit);
void sdpu_remote_bell_close(struct sdpu_remote_bell *bell);
/* Opens, rings once and closes; a bell that does not open has nobody to wake. */
void sdpu_ring_once(const struct sdpu_bell_ref *ref);

#endif /* SOFTDPU_CAPI_BELL_H_ */
