/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The library's one helper thread: what cannot be done without a syscall happens here, never in
 * doca_pe_progress. It runs the comch handshakes (accept, connect, HELLO, WELCOME, READY), watches each
 * connection's socket for end-of-file, runs the timers (handshake timeouts, connect retries, lingers) and
 * the 200 ms liveness cadence of watched processes, and tells a context what happened by ringing its own
 * progress engine's doorbell, as a peer would. So a busy loop of doca_pe_progress reads memory only, and
 * a program that progresses once a second still connects at once.
 *
 * Everything here runs under one lock, which the thread holds while it runs a callback; callers take it
 * around every call below (sdpu_io_lock). A watch, timer or process watch is named by an id; an id whose
 * object was removed is ignored, so removing one (under the lock) guarantees its callback never runs again.
 */
#ifndef SOFTDPU_CAPI_IO_H_
#define SOFTDPU_CAPI_IO_H_

#include <stdint.h>

#include <doca_error.h>

typedef void (*sdpu_io_cb)(void *arg, uint32_t events);
typedef void (*sdpu_timer_cb)(void *arg);

/* Starts the thread once (it lives until the process ends). */
doca_error_t sdpu_io_start(void);

void sdpu_io_lock(void);
void sdpu_io_unlock(void);

/* Calls `cb` with epoll's events while `fd` has them (level-triggered); 0 when it cannot. */
uint64_t sdpu_io_watch(int fd, uint32_t events, sdpu_io_cb cb, void *arg);
void sdpu_io_unwatch(uint64_t id);

/* Calls `cb` once, after `ms` milliseconds; 0 when it cannot. */
uint64_t sdpu_io_timer(int64_t ms, sdpu_timer_cb cb, void *arg);
void sdpu_io_cancel(uint64_t id);

/* Calls `cb` once, from the 200 ms liveness pass that finds process (pid, start) gone. */
uint64_t sdpu_io_watch_process(uint32_t pid, uint64_t start, sdpu_timer_cb cb, void *arg);

/* Milliseconds on the monotonic clock. */
int64_t sdpu_now_ms(void);

#endif /* SOFTDPU_CAPI_IO_H_ */
