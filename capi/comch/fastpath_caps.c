/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch_consumer.h's and doca_comch_producer.h's capability queries, from the topology (both
 * sides have consumers and producers; the TypeScript side's src/comch/caps.ts).
 */
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>

#include "fabric/topology.h"

static doca_error_t cap(const struct doca_devinfo *devinfo, enum sdpu_cap which, uint32_t *out)
{
	if (devinfo == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*out = (uint32_t)devinfo->caps.value[which];
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_consumer_cap_is_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

doca_error_t doca_comch_consumer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks)
{
	return cap(devinfo, SDPU_CAP_CONSUMER_MAX_NUM_TASKS, max_num_tasks);
}

doca_error_t doca_comch_consumer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size)
{
	return cap(devinfo, SDPU_CAP_CONSUMER_MAX_BUF_SIZE, max_buf_size);
}

doca_error_t doca_comch_consumer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len)
{
	return cap(devinfo, SDPU_CAP_CONSUMER_MAX_BUF_LIST_LEN, max_buf_list_len);
}

doca_error_t doca_comch_consumer_cap_get_max_consumers(const struct doca_devinfo *devinfo, uint32_t *max_consumers)
{
	return cap(devinfo, SDPU_CAP_CONSUMER_MAX_CONSUMERS, max_consumers);
}

doca_error_t doca_comch_consumer_cap_get_max_imm_data_len(const struct doca_devinfo *devinfo, uint32_t *max_imm_data_len)
{
	return cap(devinfo, SDPU_CAP_CONSUMER_MAX_IMM_DATA_LEN, max_imm_data_len);
}

doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

doca_error_t doca_comch_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks)
{
	return cap(devinfo, SDPU_CAP_PRODUCER_MAX_NUM_TASKS, max_num_tasks);
}

doca_error_t doca_comch_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size)
{
	return cap(devinfo, SDPU_CAP_PRODUCER_MAX_BUF_SIZE, max_buf_size);
}

doca_error_t doca_comch_producer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len)
{
	return cap(devinfo, SDPU_CAP_PRODUCER_MAX_BUF_LIST_LEN, max_buf_list_len);
}

doca_error_t doca_comch_producer_cap_get_max_producers(const struct doca_devinfo *devinfo, uint32_t *max_producers)
{
	return cap(devinfo, SDPU_CAP_PRODUCER_MAX_PRODUCERS, max_producers);
}
