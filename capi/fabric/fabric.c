/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/fabric.h: Fabric.open of src/fabric/fabric.ts (topology, directory, sweep, id), once per process. */
#include "fabric/fabric.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <doca_log.h>

#include "core/internal.h"
#include "fabric/dir.h"
#include "fabric/epitaphs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sdpu_fabric *joined;

doca_error_t sdpu_fabric_join(const struct sdpu_fabric **out)
{
	struct sdpu_fabric *f;
	char dir[PATH_MAX];
	doca_error_t err = DOCA_SUCCESS;

	pthread_mutex_lock(&lock);
	if (joined != NULL)
		goto done;
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		err = DOCA_ERROR_NO_MEMORY;
		goto done;
	}
	err = sdpu_topology_load(&f->topology);
	if (err == DOCA_SUCCESS) {
		sdpu_fabric_dir_resolve(dir, sizeof(dir));
		err = sdpu_fabric_dir_ensure(dir);
	}
	if (err == DOCA_SUCCESS) {
		sdpu_fabric_dir_sweep(dir);
		sdpu_epitaphs_sweep(dir);
		err = sdpu_fabric_dir_id(dir, f->dir, sizeof(f->dir), f->id);
	}
	if (err != DOCA_SUCCESS) {
		/* The next call tries again from the start. */
		sdpu_topology_free(f->topology);
		free(f);
		goto done;
	}
	for (int i = 0; i < 8; i++)
		snprintf(f->id_hex + 2 * i, 3, "%02x", f->id[i]);
	sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, "fabric", "joined the fabric in %s (topology %s)", f->dir, f->topology->source);
	joined = f;
done:
	*out = joined;
	pthread_mutex_unlock(&lock);
	return err;
}
