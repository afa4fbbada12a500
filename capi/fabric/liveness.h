/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who a process or thread is, and whether it still runs (docs/protocol.md, "Process identity and
 * liveness"): a pid alone is reused and kill(pid, 0) is fooled by zombies, so an owner is its pid and its
 * start time (field 22 of /proc/<pid>/stat, clock ticks since boot), and a zombie counts as dead.
 */
#ifndef SOFTDPU_CAPI_LIVENESS_H_
#define SOFTDPU_CAPI_LIVENESS_H_

#include <stdbool.h>
#include <stdint.h>

struct sdpu_identity {
	uint32_t pid;
	uint64_t start;
};

/* This process (read again after a fork). */
struct sdpu_identity sdpu_self(void);

/* The calling thread's kernel id and start time. */
void sdpu_self_thread(uint32_t *tid, uint64_t *tstart);

/* True while process (pid, start) runs: /proc/<pid>/stat reads, its state is not Z or X, same start. */
bool sdpu_alive(uint32_t pid, uint64_t start);

/* The same for thread `tid` of that process (tid == pid: the process). */
bool sdpu_thread_alive(uint32_t pid, uint64_t start, uint32_t tid, uint64_t tstart);

#endif /* SOFTDPU_CAPI_LIVENESS_H_ */
