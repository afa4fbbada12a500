/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_sync_event_cap_*: answered from the topology's syncEvent capabilities (docs/topology.md), as the
 * TypeScript side's src/sync-event/caps.ts answers them, except for what this library does not have:
 * remote-net, DPA and GPU sync events are NOT_SUPPORTED whatever the topology says, so that a program
 * that asks first is told the truth (the calls themselves answer NOT_SUPPORTED with a line saying why).
 */
#include <doca_sync_event.h>

#include "fabric/topology.h"

static doca_error_t missing(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_SUPPORTED;
}

static doca_error_t cap(const struct doca_devinfo *devinfo, enum sdpu_cap which)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->caps.value[which] != 0 ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_sync_event_cap_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_CREATE_FROM_EXPORT);
}

doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	return missing(devinfo);
}

doca_error_t doca_sync_event_cap_is_export_to_remote_pci_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_EXPORT_TO_REMOTE_PCI);
}

doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo)
{
	return missing(devinfo);
}

doca_error_t doca_sync_event_cap_is_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return missing(devinfo);
}

doca_error_t doca_sync_event_cap_is_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return missing(devinfo);
}

doca_error_t doca_sync_event_cap_remote_net_is_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return missing(devinfo);
}

doca_error_t doca_sync_event_cap_remote_net_is_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return missing(devinfo);
}

doca_error_t doca_sync_event_cap_task_get_is_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_TASK_GET);
}

doca_error_t doca_sync_event_cap_task_notify_set_is_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_TASK_NOTIFY_SET);
}

doca_error_t doca_sync_event_cap_task_notify_add_is_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_TASK_NOTIFY_ADD);
}

doca_error_t doca_sync_event_cap_task_wait_eq_is_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_TASK_WAIT_EQ);
}

doca_error_t doca_sync_event_cap_task_wait_neq_is_supported(const struct doca_devinfo *devinfo)
{
	return cap(devinfo, SDPU_CAP_SE_TASK_WAIT_NEQ);
}
