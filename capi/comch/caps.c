/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch.h's capability queries, answered from the topology as DOCA answers them: a server only on
 * the DPU's Arm side, a client only on the host side (the TypeScript side's src/comch/caps.ts).
 */
#include <doca_comch.h>

#include "fabric/topology.h"

static doca_error_t cap(const struct doca_devinfo *devinfo, enum sdpu_cap which, uint32_t *out)
{
	if (devinfo == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*out = (uint32_t)devinfo->caps.value[which];
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_cap_get_max_name_len(const struct doca_devinfo *devinfo, uint32_t *max_name_len)
{
	return cap(devinfo, SDPU_CAP_COMCH_MAX_NAME_LEN, max_name_len);
}

doca_error_t doca_comch_cap_get_max_msg_size(const struct doca_devinfo *devinfo, uint32_t *size)
{
	return cap(devinfo, SDPU_CAP_COMCH_MAX_MSG_SIZE, size);
}

doca_error_t doca_comch_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *size)
{
	return cap(devinfo, SDPU_CAP_COMCH_MAX_RECV_QUEUE_SIZE, size);
}

doca_error_t doca_comch_cap_get_max_clients(const struct doca_devinfo *devinfo, uint32_t *num_clients)
{
	return cap(devinfo, SDPU_CAP_COMCH_MAX_CLIENTS, num_clients);
}

doca_error_t doca_comch_cap_get_max_send_tasks(const struct doca_devinfo *devinfo, uint32_t *max_send_tasks)
{
	return cap(devinfo, SDPU_CAP_COMCH_MAX_SEND_TASKS, max_send_tasks);
}

doca_error_t doca_comch_cap_server_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->dpu_side ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_comch_cap_client_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return devinfo->dpu_side ? DOCA_ERROR_NOT_SUPPORTED : DOCA_SUCCESS;
}
