/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_mmap.h's lifecycle and properties, with the TypeScript side's reading of DOCA's contract
 * (src/core/mmap.ts): configuration before start only; stop refused while buffers exist and for an
 * exported or imported map; destroy refused while buffers exist, and otherwise stops, revoking the export
 * (so every map imported from it becomes unusable). A map with a PCI permission over the program's own
 * memory shares that memory at start (shared.c).
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/dev.h"
#include "core/internal.h"
#include "mmap/mmap.h"

#define SOURCE "mmap"

static doca_error_t refuse(doca_error_t err, const char *call, const char *why)
{
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s", call, why);
	return err;
}

/* Configuration: not imported (NOT_PERMITTED), not started (BAD_STATE). */
static doca_error_t configurable(const struct doca_mmap *m, const char *call)
{
	if (m->imported)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call, "the map was created from an export and cannot be configured");
	if (m->started)
		return refuse(DOCA_ERROR_BAD_STATE, call, "the map is started; configure it before start");
	return DOCA_SUCCESS;
}

static doca_error_t registrable(const struct doca_mmap *m, const char *call)
{
	if (m->started || m->exported || m->imported)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call,
			      m->started ? "the map is started" : m->imported ? "the map was created from an export" : "the map was exported");
	return DOCA_SUCCESS;
}

doca_error_t sdpu_mmap_usable(struct doca_mmap *m, const char *call)
{
	if (m->invalid || (m->imported && !sdpu_export_view_valid(&m->view, true))) {
		if (!m->invalid) {
			m->invalid = true;
			sdpu_segment_close(m->segment); /* stale views would read the exporter's memory no more */
			m->segment = NULL;
			m->addr = NULL;
		}
		return refuse(DOCA_ERROR_BAD_STATE, call, "the map is no longer valid: its exporter destroyed the exported map or exited");
	}
	if (!m->started)
		return refuse(DOCA_ERROR_BAD_STATE, call, "the map is not started");
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_create(struct doca_mmap **mmap)
{
	struct doca_mmap *m;

	if (mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	m->permissions = DOCA_ACCESS_FLAG_LOCAL_READ_WRITE;
	m->max_devs = SDPU_MMAP_MAX_DEVS_DEFAULT;
	*mmap = m;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_memrange(struct doca_mmap *m, void *addr, size_t len)
{
	const char *call = "doca_mmap_set_memrange";
	doca_error_t err;

	if (m == NULL || addr == NULL || len == 0)
		return refuse(DOCA_ERROR_INVALID_VALUE, call, "the memory range must be a non-NULL address and a length > 0");
	err = configurable(m, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (m->addr != NULL)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call, "the memory range of the map is already set");
	if ((uintptr_t)addr + len < (uintptr_t)addr)
		return refuse(DOCA_ERROR_INVALID_VALUE, call, "the memory range wraps around the address space");
	m->addr = addr;
	m->len = len;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_memrange(const struct doca_mmap *m, void **addr, size_t *len)
{
	if (m == NULL || addr == NULL || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (m->invalid)
		return refuse(DOCA_ERROR_BAD_STATE, "doca_mmap_get_memrange", "the map is no longer valid");
	if (m->addr == NULL)
		return refuse(DOCA_ERROR_BAD_STATE, "doca_mmap_get_memrange", "the map has no memory range");
	*addr = m->addr;
	*len = m->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_permissions(struct doca_mmap *m, uint32_t access_mask)
{
	const char *call = "doca_mmap_set_permissions";
	doca_error_t err;

	if (m == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = configurable(m, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (access_mask & ~SDPU_ACCESS_ALL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: 0x%x has bits that are not access flags", call, access_mask);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((access_mask & SDPU_ACCESS_PCI) == SDPU_ACCESS_PCI)
		return refuse(DOCA_ERROR_INVALID_VALUE, call, "PCI_READ_ONLY and PCI_READ_WRITE exclude each other");
	if ((access_mask & (DOCA_ACCESS_FLAG_RDMA_WRITE | DOCA_ACCESS_FLAG_RDMA_ATOMIC)) && !(access_mask & DOCA_ACCESS_FLAG_LOCAL_READ_WRITE))
		return refuse(DOCA_ERROR_INVALID_VALUE, call, "RDMA_WRITE and RDMA_ATOMIC need LOCAL_READ_WRITE");
	m->permissions = access_mask;
	return DOCA_SUCCESS;
}

/* What adding and removing a device both check first: both given, and the map's devices still open to change. */
static doca_error_t dev_changeable(const struct doca_mmap *m, const struct doca_dev *dev, const char *call)
{
	if (m == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return registrable(m, call);
}

doca_error_t doca_mmap_add_dev(struct doca_mmap *m, struct doca_dev *dev)
{
	const char *call = "doca_mmap_add_dev";
	doca_error_t err = dev_changeable(m, dev, call);

	if (err != DOCA_SUCCESS)
		return err;
	for (uint32_t i = 0; i < m->ndevs; i++)
		if (m->devs[i] == dev)
			return refuse(DOCA_ERROR_ALREADY_EXIST, call, "the device is already added to the map");
	if (m->ndevs >= m->max_devs) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the map already has its maximum of %u devices", call, m->max_devs);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (m->devs == NULL && (m->devs = calloc(m->max_devs, sizeof(*m->devs))) == NULL)
		return DOCA_ERROR_NO_MEMORY;
	m->devs[m->ndevs++] = dev;
	sdpu_dev_use(dev, 1);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_rm_dev(struct doca_mmap *m, struct doca_dev *dev)
{
	const char *call = "doca_mmap_rm_dev";
	doca_error_t err = dev_changeable(m, dev, call);

	if (err != DOCA_SUCCESS)
		return err;
	for (uint32_t i = 0; i < m->ndevs; i++)
		if (m->devs[i] == dev) {
			m->devs[i] = m->devs[--m->ndevs];
			sdpu_dev_use(dev, -1);
			return DOCA_SUCCESS;
		}
	return refuse(DOCA_ERROR_NOT_FOUND, call, "the device was not added to the map");
}

doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *m, uint32_t max_num_devices)
{
	const char *call = "doca_mmap_set_max_num_devices";
	doca_error_t err;

	if (m == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = configurable(m, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (m->ever_started)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call, "the map was already started once");
	if (max_num_devices < 1 || max_num_devices < m->ndevs) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %u is less than %u", call, max_num_devices, m->ndevs > 1 ? m->ndevs : 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (m->devs != NULL) {
		struct doca_dev **devs = realloc(m->devs, max_num_devices * sizeof(*devs));

		if (devs == NULL)
			return DOCA_ERROR_NO_MEMORY;
		m->devs = devs;
	}
	m->max_devs = max_num_devices;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *m, uint32_t *max_num_devices)
{
	if (m == NULL || max_num_devices == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_devices = m->max_devs;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_start(struct doca_mmap *m)
{
	const char *call = "doca_mmap_start";
	doca_error_t err;

	if (m == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (m->imported || m->exported)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call,
			      m->imported ? "the map was created from an export; it cannot be restarted" : "the map was exported; it cannot be restarted");
	if (m->started)
		return refuse(DOCA_ERROR_BAD_STATE, call, "the map is already started");
	if (m->addr == NULL)
		return refuse(DOCA_ERROR_INVALID_VALUE, call, "the map has no memory range (call doca_mmap_set_memrange first)");
	if (m->permissions & SDPU_ACCESS_PCI) {
		err = sdpu_shared_acquire(m->addr, m->len, call, &m->shared, &m->segment, &m->offset);
		if (err != DOCA_SUCCESS)
			return err;
	}
	m->started = m->ever_started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_stop(struct doca_mmap *m)
{
	const char *call = "doca_mmap_stop";

	if (m == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!m->started)
		return refuse(DOCA_ERROR_BAD_STATE, call, "the map is not started");
	if (m->imported)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call, "the map was created from an export; destroy it instead");
	if (m->exported)
		return refuse(DOCA_ERROR_NOT_PERMITTED, call, "the map was exported; destroy it, which stops it and invalidates its importers");
	if (m->bufs > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %u buffer(s) of the map still exist", call, m->bufs);
		return DOCA_ERROR_IN_USE;
	}
	sdpu_shared_release(m->shared);
	m->shared = NULL;
	m->segment = NULL;
	m->started = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_destroy(struct doca_mmap *m)
{
	if (m == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (m->bufs > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_mmap_destroy: %u buffer(s) of the map still exist; release them (doca_buf_dec_refcount) first",
			     m->bufs);
		return DOCA_ERROR_IN_USE;
	}
	if (m->users > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_mmap_destroy: %u comch consumer(s) over the map still exist; destroy them first", m->users);
		return DOCA_ERROR_IN_USE;
	}
	if (m->exported)
		sdpu_export_revoke(&m->slot);
	if (m->imported) {
		sdpu_segment_close(m->segment);
		sdpu_export_view_close(&m->view);
	} else {
		sdpu_shared_release(m->shared);
	}
	for (uint32_t i = 0; i < m->ndevs; i++)
		sdpu_dev_use(m->devs[i], -1);
	free(m->devs);
	if (m->free_cb != NULL && m->addr != NULL && !m->imported)
		m->free_cb(m->addr, m->len, m->free_opaque);
	free(m);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_free_cb(struct doca_mmap *m, doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	doca_error_t err;

	if (m == NULL || free_cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = configurable(m, "doca_mmap_set_free_cb");
	if (err != DOCA_SUCCESS)
		return err;
	m->free_cb = free_cb;
	m->free_opaque = opaque;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_user_data(const struct doca_mmap *m, union doca_data *user_data)
{
	if (m == NULL || user_data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = m->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_user_data(struct doca_mmap *m, union doca_data user_data)
{
	if (m == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	m->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *m, uint32_t *num_bufs)
{
	if (m == NULL || num_bufs == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_bufs = m->bufs;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_exported(const struct doca_mmap *m, uint8_t *exported)
{
	if (m == NULL || exported == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*exported = m->exported;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_from_export(const struct doca_mmap *m, uint8_t *from_export)
{
	if (m == NULL || from_export == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = m->imported;
	return DOCA_SUCCESS;
}

/* One thread per map is all this library's maps need: their state changes only in configuration calls. */
doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *m)
{
	return m == NULL ? DOCA_ERROR_INVALID_VALUE : configurable(m, "doca_mmap_enable_thread_safety");
}
