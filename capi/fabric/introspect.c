/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fabric/introspect.h: the stats segment of src/fabric/stats.ts, written by a C process. One segment per
 * process (threads of a C program share their objects, so the record is the process's, tid = pid); its
 * writers serialize on one lock, so the segment has one writer at a time as the spec requires.
 */
#define _GNU_SOURCE
#include "fabric/introspect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/time.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/bytes.h"
#include "core/internal.h"
#include "fabric/fabric.h"
#include "fabric/liveness.h"
#include "fabric/segment.h"

#define MAGIC 0x54415453 /* 'STAT' */
#define VERSION 2
#define SLOTS 256
#define EVENTS 64
#define SLOT_SIZE 256
#define EVENT_SIZE 64
#define OFF_CREATED 104
#define OFF_EXITED 112
#define OFF_TITLE 128
#define OFF_EVENTS 192
#define OFF_SLOTS (OFF_EVENTS + EVENTS * EVENT_SIZE)
#define NAME_BYTES 64
#define KIND_ENDED 0x80000000u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* 0: not tried, 1: publishing, -1: cannot (no fabric, or it failed once: introspection never fails a program). */
static int status;
static struct sdpu_segment *segment;
static char dir[PATH_MAX], announcement[PATH_MAX + 64];
static uint32_t self_pid;
/* Slots 0..used-1 were used; ended ones wait in `ended` (a FIFO), the longest ended first. */
static uint32_t used;
static int32_t ended[SLOTS];
static uint32_t ended_head, nended;


/* Milliseconds since the epoch, as the spec's times are. */
static double wall_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec * 1000 + (double)(tv.tv_usec / 1000);
}

static uint8_t *at(uint32_t offset)
{
	return segment->base + offset;
}

static int32_t *word(uint32_t offset)
{
	return (int32_t *)(void *)at(offset);
}

static void put_text(uint32_t offset, size_t size, const char *text)
{
	size_t n = strnlen(text, size - 1);

	memset(at(offset), 0, size);
	memcpy(at(offset), text, n);
}

/* The program's argv, base names, space-separated (what a TypeScript process shows of its script). */
static void title(char *out, size_t size)
{
	char buf[512];
	size_t n = 0, len = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	out[0] = '\0';
	if (fd >= 0) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);

		n = r > 0 ? (size_t)r : 0;
		close(fd);
	}
	buf[n] = '\0';
	for (size_t i = 0; i < n && len + 1 < size; i += strlen(buf + i) + 1) {
		const char *arg = buf + i, *slash = strrchr(arg, '/');
		int w = snprintf(out + len, size - len, "%s%s", len ? " " : "", slash != NULL && slash[1] ? slash + 1 : arg);

		if (w < 0)
			break;
		len += (size_t)w < size - len ? (size_t)w : size - len - 1;
	}
}

static void write_epitaph(void);

/* Taken when the library loads: a program may rewrite its argv (getopt, strtok) before it opens a device. */
static char program_title[NAME_BYTES];

__attribute__((constructor)) static void take_title(void)
{
	title(program_title, sizeof(program_title));
}

/* Creates the segment and its announcement (lock held). */
static void begin(void)
{
	const struct sdpu_fabric *fabric;
	struct sdpu_identity self = sdpu_self();
	char tmp[PATH_MAX + 64], token[33];
	FILE *f;

	status = -1;
	if (sdpu_fabric_join(&fabric) != DOCA_SUCCESS)
		return;
	if (sdpu_segment_create("stats", OFF_SLOTS - SDPU_SEGMENT_HEADER + SLOTS * SLOT_SIZE, &segment) != DOCA_SUCCESS)
		return;
	snprintf(dir, sizeof(dir), "%s", fabric->dir);
	self_pid = self.pid;
	sdpu_put32(at(68), VERSION);
	sdpu_put32(at(72), SLOTS);
	sdpu_put32(at(76), EVENTS);
	sdpu_put32(at(80), self.pid);
	sdpu_put32(at(84), self.pid);
	sdpu_putf64(at(88), (double)self.start);
	put_text(OFF_TITLE, NAME_BYTES, program_title);
	__atomic_store_n(word(64), MAGIC, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 16; i++)
		snprintf(token + 2 * i, 3, "%02x", segment->descriptor.token[i]);
	snprintf(tmp, sizeof(tmp), "%s/stats-tmp.%u-%llu.%u", dir, self.pid, (unsigned long long)self.start, self.pid);
	snprintf(announcement, sizeof(announcement), "%s/stats.%u-%llu.%u", dir, self.pid, (unsigned long long)self.start, self.pid);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		sdpu_segment_close(segment);
		segment = NULL;
		return;
	}
	fprintf(f, "{\"pid\":%u,\"start\":%llu,\"fd\":%u,\"size\":%.0f,\"token\":\"%s\",\"tid\":%u}", self.pid,
		(unsigned long long)self.start, segment->descriptor.fd, segment->descriptor.size, token, self.pid);
	if (fclose(f) != 0 || rename(tmp, announcement) != 0) {
		unlink(tmp);
		sdpu_segment_close(segment);
		segment = NULL;
		return;
	}
	/* Stamped once the announcement can be listed (a look that began before may have missed it). */
	sdpu_putf64(at(OFF_CREATED), wall_ms());
	atexit(write_epitaph);
	status = 1;
	sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, "fabric", "publishing introspection records in %s", announcement);
}

/*
 * At a normal exit: the used part of the segment, header zeroed, `slots` = the slots used, the exit time,
 * to stats.<...>.exited (written whole to tmp.<pid>-<start>.<12 hex>, renamed); then the announcement goes.
 * A forked child that exits leaves nothing: the record is its parent's.
 */
static void write_epitaph(void)
{
	char tmp[PATH_MAX + 64], final[PATH_MAX + 80];
	uint8_t rnd[6];
	size_t size;
	uint8_t *copy;
	int fd;

	pthread_mutex_lock(&lock);
	if (status != 1 || getpid() != (pid_t)self_pid) {
		pthread_mutex_unlock(&lock);
		return;
	}
	size = OFF_SLOTS + (size_t)used * SLOT_SIZE;
	copy = calloc(1, size);
	if (copy != NULL && getrandom(rnd, sizeof(rnd), 0) == (ssize_t)sizeof(rnd)) {
		struct sdpu_identity self = sdpu_self();
		int n = snprintf(tmp, sizeof(tmp), "%s/tmp.%u-%llu.", dir, self.pid, (unsigned long long)self.start);

		for (int i = 0; i < 6 && n > 0; i++)
			snprintf(tmp + n + 2 * i, sizeof(tmp) - (size_t)n - 2 * (size_t)i, "%02x", rnd[i]);
		memcpy(copy + SDPU_SEGMENT_HEADER, segment->base + SDPU_SEGMENT_HEADER, size - SDPU_SEGMENT_HEADER);
		sdpu_put32(copy + 72, used);
		sdpu_putf64(copy + OFF_EXITED, wall_ms());
		snprintf(final, sizeof(final), "%s.exited", announcement);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			bool whole = write(fd, copy, size) == (ssize_t)size;

			close(fd);
			if (!whole || rename(tmp, final) != 0)
				unlink(tmp);
		}
	}
	free(copy);
	unlink(announcement);
	status = -1;
	pthread_mutex_unlock(&lock);
}

static bool ready(void)
{
	if (status == 0)
		begin();
	return status == 1;
}

static uint32_t slot_base(int32_t slot)
{
	return OFF_SLOTS + (uint32_t)slot * SLOT_SIZE;
}

static void seq(int32_t slot)
{
	__atomic_add_fetch(word(slot_base(slot)), 1, __ATOMIC_SEQ_CST);
}

/* Before `slot` is reused: ended objects under it lose their parent rather than get a new one. */
static void orphan(int32_t slot)
{
	for (uint32_t k = 0; k < nended; k++) {
		int32_t s = ended[(ended_head + k) % SLOTS];
		uint32_t base = slot_base(s);

		if (sdpu_get32(at(base + 8)) != (uint32_t)slot + 1)
			continue;
		seq(s);
		sdpu_put32(at(base + 8), 0);
		seq(s);
	}
}

void sdpu_stat_private(struct sdpu_stat *s)
{
	s->slot = -1;
	s->c = s->own;
	memset(s->own, 0, sizeof(s->own));
}

void sdpu_stat_open(struct sdpu_stat *s, uint32_t kind, const char *name, const struct sdpu_stat *parent, double id)
{
	int32_t slot = -1;
	uint32_t base;

	sdpu_stat_private(s);
	pthread_mutex_lock(&lock);
	if (!ready())
		goto done;
	if (used < SLOTS) {
		slot = (int32_t)used++;
	} else if (nended > 0) {
		slot = ended[ended_head];
		ended_head = (ended_head + 1) % SLOTS;
		nended--;
		orphan(slot);
	} else {
		goto done;
	}
	base = slot_base(slot);
	seq(slot); /* odd: being rewritten */
	sdpu_put32(at(base + 4), kind);
	sdpu_put32(at(base + 8), parent != NULL && parent->slot >= 0 ? (uint32_t)parent->slot + 1 : 0);
	sdpu_put32(at(base + 12), 0);
	sdpu_putf64(at(base + 16), id);
	sdpu_putf64(at(base + 24), 0);
	put_text(base + 32, NAME_BYTES, name);
	memset(at(base + 96), 0, SDPU_STAT_COUNTERS * 8);
	seq(slot); /* even: stable */
	s->slot = slot;
	s->c = (double *)(void *)at(base + 96);
done:
	pthread_mutex_unlock(&lock);
}

void sdpu_stat_close(struct sdpu_stat *s)
{
	uint32_t base;

	if (s == NULL || s->slot < 0)
		return;
	pthread_mutex_lock(&lock);
	if (status == 1) {
		base = slot_base(s->slot);
		seq(s->slot);
		sdpu_put32(at(base + 4), sdpu_get32(at(base + 4)) | KIND_ENDED);
		seq(s->slot);
		ended[(ended_head + nended) % SLOTS] = s->slot;
		nended++;
	}
	pthread_mutex_unlock(&lock);
	/* Final values stay in the slot; the object's own array takes later stores (there should be none). */
	memcpy(s->own, s->c, sizeof(s->own));
	s->c = s->own;
	s->slot = -1;
}

void sdpu_stat_state(struct sdpu_stat *s, int32_t state)
{
	if (s != NULL && s->slot >= 0)
		__atomic_store_n(word(slot_base(s->slot) + 12), state, __ATOMIC_SEQ_CST);
}

void sdpu_stat_peer(struct sdpu_stat *s, uint32_t pid)
{
	if (s != NULL && s->slot >= 0)
		sdpu_putf64(at(slot_base(s->slot) + 24), (double)pid);
}

void sdpu_stat_event(struct sdpu_stat *s, uint32_t kind, const char *format, ...)
{
	char text[EVENT_SIZE - 16];
	va_list ap;
	uint32_t n, base;

	if (s == NULL || s->slot < 0)
		return;
	va_start(ap, format);
	vsnprintf(text, sizeof(text), format, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	if (status == 1) {
		n = (uint32_t)__atomic_load_n(word(96), __ATOMIC_SEQ_CST);
		base = OFF_EVENTS + (n % EVENTS) * EVENT_SIZE;
		sdpu_putf64(at(base), wall_ms());
		sdpu_put32(at(base + 8), kind);
		sdpu_put32(at(base + 12), (uint32_t)s->slot);
		put_text(base + 16, EVENT_SIZE - 16, text);
		__atomic_store_n(word(96), (int32_t)(n + 1), __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&lock);
}

int sdpu_stat_publishing(void)
{
	int r;

	pthread_mutex_lock(&lock);
	r = status == 1;
	pthread_mutex_unlock(&lock);
	return r;
}
