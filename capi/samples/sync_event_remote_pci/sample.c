/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_sync_event_remote_pci: DOCA's sync event remote PCI sample flow, on softdpu. It receives the
 * export blob of doca_sync_event_local_pci over comch, creates the event from it, waits for 1 and
 * signals 2 (sets it, or adds 1 with --atomic). Built against the DPU tree it runs on the Arm side (the
 * comch server, -r the host function); against the host tree, on a host function (the client). --async
 * does the same with tasks.
 */
#include <doca_log.h>

#include "se_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT::REMOTE_PCI);

static doca_error_t run(struct se_sample *s)
{
	doca_error_t result = se_open(s, doca_sync_event_cap_is_create_from_export_supported);

	if (result == DOCA_SUCCESS)
		result = se_connect(s);
	if (result == DOCA_SUCCESS)
		result = se_receive(s);
	if (result == DOCA_SUCCESS) {
		result = doca_sync_event_create_from_export(s->dev, s->blob, s->blob_len, &s->event);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to create the sync event from the export: %s", doca_error_get_descr(result));
	}
	if (result == DOCA_SUCCESS)
		result = se_start(s);
	if (result == DOCA_SUCCESS)
		result = se_wait(s, 1, false);
	if (result == DOCA_SUCCESS)
		result = se_signal(s, 2);
	return result;
}

int main(int argc, char **argv)
{
	return se_main(argc, argv, "doca_sync_event_remote_pci", run);
}
