/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch.h's calls on a connection and a send task. A server's connection is valid until its
 * disconnect callback returns; a client's, until the client is destroyed or started again.
 */
#include "comch/comch.h"

doca_error_t doca_comch_connection_set_user_data(struct doca_comch_connection *connection, union doca_data user_data)
{
	if (connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	connection->user_data = user_data;
	return DOCA_SUCCESS;
}

union doca_data doca_comch_connection_get_user_data(const struct doca_comch_connection *connection)
{
	union doca_data none = {.u64 = 0};

	return connection == NULL ? none : connection->user_data;
}

struct doca_comch_server *doca_comch_server_get_server_ctx(const struct doca_comch_connection *connection)
{
	return connection == NULL || !connection->server_side ? NULL : (struct doca_comch_server *)connection->owner;
}

struct doca_comch_client *doca_comch_client_get_client_ctx(const struct doca_comch_connection *connection)
{
	return connection == NULL || connection->server_side ? NULL : (struct doca_comch_client *)connection->owner;
}

doca_error_t doca_comch_connection_update_info(struct doca_comch_connection *comch_connection)
{
	if (comch_connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (comch_connection->state != SDPU_CONNECTED && comch_connection->state != SDPU_DISCONNECTING)
		return DOCA_ERROR_CONNECTION_ABORTED;
	for (int i = 1; i <= 4; i++)
		comch_connection->snapshot[i] = comch_connection->counters[i];
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_connection_get_counter(const struct doca_comch_connection *comch_connection,
					       enum doca_comch_counter counter_type, uint64_t *counter_value)
{
	if (comch_connection == NULL || counter_value == NULL || counter_type < DOCA_COMCH_COUNTER_SENT_MESSAGES ||
	    counter_type > DOCA_COMCH_COUNTER_RECV_BYTES)
		return DOCA_ERROR_INVALID_VALUE;
	*counter_value = comch_connection->snapshot[counter_type];
	return DOCA_SUCCESS;
}

struct doca_task *doca_comch_task_send_as_task(struct doca_comch_task_send *task)
{
	return task == NULL ? NULL : &task->base;
}
