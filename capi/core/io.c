/* SPDX-License-Identifier: Apache-2.0 */
/*
 * core/io.h: one epoll loop, a table of watches, timers and process watches (ids carry a generation, so a
 * stale id finds nothing), and an eventfd to wake the loop when a timer is added. The thread blocks every
 * signal: the program's handlers run on its own threads.
 */
#define _GNU_SOURCE
#include "core/io.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "fabric/liveness.h"

/* The one liveness cadence (docs/protocol.md, "Process identity and liveness"). */
#define LIVENESS_INTERVAL_MS 200

enum kind { FREE, WATCH, TIMER, PROCESS };

struct slot {
	enum kind kind;
	uint32_t generation;
	int fd;
	sdpu_io_cb io_cb;
	sdpu_timer_cb timer_cb;
	void *arg;
	int64_t due;
	uint32_t pid;
	uint64_t start;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static doca_error_t start_error = DOCA_ERROR_INITIALIZATION;
static int epoll_fd = -1, wake_fd = -1;
static struct slot *slots;
static uint32_t nslots;
static uint32_t processes;
static int64_t next_pass;

int64_t sdpu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sdpu_io_lock(void)
{
	pthread_mutex_lock(&lock);
}

void sdpu_io_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

static uint64_t id_of(uint32_t index)
{
	return (uint64_t)slots[index].generation << 32 | (index + 1);
}

/* The slot an id names, or NULL once it was removed. */
static struct slot *lookup(uint64_t id)
{
	uint32_t index = (uint32_t)id - 1;

	if ((uint32_t)id == 0 || index >= nslots || slots[index].kind == FREE || slots[index].generation != (uint32_t)(id >> 32))
		return NULL;
	return &slots[index];
}

static int64_t take(enum kind kind)
{
	uint32_t index = 0;

	while (index < nslots && slots[index].kind != FREE)
		index++;
	if (index == nslots) {
		uint32_t grown = nslots ? nslots * 2 : 64;
		struct slot *more = realloc(slots, grown * sizeof(*more));

		if (more == NULL)
			return -1;
		memset(more + nslots, 0, (grown - nslots) * sizeof(*more));
		slots = more;
		nslots = grown;
	}
	slots[index].kind = kind;
	slots[index].generation++;
	return index;
}

static void wake(void)
{
	uint64_t one = 1;

	if (write(wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "softdpu", "cannot wake the helper thread: %s", strerror(errno));
}

uint64_t sdpu_io_watch(int fd, uint32_t events, sdpu_io_cb cb, void *arg)
{
	int64_t index = take(WATCH);
	struct epoll_event ev;

	if (index < 0)
		return 0;
	slots[index].fd = fd;
	slots[index].io_cb = cb;
	slots[index].arg = arg;
	ev.events = events;
	ev.data.u64 = id_of((uint32_t)index);
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "softdpu", "cannot watch fd %d: %s", fd, strerror(errno));
		slots[index].kind = FREE;
		return 0;
	}
	return ev.data.u64;
}

void sdpu_io_unwatch(uint64_t id)
{
	struct slot *s = lookup(id);

	if (s == NULL)
		return;
	if (s->kind == WATCH)
		epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
	if (s->kind == PROCESS)
		processes--;
	s->kind = FREE;
}

uint64_t sdpu_io_timer(int64_t ms, sdpu_timer_cb cb, void *arg)
{
	int64_t index = take(TIMER);

	if (index < 0)
		return 0;
	slots[index].timer_cb = cb;
	slots[index].arg = arg;
	slots[index].due = sdpu_now_ms() + ms;
	wake();
	return id_of((uint32_t)index);
}

void sdpu_io_cancel(uint64_t id)
{
	sdpu_io_unwatch(id);
}

uint64_t sdpu_io_watch_process(uint32_t pid, uint64_t start, sdpu_timer_cb cb, void *arg)
{
	int64_t index = take(PROCESS);

	if (index < 0)
		return 0;
	slots[index].pid = pid;
	slots[index].start = start;
	slots[index].timer_cb = cb;
	slots[index].arg = arg;
	if (processes++ == 0) {
		next_pass = sdpu_now_ms() + LIVENESS_INTERVAL_MS;
		wake();
	}
	return id_of((uint32_t)index);
}

/* Milliseconds until the next timer or liveness pass; -1 when there is none. */
static int timeout(int64_t now)
{
	int64_t soonest = processes > 0 ? next_pass : INT64_MAX;

	for (uint32_t i = 0; i < nslots; i++)
		if (slots[i].kind == TIMER && slots[i].due < soonest)
			soonest = slots[i].due;
	if (soonest == INT64_MAX)
		return -1;
	return soonest <= now ? 0 : (int)(soonest - now > 60000 ? 60000 : soonest - now);
}

static void run_timers(int64_t now)
{
	for (uint32_t i = 0; i < nslots; i++) {
		if (slots[i].kind != TIMER || slots[i].due > now)
			continue;
		sdpu_timer_cb cb = slots[i].timer_cb;
		void *arg = slots[i].arg;

		slots[i].kind = FREE;
		cb(arg);
	}
	if (processes == 0 || now < next_pass)
		return;
	next_pass = now + LIVENESS_INTERVAL_MS;
	for (uint32_t i = 0; i < nslots; i++) {
		if (slots[i].kind != PROCESS || sdpu_alive(slots[i].pid, slots[i].start))
			continue;
		sdpu_timer_cb cb = slots[i].timer_cb;
		void *arg = slots[i].arg;

		slots[i].kind = FREE;
		processes--;
		cb(arg);
	}
}

static void *loop(void *unused)
{
	struct epoll_event events[64];

	(void)unused;
	pthread_mutex_lock(&lock);
	for (;;) {
		int wait = timeout(sdpu_now_ms());

		pthread_mutex_unlock(&lock);
		int n = epoll_wait(epoll_fd, events, 64, wait);

		pthread_mutex_lock(&lock);
		for (int i = 0; i < n; i++) {
			if (events[i].data.u64 == 0) {
				uint64_t count;

				while (read(wake_fd, &count, sizeof(count)) > 0)
					;
				continue;
			}
			struct slot *s = lookup(events[i].data.u64);

			if (s != NULL && s->kind == WATCH)
				s->io_cb(s->arg, events[i].events);
		}
		run_timers(sdpu_now_ms());
	}
	return NULL;
}

static void start_once(void)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
	sigset_t all, old;
	pthread_t thread;
	pthread_attr_t attr;

	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (epoll_fd < 0 || wake_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "softdpu", "cannot start the helper thread: %s", strerror(errno));
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&thread, &attr, loop, NULL) == 0)
		start_error = DOCA_SUCCESS;
	else
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "softdpu", "cannot start the helper thread");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

doca_error_t sdpu_io_start(void)
{
	pthread_once(&once, start_once);
	return start_error;
}
