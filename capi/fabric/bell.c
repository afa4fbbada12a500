/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fabric/bell.h. The bell segment (after the 64-byte header): 64 magic 'BELL', 68 version 1, 72 capacity,
 * 76 owner thread id, 80 f64 pipe inode, 88 pipe write fd, 128 state, 192 ready bits. Writes to a pipe
 * whose reader is gone would raise SIGPIPE: this library blocks it around each write and takes a signal
 * the write raised, so the program's own disposition of SIGPIPE is never changed.
 */
#define _GNU_SOURCE
#include "fabric/bell.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/shm.h"

#define MAGIC 0x4c4c4542 /* 'BELL' */
#define VERSION 1
#define OFF_MAGIC 64
#define OFF_VERSION 68
#define OFF_CAPACITY 72
#define OFF_THREAD 76
#define OFF_INODE 80
#define OFF_WRITE_FD 88
#define OFF_STATE 128
#define OFF_BITS 192

static uint8_t *state_word(const struct sdpu_segment *s)
{
	return s->base + OFF_STATE;
}

static uint8_t *bit_word(const struct sdpu_segment *s, uint32_t bit)
{
	return s->base + OFF_BITS + 4 * (bit >> 5);
}

doca_error_t sdpu_bell_create(struct sdpu_bell **out)
{
	struct sdpu_bell *bell = calloc(1, sizeof(*bell));
	int fds[2];
	struct stat st;
	doca_error_t err;

	if (bell == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = sdpu_segment_create("bell", OFF_BITS - SDPU_SEGMENT_HEADER + SDPU_BELL_CAPACITY / 8, &bell->segment);
	if (err != DOCA_SUCCESS) {
		free(bell);
		return err;
	}
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0 || fstat(fds[0], &st) != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "doca_pe", "cannot create the engine's doorbell: %s", strerror(errno));
		sdpu_segment_close(bell->segment);
		free(bell);
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	bell->read_fd = fds[0];
	bell->write_fd = fds[1];
	pthread_mutex_init(&bell->lock, NULL);
	uint8_t *b = bell->segment->base;

	sdpu_put_u32(b + OFF_VERSION, VERSION);
	sdpu_put_u32(b + OFF_CAPACITY, SDPU_BELL_CAPACITY);
	sdpu_put_u32(b + OFF_THREAD, (uint32_t)syscall(SYS_gettid));
	sdpu_put_f64(b + OFF_INODE, (double)st.st_ino);
	sdpu_put_u32(b + OFF_WRITE_FD, (uint32_t)fds[1]);
	sdpu_store(b + OFF_MAGIC, MAGIC);
	*out = bell;
	return DOCA_SUCCESS;
}

void sdpu_bell_close(struct sdpu_bell *bell)
{
	if (bell == NULL)
		return;
	/* Ringers holding the write end get EPIPE from now on; the segment goes with its last mapping. */
	close(bell->read_fd);
	close(bell->write_fd);
	sdpu_segment_revoke(bell->segment);
	sdpu_segment_close(bell->segment);
	pthread_mutex_destroy(&bell->lock);
	free(bell);
}

int sdpu_bell_take(struct sdpu_bell *bell)
{
	int bit = -1;

	pthread_mutex_lock(&bell->lock);
	for (uint32_t w = 0; w < SDPU_BELL_CAPACITY / 32 && bit < 0; w++) {
		if (bell->used[w] == UINT32_MAX)
			continue;
		uint32_t b = (uint32_t)__builtin_ctz(~bell->used[w]);

		bell->used[w] |= 1u << b;
		bit = (int)(w * 32 + b);
		if (w + 1 > __atomic_load_n(&bell->used_words, __ATOMIC_RELAXED))
			__atomic_store_n(&bell->used_words, w + 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&bell->lock);
	return bit;
}

void sdpu_bell_give(struct sdpu_bell *bell, uint32_t bit)
{
	sdpu_and(bit_word(bell->segment, bit), ~(1u << (bit & 31)));
	pthread_mutex_lock(&bell->lock);
	bell->used[bit >> 5] &= ~(1u << (bit & 31));
	pthread_mutex_unlock(&bell->lock);
}

struct sdpu_bell_ref sdpu_bell_ref_of(const struct sdpu_bell *bell, uint32_t bit)
{
	struct sdpu_bell_ref ref = {bell->segment->descriptor, bit};

	return ref;
}

uint32_t sdpu_bell_state(const struct sdpu_bell *bell)
{
	return (uint32_t)sdpu_load(state_word(bell->segment));
}

bool sdpu_bell_arm(struct sdpu_bell *bell)
{
	sdpu_store(state_word(bell->segment), SDPU_BELL_ARMED);
	return sdpu_bell_any(bell);
}

bool sdpu_bell_claim(struct sdpu_bell *bell)
{
	return sdpu_cas(state_word(bell->segment), SDPU_BELL_ARMED, SDPU_BELL_RUNG);
}

uint32_t sdpu_bell_disarm(struct sdpu_bell *bell)
{
	return (uint32_t)sdpu_exchange(state_word(bell->segment), SDPU_BELL_AWAKE);
}

bool sdpu_bell_any(const struct sdpu_bell *bell)
{
	uint32_t words = __atomic_load_n(&bell->used_words, __ATOMIC_SEQ_CST);

	for (uint32_t w = 0; w < words; w++)
		if (sdpu_load(bell->segment->base + OFF_BITS + 4 * w) != 0)
			return true;
	return false;
}

void sdpu_bell_harvest(struct sdpu_bell *bell, void (*visit)(void *arg, uint32_t bit), void *arg)
{
	uint32_t words = __atomic_load_n(&bell->used_words, __ATOMIC_SEQ_CST);

	for (uint32_t w = 0; w < words; w++) {
		uint8_t *word = bell->segment->base + OFF_BITS + 4 * w;

		if (sdpu_load(word) == 0)
			continue;
		uint32_t bits = (uint32_t)sdpu_exchange(word, 0);

		while (bits != 0) {
			uint32_t b = (uint32_t)__builtin_ctz(bits);

			bits &= bits - 1;
			visit(arg, w * 32 + b);
		}
	}
}

/* One byte into a pipe: 0 written, 1 already full (rung), 2 nobody reads any more. SIGPIPE stays unseen. */
static int pipe_write(int fd)
{
	static const uint8_t byte = 0x42;
	sigset_t pipe_only, old;
	ssize_t n;
	int e;

	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
	do {
		n = write(fd, &byte, 1);
	} while (n < 0 && errno == EINTR);
	e = errno;
	if (n < 0 && e == EPIPE && !sigismember(&old, SIGPIPE)) {
		static const struct timespec now = {0, 0};

		while (sigtimedwait(&pipe_only, NULL, &now) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (n == 1)
		return 0;
	return e == EAGAIN ? 1 : 2;
}

void sdpu_bell_ring_self(struct sdpu_bell *bell)
{
	pipe_write(bell->write_fd);
}

void sdpu_bell_drain(struct sdpu_bell *bell)
{
	uint8_t buf[256];
	ssize_t n;

	do {
		n = read(bell->read_fd, buf, sizeof(buf));
	} while (n == (ssize_t)sizeof(buf) || (n < 0 && errno == EINTR));
}

/* The ringer's sequence (protocol.md, "Ringing"); returns whether it wrote and how. */
static int ring(const struct sdpu_segment *s, int fd, uint32_t bit, bool gone)
{
	uint8_t *state = state_word(s), *word = bit_word(s, bit);
	uint32_t mask = 1u << (bit & 31);

	if (sdpu_load(state) == SDPU_BELL_POLL)
		return -1;
	if (((uint32_t)sdpu_load(word) & mask) == 0)
		sdpu_or(word, mask);
	if (sdpu_load(state) == SDPU_BELL_ARMED && sdpu_cas(state, SDPU_BELL_ARMED, SDPU_BELL_RUNG) && !gone)
		return pipe_write(fd);
	return -1;
}

void sdpu_bell_ring_local(struct sdpu_bell *bell, uint32_t bit)
{
	ring(bell->segment, bell->write_fd, bit, false);
}

void sdpu_bell_ref_publish(uint8_t *at, const struct sdpu_bell_ref *ref)
{
	sdpu_descriptor_encode(&ref->segment, at + 8);
	sdpu_put_u32(at + 8 + SDPU_DESCRIPTOR_SIZE, ref->bit);
	sdpu_store(at, 1);
}

void sdpu_bell_ref_withdraw(uint8_t *at)
{
	sdpu_store(at, 0);
}

int sdpu_bell_ref_read(const uint8_t *at, struct sdpu_bell_ref *ref)
{
	if (sdpu_load(at) != 1)
		return 0;
	if (sdpu_descriptor_decode(at + 8, &ref->segment) != DOCA_SUCCESS)
		return -1;
	ref->bit = sdpu_get_u32(at + 8 + SDPU_DESCRIPTOR_SIZE);
	return 1;
}

doca_error_t sdpu_remote_bell_open(const struct sdpu_bell_ref *ref, struct sdpu_remote_bell **out)
{
	struct sdpu_segment *s;
	struct sdpu_remote_bell *bell;
	char path[64];
	struct stat st;
	uint32_t capacity;
	double inode;
	int fd;
	doca_error_t err = sdpu_segment_open(&ref->segment, "bell", "doorbell", &s);

	if (err != DOCA_SUCCESS)
		return err;
	capacity = sdpu_get_u32(s->base + OFF_CAPACITY);
	if ((uint32_t)sdpu_load(s->base + OFF_MAGIC) != MAGIC || sdpu_get_u32(s->base + OFF_VERSION) != VERSION ||
	    capacity % 32 != 0 || OFF_BITS + (uint64_t)capacity / 8 > s->size || ref->bit >= capacity) {
		sdpu_segment_close(s);
		return DOCA_ERROR_INVALID_VALUE;
	}
	inode = sdpu_get_f64(s->base + OFF_INODE);
	snprintf(path, sizeof(path), "/proc/%u/fd/%u", ref->segment.pid, sdpu_get_u32(s->base + OFF_WRITE_FD));
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOENT || errno == ENXIO ? DOCA_ERROR_NOT_FOUND : DOCA_ERROR_OPERATING_SYSTEM;
		sdpu_segment_close(s);
		return err;
	}
	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || (double)st.st_ino != inode) {
		close(fd);
		sdpu_segment_close(s);
		return DOCA_ERROR_NOT_FOUND;
	}
	bell = calloc(1, sizeof(*bell));
	if (bell == NULL) {
		close(fd);
		sdpu_segment_close(s);
		return DOCA_ERROR_NO_MEMORY;
	}
	bell->segment = s;
	bell->fd = fd;
	bell->capacity = capacity;
	*out = bell;
	return DOCA_SUCCESS;
}

void sdpu_remote_bell_ring(struct sdpu_remote_bell *bell, uint32_t bit)
{
	if (bit >= bell->capacity)
		return;
	if (ring(bell->segment, bell->fd, bit, bell->gone) == 2)
		bell->gone = true;
}

void sdpu_remote_bell_close(struct sdpu_remote_bell *bell)
{
	if (bell == NULL)
		return;
	close(bell->fd);
	sdpu_segment_close(bell->segment);
	free(bell);
}

void sdpu_ring_once(const struct sdpu_bell_ref *ref)
{
	struct sdpu_remote_bell *bell;

	if (sdpu_remote_bell_open(ref, &bell) != DOCA_SUCCESS)
		return;
	sdpu_remote_bell_ring(bell, ref->bit);
	sdpu_remote_bell_close(bell);
}
