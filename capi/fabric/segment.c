/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fabric/segment.h. The owner writes the header plainly and publishes it with two atomic stores (state,
 * then magic); an opener checks, in protocol.md's order, that the owner lives, that the file is the size
 * it was told, then magic, version, owner, size, token (constant time), state and kind. The owner also
 * seals its memfd against resizing, so that no opener of a segment this library made can be sent SIGBUS.
 */
#define _GNU_SOURCE
#include "fabric/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/shm.h"
#include "fabric/liveness.h"

#define MAGIC 0x55504453 /* 'SDPU' */
#define LAYOUT_VERSION 2
#define STATE_LIVE 1
#define STATE_REVOKED 2
#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_PID 8
#define OFF_STATE 12
#define OFF_START 16
#define OFF_SIZE 24
#define OFF_TOKEN 32
#define OFF_KIND 48
#define MAX_SIZE (1ULL << 32)

void sdpu_descriptor_encode(const struct sdpu_descriptor *d, uint8_t *at)
{
	sdpu_put_u32(at, d->pid);
	sdpu_put_u32(at + 4, d->fd);
	sdpu_put_f64(at + 8, d->start);
	sdpu_put_f64(at + 16, d->size);
	memcpy(at + 24, d->token, sizeof(d->token));
}

doca_error_t sdpu_descriptor_decode(const uint8_t *at, struct sdpu_descriptor *d)
{
	uint8_t copy[SDPU_DESCRIPTOR_SIZE];

	memcpy(copy, at, sizeof(copy));
	memcpy(&d->pid, copy, 4);
	memcpy(&d->fd, copy + 4, 4);
	memcpy(&d->start, copy + 8, 8);
	memcpy(&d->size, copy + 16, 8);
	memcpy(d->token, copy + 24, sizeof(d->token));
	if (d->pid == 0 || !sdpu_safe_integer(d->start) || !sdpu_safe_integer(d->size) || d->size <= SDPU_SEGMENT_HEADER ||
	    d->size > (double)MAX_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

bool sdpu_descriptor_equal(const struct sdpu_descriptor *a, const struct sdpu_descriptor *b)
{
	return a->pid == b->pid && a->fd == b->fd && a->start == b->start && a->size == b->size &&
	       memcmp(a->token, b->token, sizeof(a->token)) == 0;
}

static bool valid_kind(const char *kind)
{
	size_t n = strlen(kind);

	if (n < 1 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		if (kind[i] < 'a' || kind[i] > 'z')
			return false;
	return true;
}

doca_error_t sdpu_segment_create(const char *kind, size_t payload, struct sdpu_segment **out)
{
	struct sdpu_identity self = sdpu_self();
	char label[64];
	size_t size;
	struct sdpu_segment *s;

	if (!valid_kind(kind) || payload > MAX_SIZE - 4096)
		return DOCA_ERROR_INVALID_VALUE;
	size = SDPU_SEGMENT_HEADER + (payload + 63) / 64 * 64;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return DOCA_ERROR_NO_MEMORY;
	snprintf(label, sizeof(label), "softdpu.%s.%u", kind, self.pid);
	s->fd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd < 0 || ftruncate(s->fd, (off_t)size) != 0 ||
	    fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto failed;
	s->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED)
		goto failed;
	if (getrandom(s->descriptor.token, sizeof(s->descriptor.token), 0) != (ssize_t)sizeof(s->descriptor.token)) {
		munmap(s->base, size);
		goto failed;
	}
	s->size = size;
	s->descriptor.pid = self.pid;
	s->descriptor.fd = (uint32_t)s->fd;
	s->descriptor.start = (double)self.start;
	s->descriptor.size = (double)size;
	sdpu_put_u16(s->base + OFF_VERSION, LAYOUT_VERSION);
	sdpu_put_u32(s->base + OFF_PID, self.pid);
	sdpu_put_f64(s->base + OFF_START, s->descriptor.start);
	sdpu_put_f64(s->base + OFF_SIZE, s->descriptor.size);
	memcpy(s->base + OFF_TOKEN, s->descriptor.token, sizeof(s->descriptor.token));
	memcpy(s->base + OFF_KIND, kind, strlen(kind));
	sdpu_store(s->base + OFF_STATE, STATE_LIVE);
	sdpu_store(s->base + OFF_MAGIC, MAGIC);
	*out = s;
	return DOCA_SUCCESS;
failed: {
	int e = errno;

	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "fabric", "cannot create a %zu-byte %s segment: %s", size, kind, strerror(e));
	if (s->fd >= 0)
		close(s->fd);
	free(s);
	return e == ENOMEM || e == EMFILE || e == ENFILE ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_OPERATING_SYSTEM;
}
}

/* Constant-time comparison of the token. */
static bool same_token(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;

	for (size_t i = 0; i < 16; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

static const char *header_problem(const uint8_t *base, const struct sdpu_descriptor *d, const char *kind)
{
	int32_t state;

	if ((uint32_t)sdpu_load(base + OFF_MAGIC) != MAGIC || sdpu_get_u16(base + OFF_VERSION) != LAYOUT_VERSION)
		return "is not a softdpu segment of this layout version";
	if (sdpu_get_u32(base + OFF_PID) != d->pid || sdpu_get_f64(base + OFF_START) != d->start ||
	    sdpu_get_f64(base + OFF_SIZE) != d->size)
		return "belongs to another owner";
	if (!same_token(base + OFF_TOKEN, d->token))
		return "has another token";
	state = sdpu_load(base + OFF_STATE);
	if (state == STATE_REVOKED)
		return "was revoked by its owner";
	if (state != STATE_LIVE)
		return "is not live";
	if (kind != NULL) {
		char own[17] = {0};

		memcpy(own, base + OFF_KIND, 16);
		if (strcmp(own, kind) != 0)
			return "is of another kind";
	}
	return NULL;
}

doca_error_t sdpu_segment_open(const struct sdpu_descriptor *d, const char *kind, const char *call,
			       struct sdpu_segment **out)
{
	char path[64];
	struct stat st;
	struct sdpu_segment *s;
	const char *problem;
	int fd;
	void *base;

	if (!sdpu_alive(d->pid, (uint64_t)d->start)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, call, "the owner of the segment (pid %u) is gone", d->pid);
		return DOCA_ERROR_NOT_FOUND;
	}
	snprintf(path, sizeof(path), "/proc/%u/fd/%u", d->pid, d->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, call, "open %s failed: %s", path, strerror(e));
		return e == ENOENT ? DOCA_ERROR_NOT_FOUND : DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (fstat(fd, &st) != 0 || (double)st.st_size != d->size || st.st_size <= 0 || (uint64_t)st.st_size > MAX_SIZE) {
		close(fd);
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, call, "%s is not a segment of %.0f bytes", path, d->size);
		return DOCA_ERROR_NOT_FOUND;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, call, "cannot map %s: %s", path, strerror(errno));
		return errno == ENOMEM ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_OPERATING_SYSTEM;
	}
	problem = header_problem(base, d, kind);
	if (problem != NULL) {
		bool wrong_kind = strcmp(problem, "is of another kind") == 0;

		munmap(base, (size_t)st.st_size);
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, call, "the segment at pid %u fd %u %s%s%s", d->pid, d->fd, problem,
			     wrong_kind ? ", not " : "", wrong_kind ? kind : "");
		return wrong_kind ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_FOUND;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		munmap(base, (size_t)st.st_size);
		return DOCA_ERROR_NO_MEMORY;
	}
	s->base = base;
	s->size = (size_t)st.st_size;
	s->fd = -1;
	s->descriptor = *d;
	*out = s;
	return DOCA_SUCCESS;
}

void sdpu_segment_revoke(struct sdpu_segment *segment)
{
	if (segment->fd >= 0)
		sdpu_store(segment->base + OFF_STATE, STATE_REVOKED);
}

bool sdpu_segment_revoked(const struct sdpu_segment *segment)
{
	return sdpu_load(segment->base + OFF_STATE) == STATE_REVOKED;
}

void sdpu_segment_close(struct sdpu_segment *segment)
{
	if (segment == NULL)
		return;
	munmap(segment->base, segment->size);
	if (segment->fd >= 0)
		close(segment->fd);
	free(segment);
}
