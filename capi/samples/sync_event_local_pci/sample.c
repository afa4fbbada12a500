/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_sync_event_local_pci: DOCA's sync event local PCI sample flow, on softdpu. It creates an event
 * that the other side of PCI publishes to and this side's CPU waits on, sends its export blob over comch,
 * signals 1 (sets it, or adds 1 with --atomic) and waits for the remote side's 2. Built against the DPU
 * tree it runs on the Arm side (the comch server, -r the host function); against the host tree, on a host
 * function (the client). --async does the same with tasks.
 */
#include <doca_log.h>

#include "se_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT::LOCAL_PCI);

static doca_error_t run(struct se_sample *s)
{
	const uint8_t *blob;
	size_t blob_len;
	doca_error_t result = se_open(s, doca_sync_event_cap_is_export_to_remote_pci_supported);

	if (result != DOCA_SUCCESS)
		return result;
	result = doca_sync_event_create(&s->event);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_add_publisher_location_remote_pci(s->event);
	if (result == DOCA_SUCCESS)
		result = doca_sync_event_add_subscriber_location_cpu(s->event, s->dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create the sync event: %s", doca_error_get_descr(result));
		return result;
	}
	result = se_start(s);
	if (result == DOCA_SUCCESS)
		result = se_connect(s);
	if (result == DOCA_SUCCESS) {
		result = doca_sync_event_export_to_remote_pci(s->event, s->dev, &blob, &blob_len);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to export the sync event: %s", doca_error_get_descr(result));
	}
	if (result == DOCA_SUCCESS)
		result = se_send(s, blob, blob_len);
	if (result != DOCA_SUCCESS)
		return result;
	DOCA_LOG_INFO("Exported DOCA Sync Event has been sent to remote side successfully");
	result = se_signal(s, 1);
	if (result == DOCA_SUCCESS)
		result = se_wait(s, 2, true);
	return result;
}

int main(int argc, char **argv)
{
	return se_main(argc, argv, "doca_sync_event_local_pci", run);
}
