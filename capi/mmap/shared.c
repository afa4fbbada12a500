/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Program memory made shared with peers, in place, for maps with a PCI permission (docs/c.md, "Memory a
 * peer can reach"): NVIDIA's data-path samples give doca_mmap_set_memrange malloc'd, static or stack
 * memory, which another process cannot open. The page-rounded range is written into a fresh `mem`
 * segment (its header in the first page, the range's pages after it) and that file is mapped back over
 * the same addresses with MAP_FIXED | MAP_SHARED: the program keeps its pointers, and a peer that opens
 * the segment sees the same bytes. The bytes sharing the range's first and last pages become visible to
 * the peer too; a fork shares those pages instead of copying them; a write by another thread during the
 * copy is lost. The copy and the remap run through raw system calls (no sanitizer reads the neighbours'
 * bytes), and on a stack of their own when the range holds part of the calling thread's stack (its
 * frames would otherwise change between the copy and the remap).
 *
 * A range inside one already shared by a live map is shared again as it is (same segment); the pages stay
 * shared after the last map over them is destroyed (the program still uses them), but the segment is
 * revoked and its file closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "mmap/mmap.h"

#define SOURCE "mmap"
#define REMAP_STACK (64 * 1024)

struct sdpu_shared {
	uintptr_t first;
	size_t bytes;
	size_t page;
	struct sdpu_segment *segment;
	unsigned refs;
	struct sdpu_shared *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sdpu_shared *ranges;

/* What the stack of its own works on. */
struct remap {
	int fd;
	uintptr_t first;
	size_t bytes;
	size_t page;
	long error;
	ucontext_t caller, worker;
};

static struct remap *current;

static void remap_run(void)
{
	struct remap *r = current;
	size_t done = 0;

	while (done < r->bytes) {
		long n = syscall(SYS_pwrite64, r->fd, (const void *)(r->first + done), r->bytes - done, (long)(r->page + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->error = n < 0 ? errno : EIO;
			return;
		}
		done += (size_t)n;
	}
	if ((long)syscall(SYS_mmap, r->first, r->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd, (long)r->page) == -1)
		r->error = errno;
}

/* Whether [first, first + bytes) holds part of the calling thread's stack (then its frames must not run there). */
static bool on_own_stack(uintptr_t first, size_t bytes)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	bool overlaps = true; /* unknown: take the safe way */

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return true;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0)
		overlaps = first < (uintptr_t)addr + size && (uintptr_t)addr < first + bytes;
	pthread_attr_destroy(&attr);
	return overlaps;
}

/* The copy and the remap (lock held): on a stack of their own when the range holds the caller's. */
static long remap(int fd, uintptr_t first, size_t bytes, size_t page)
{
	struct remap *r = calloc(1, sizeof(*r));
	void *stack;
	long error;

	if (r != NULL && !on_own_stack(first, bytes)) {
		r->fd = fd;
		r->first = first;
		r->bytes = bytes;
		r->page = page;
		current = r;
		remap_run();
		current = NULL;
		error = r->error;
		free(r);
		return error;
	}
	stack = mmap(NULL, REMAP_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == NULL || stack == MAP_FAILED) {
		free(r);
		if (stack != MAP_FAILED)
			munmap(stack, REMAP_STACK);
		return ENOMEM;
	}
	r->fd = fd;
	r->first = first;
	r->bytes = bytes;
	r->page = page;
	if (getcontext(&r->worker) != 0) {
		error = errno;
		goto out;
	}
	r->worker.uc_stack.ss_sp = stack;
	r->worker.uc_stack.ss_size = REMAP_STACK;
	r->worker.uc_link = &r->caller;
	makecontext(&r->worker, remap_run, 0);
	current = r;
	if (swapcontext(&r->caller, &r->worker) != 0)
		r->error = errno;
	current = NULL;
	error = r->error;
out:
	munmap(stack, REMAP_STACK);
	free(r);
	return error;
}

static doca_error_t share(uintptr_t first, size_t bytes, size_t page, const char *call, struct sdpu_shared **out)
{
	struct sdpu_shared *s = calloc(1, sizeof(*s));
	doca_error_t err;
	long e;

	if (s == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = sdpu_segment_create("mem", page - SDPU_SEGMENT_HEADER + bytes, &s->segment);
	if (err != DOCA_SUCCESS) {
		free(s);
		return err;
	}
	e = remap(s->segment->fd, first, bytes, page);
	if (e != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: cannot share the %zu bytes at %p with peers: %s", call, bytes, (void *)first,
			     strerror((int)e));
		sdpu_segment_close(s->segment);
		free(s);
		return e == ENOMEM ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_OPERATING_SYSTEM;
	}
	s->first = first;
	s->bytes = bytes;
	s->page = page;
	*out = s;
	return DOCA_SUCCESS;
}

doca_error_t sdpu_shared_acquire(uint8_t *addr, size_t len, const char *call, struct sdpu_shared **out, struct sdpu_segment **segment,
				 size_t *offset)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr, first = start / page * page;
	uintptr_t end = (start + len + page - 1) / page * page;
	struct sdpu_shared *s;
	doca_error_t err = DOCA_SUCCESS;

	if (end - first > 0xffffffffu - page) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %zu bytes are more than a segment holds (4 GiB with its header page)", call, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&lock);
	for (s = ranges; s != NULL; s = s->next) {
		if (start >= s->first && start + len <= s->first + s->bytes)
			break;
		if (start < s->first + s->bytes && s->first < start + len) {
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
				     "%s: [%p, +%zu) overlaps memory another live map shared with peers without lying inside it; give this map a range inside it, or destroy that map first",
				     call, (void *)addr, len);
			err = DOCA_ERROR_NOT_SUPPORTED;
			break;
		}
	}
	if (err == DOCA_SUCCESS && s == NULL) {
		err = share(first, end - first, page, call, &s);
		if (err == DOCA_SUCCESS) {
			s->next = ranges;
			ranges = s;
		}
	}
	if (err == DOCA_SUCCESS) {
		s->refs++;
		*out = s;
		*segment = s->segment;
		*offset = s->page + (start - s->first);
	}
	pthread_mutex_unlock(&lock);
	return err;
}

void sdpu_shared_release(struct sdpu_shared *shared)
{
	if (shared == NULL)
		return;
	pthread_mutex_lock(&lock);
	if (--shared->refs > 0) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (struct sdpu_shared **at = &ranges; *at != NULL; at = &(*at)->next)
		if (*at == shared) {
			*at = shared->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	/* The program's pages stay mapped to the file (it keeps using them); peers can no longer open it. */
	sdpu_segment_revoke(shared->segment);
	sdpu_segment_close(shared->segment);
	free(shared);
}
