/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fabric this process works in: its directory ($SOFTDPU_FABRIC or the default), its id and its
 * topology ($SOFTDPU_TOPOLOGY or the embedded default). Joined once, by the first call that lists or
 * opens a device; joining sweeps what dead processes left in the directory.
 */
#ifndef SOFTDPU_CAPI_FABRIC_H_
#define SOFTDPU_CAPI_FABRIC_H_

#include <limits.h>
#include <stdint.h>

#include <doca_error.h>

#include "fabric/topology.h"

struct sdpu_fabric {
	/* The directory's real path. */
	char dir[PATH_MAX];
	uint8_t id[8];
	/* The id in 16 lower-case hex digits (abstract socket names carry it). */
	char id_hex[17];
	struct sdpu_topology *topology;
};

/* The process's fabric, joined on the first call (thread-safe); the error of a join that failed. */
doca_error_t sdpu_fabric_join(const struct sdpu_fabric **out);

#endif /* SOFTDPU_CAPI_FABRIC_H_ */
