/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_mmap_export_pci and doca_mmap_create_from_export (docs/protocol.md, "Mmap export"). Payload
 * (after the 24-byte envelope): 0 the memory's segment descriptor, 40 f64 byte offset of the range in
 * it, 48 f64 length, 56 u32 access flags, 60 PCI trailer. The importer checks, in this order: the
 * envelope, the trailer's DPU, the export slot, the descriptor, the segment (kind `mem`), then the range.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/bytes.h"
#include "core/dev.h"
#include "core/internal.h"
#include "core/shm.h"
#include "fabric/topology.h"
#include "mmap/mmap.h"

#define SOURCE "mmap"
#define P_SEGMENT 0
#define P_OFFSET SDPU_DESCRIPTOR_SIZE
#define P_LENGTH (P_OFFSET + 8)
#define P_PERMISSIONS (P_LENGTH + 8)
#define P_TRAILER (P_PERMISSIONS + 4)

static doca_error_t cap_refused(const struct doca_dev *dev, const char *call, const char *what)
{
	char pci[13];

	sdpu_pci_format(&dev->info->pci, pci);
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s cannot %s (its topology says so)", call, pci, what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_mmap_export_pci(struct doca_mmap *m, const struct doca_dev *dev, const void **export_desc, size_t *export_desc_len)
{
	const char *call = "doca_mmap_export_pci";
	uint8_t *payload;
	bool added = false;
	doca_error_t err;

	if (m == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (m->imported) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the map was created from an export and cannot be exported again", call);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	err = sdpu_mmap_usable(m, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (!(m->permissions & SDPU_ACCESS_PCI)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the map has no PCI permission (PCI_READ_ONLY or PCI_READ_WRITE)", call);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	for (uint32_t i = 0; i < m->ndevs; i++)
		added |= m->devs[i] == dev;
	if (!added) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the device was not added to the map (doca_mmap_add_dev)", call);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (dev->info->caps.value[SDPU_CAP_MMAP_EXPORT_PCI] == 0)
		return cap_refused(dev, call, "export maps over PCI");
	if (!m->exported) {
		err = sdpu_export_claim(&m->slot);
		if (err != DOCA_SUCCESS)
			return err;
		m->exported = true;
	}
	memset(m->blob, 0, sizeof(m->blob));
	payload = m->blob + SDPU_BLOB_HEADER;
	sdpu_descriptor_encode(&m->segment->descriptor, payload + P_SEGMENT);
	sdpu_putf64(payload + P_OFFSET, (double)m->offset);
	sdpu_putf64(payload + P_LENGTH, (double)m->len);
	sdpu_put32(payload + P_PERMISSIONS, m->permissions);
	sdpu_pci_trailer_write(payload + P_TRAILER, &m->slot, dev->info->dpu);
	sdpu_blob_seal(m->blob, SDPU_BLOB_MMAP_PCI, SDPU_MMAP_PAYLOAD, dev->fabric->id);
	*export_desc = m->blob;
	*export_desc_len = sizeof(m->blob);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc, size_t export_desc_len,
					  struct doca_dev *dev, struct doca_mmap **mmap)
{
	const char *call = "doca_mmap_create_from_export";
	uint8_t blob[SDPU_MMAP_BLOB_SIZE];
	const uint8_t *payload = blob + SDPU_BLOB_HEADER;
	struct sdpu_descriptor d;
	struct sdpu_export_slot slot;
	struct doca_mmap *m;
	double offset, length;
	doca_error_t err;

	if (export_desc == NULL || dev == NULL || mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (dev->info->caps.value[SDPU_CAP_MMAP_CREATE_FROM_EXPORT_PCI] == 0)
		return cap_refused(dev, call, "create maps from a PCI export");
	err = sdpu_blob_check(export_desc, export_desc_len, SDPU_BLOB_MMAP_PCI, SDPU_MMAP_PAYLOAD, dev->fabric->id, call);
	if (err != DOCA_SUCCESS)
		return err;
	memcpy(blob, export_desc, sizeof(blob)); /* read once: the caller's buffer may change under us */
	err = sdpu_pci_trailer_read(payload + P_TRAILER, dev->info->dpu, "map", call, &slot);
	if (err != DOCA_SUCCESS)
		return err;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	err = sdpu_export_view_open(&slot, call, &m->view);
	if (err != DOCA_SUCCESS)
		goto failed;
	if (sdpu_descriptor_decode(payload + P_SEGMENT, &d) != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the blob names a segment no process could have (pid 0, or an impossible start or size)", call);
		err = DOCA_ERROR_INVALID_VALUE;
		goto failed;
	}
	err = sdpu_segment_open(&d, "mem", call, &m->segment);
	if (err != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the map's memory (pid %u) does not open (%s)", call, d.pid, doca_error_get_name(err));
		goto failed;
	}
	offset = sdpu_getf64(payload + P_OFFSET);
	length = sdpu_getf64(payload + P_LENGTH);
	if (!sdpu_safe_integer(offset) || !sdpu_safe_integer(length) || length < 1 || offset < SDPU_SEGMENT_HEADER ||
	    offset + length > (double)m->segment->size) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the export names bytes [%.17g, %.17g + %.17g) outside its %zu-byte segment", call, offset, offset,
			     length, m->segment->size);
		err = DOCA_ERROR_INVALID_VALUE;
		goto failed;
	}
	m->offset = (size_t)offset;
	m->addr = m->segment->base + m->offset;
	m->len = (size_t)length;
	m->permissions = sdpu_get32(payload + P_PERMISSIONS) & SDPU_ACCESS_ALL;
	m->imported = m->started = m->ever_started = true;
	m->max_devs = 1;
	if ((m->devs = calloc(1, sizeof(*m->devs))) == NULL) {
		err = DOCA_ERROR_NO_MEMORY;
		goto failed;
	}
	m->devs[m->ndevs++] = dev;
	sdpu_dev_use(dev, 1);
	if (user_data != NULL)
		m->user_data = *user_data;
	*mmap = m;
	return DOCA_SUCCESS;
failed:
	sdpu_segment_close(m->segment);
	sdpu_export_view_close(&m->view);
	free(m);
	return err;
}

doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export)
{
	if (devinfo == NULL || mmap_export == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*mmap_export = devinfo->caps.value[SDPU_CAP_MMAP_EXPORT_PCI] != 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *from_export)
{
	if (devinfo == NULL || from_export == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = devinfo->caps.value[SDPU_CAP_MMAP_CREATE_FROM_EXPORT_PCI] != 0;
	return DOCA_SUCCESS;
}
