/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_sync_event_export_to_remote_pci and doca_sync_event_create_from_export (docs/protocol.md, "Sync
 * event PCI export"). Payload (after the 24-byte envelope): 0 control segment descriptor, 40 value
 * segment descriptor, 80 f64 value byte offset, 88 PCI trailer. The importer checks everything in the
 * blob before it maps anything it names, and everything it maps before it uses it.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/dev.h"
#include "core/internal.h"
#include "core/shm.h"
#include "fabric/topology.h"
#include "syncevent/syncevent.h"

#define SOURCE "sync_event"
#define P_CONTROL 0
#define P_VALUE SDPU_DESCRIPTOR_SIZE
#define P_OFFSET (2 * SDPU_DESCRIPTOR_SIZE)
#define P_TRAILER (P_OFFSET + 8)

doca_error_t doca_sync_event_export_to_remote_pci(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data, size_t *sz)
{
	const char *call = "doca_sync_event_export_to_remote_pci";
	uint8_t *payload;
	double offset = SDPU_SE_VALUE;
	doca_error_t err;

	if (event == NULL || dev == NULL || data == NULL || sz == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_se_usable(event, event->mode == SDPU_SE_MODE_CTX, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (event->imported) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: a handle made from an export cannot be exported again", call);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (dev->info->caps.value[SDPU_CAP_SE_EXPORT_TO_REMOTE_PCI] == 0) {
		char pci[13];

		sdpu_pci_format(&dev->info->pci, pci);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s cannot export sync events to remote PCI (its topology says so)", call, pci);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (event->user_addr != NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the counter memory given with doca_sync_event_set_addr is this process's own; another process cannot map it",
			     call);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (!event->exported) {
		err = sdpu_export_claim(&event->slot);
		if (err != DOCA_SUCCESS)
			return err;
		event->exported = true;
	}
	memset(event->blob, 0, sizeof(event->blob));
	payload = event->blob + SDPU_BLOB_HEADER;
	sdpu_descriptor_encode(&event->control->descriptor, payload + P_CONTROL);
	sdpu_descriptor_encode(&event->control->descriptor, payload + P_VALUE);
	memcpy(payload + P_OFFSET, &offset, 8);
	sdpu_pci_trailer_write(payload + P_TRAILER, &event->slot, dev->info->dpu);
	sdpu_blob_seal(event->blob, SDPU_BLOB_SYNC_EVENT_PCI, SDPU_SE_PAYLOAD, dev->fabric->id);
	*data = event->blob;
	*sz = sizeof(event->blob);
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz, struct doca_sync_event **event)
{
	const char *call = "doca_sync_event_create_from_export";
	uint8_t blob[SDPU_SE_BLOB_SIZE];
	const uint8_t *payload = blob + SDPU_BLOB_HEADER;
	struct sdpu_descriptor control_d, value_d;
	struct sdpu_export_slot slot;
	struct doca_sync_event *ev;
	const char *problem;
	double offset;
	doca_error_t err;

	if (dev == NULL || data == NULL || event == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (dev->info->caps.value[SDPU_CAP_SE_CREATE_FROM_EXPORT] == 0) {
		char pci[13];

		sdpu_pci_format(&dev->info->pci, pci);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s cannot create sync events from an export (its topology says so)", call, pci);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	err = sdpu_blob_check(data, sz, SDPU_BLOB_SYNC_EVENT_PCI, SDPU_SE_PAYLOAD, dev->fabric->id, call);
	if (err != DOCA_SUCCESS)
		return err;
	memcpy(blob, data, sizeof(blob)); /* read once: the caller's buffer may change under us */
	err = sdpu_pci_trailer_read(payload + P_TRAILER, dev->info->dpu, "event", call, &slot);
	if (err != DOCA_SUCCESS)
		return err;
	memcpy(&offset, payload + P_OFFSET, 8);
	ev = calloc(1, sizeof(*ev));
	if (ev == NULL)
		return DOCA_ERROR_NO_MEMORY;
	sdpu_ctx_init(&ev->ctx, &sdpu_se_ctx_ops);
	ev->source.bit = -1;
	ev->imported = true;
	/* The slot first (NOT_FOUND for a stale export), then both descriptors, decoded before anything they name is mapped. */
	err = sdpu_export_view_open(&slot, call, &ev->view);
	if (err != DOCA_SUCCESS)
		goto failed;
	if (sdpu_descriptor_decode(payload + P_CONTROL, &control_d) != DOCA_SUCCESS ||
	    sdpu_descriptor_decode(payload + P_VALUE, &value_d) != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the blob names a segment no process could have (pid 0, or an impossible start or size)", call);
		err = DOCA_ERROR_INVALID_VALUE;
		goto failed;
	}
	err = sdpu_segment_open(&control_d, "syncevent", call, &ev->control);
	if (err != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the event's control block (pid %u) does not open (%s)", call, control_d.pid,
			     doca_error_get_name(err));
		goto failed;
	}
	problem = sdpu_se_control_problem(ev->control);
	if (problem != NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the segment the blob names as the event's control block %s", call, problem);
		err = DOCA_ERROR_INVALID_VALUE;
		goto failed;
	}
	if (sdpu_descriptor_equal(&value_d, &control_d)) {
		ev->value_segment = ev->control;
	} else {
		err = sdpu_segment_open(&value_d, "mem", call, &ev->value_segment);
		if (err != DOCA_SUCCESS) {
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the event's counter memory (pid %u) does not open (%s)", call, value_d.pid,
				     doca_error_get_name(err));
			goto failed;
		}
	}
	if (!sdpu_safe_integer(offset) || (uint64_t)offset % 8 != 0 || offset < SDPU_SEGMENT_HEADER ||
	    offset + 8 > (double)ev->value_segment->size) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the blob names a counter at byte %g of a %zu-byte segment", call, offset,
			     ev->value_segment->size);
		err = DOCA_ERROR_INVALID_VALUE;
		goto failed;
	}
	/* In its own control block the counter has one place: any other would alias the waiter counts or table. */
	if (ev->value_segment == ev->control && offset != SDPU_SE_VALUE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the blob names a counter at byte %g of the event's control block, where the counter is at byte %d",
			     call, offset, SDPU_SE_VALUE);
		err = DOCA_ERROR_INVALID_VALUE;
		goto failed;
	}
	ev->value = (uint64_t *)(ev->value_segment->base + (size_t)offset);
	ev->cap_info = dev->info;
	sdpu_se_waiters_init(&ev->waiters, ev->control);
	*event = ev;
	return DOCA_SUCCESS;
failed:
	if (ev->value_segment != ev->control)
		sdpu_segment_close(ev->value_segment);
	sdpu_segment_close(ev->control);
	sdpu_export_view_close(&ev->view);
	free(ev);
	return err;
}
