/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How processes find each other without a daemon (docs/protocol.md, "Rendezvous"): a service claims its
 * name with an abstract Unix socket (a lock the kernel frees when the process dies) and listens on a
 * socket file in the private fabric directory; a client lists the directory for a live owner.
 */
#ifndef SOFTDPU_CAPI_RENDEZVOUS_H_
#define SOFTDPU_CAPI_RENDEZVOUS_H_

#include <stddef.h>

#include <doca_error.h>

#include "fabric/fabric.h"

/* The lock \0softdpu.<fabric id>.<kind>.<key>, bound with the whole sun_path; ALREADY_EXIST when taken. */
doca_error_t sdpu_claim_name(const struct sdpu_fabric *fabric, const char *kind, const char *key, int *fd);

/* Listens (non-blocking) on this process's <dir>/<kind>.<pid>-<start>.<key>.sock; `path` gets its path. */
doca_error_t sdpu_listen_service(const struct sdpu_fabric *fabric, const char *kind, const char *key, int *fd, char *path,
				 size_t size);

/* The socket path of the oldest live process serving `kind` and `key`; false when there is none. */
bool sdpu_find_service(const struct sdpu_fabric *fabric, const char *kind, const char *key, char *path, size_t size);

#endif /* SOFTDPU_CAPI_RENDEZVOUS_H_ */
