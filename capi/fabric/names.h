/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names of the fabric directory (docs/protocol.md, "Fabric directory and names"): every entry
 * carries its owner, <kind>.<pid>-<start>.<tag>[.sock], so that a sweep can tell what a dead process
 * left behind.
 */
#ifndef SOFTDPU_CAPI_NAMES_H_
#define SOFTDPU_CAPI_NAMES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

/* The longest path a Unix socket address holds (sun_path is 108 bytes with the NUL). */
#define SDPU_MAX_SOCKET_PATH 107

struct sdpu_entry {
	char kind[17];
	char tag[41];
	/* The owner, as written; `overflow` when a number does not fit (no such process). */
	uint64_t pid;
	uint64_t start;
	bool overflow;
	bool socket;
};

/* Parses an entry name; false for names the fabric did not make. */
bool sdpu_entry_parse(const char *name, struct sdpu_entry *out);

/*
 * `dir`/<kind>.<pid>-<start>.<tag>.sock of this process, in `out` (`size` bytes); INVALID_VALUE (logged)
 * when it is longer than SDPU_MAX_SOCKET_PATH.
 */
doca_error_t sdpu_socket_path(const char *dir, const char *kind, const char *tag, char *out, size_t size);

/* Where rings and queues start counting ($SOFTDPU_START_POSITION, default 0); false when it is invalid. */
bool sdpu_start_position(uint32_t *position);

#endif /* SOFTDPU_CAPI_NAMES_H_ */
