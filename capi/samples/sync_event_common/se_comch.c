/* SPDX-License-Identifier: Apache-2.0 */
/*
 * se_common.h: the comch connection of the sync event samples, which carries the export blob. The DPU's
 * Arm side serves (one client, the representor's host function), the host connects, as DOCA's samples.
 */
#include <string.h>

#include <doca_log.h>

#include "se_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT::COMCH);

static struct se_sample *sample_of(struct doca_ctx *ctx)
{
	union doca_data user_data = {0};

	doca_ctx_get_user_data(ctx, &user_data);
	return user_data.ptr;
}

static enum doca_ctx_states comch_state(const struct se_sample *s)
{
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;

	doca_ctx_get_state(s->comch_ctx, &state);
	return state;
}

static bool comch_idle(const struct se_sample *s)
{
	return comch_state(s) == DOCA_CTX_STATE_IDLE;
}

static bool sent(const struct se_sample *s)
{
	return s->sent;
}

static bool blob_arrived(const struct se_sample *s)
{
	return s->blob_len != 0 || s->comch_result != DOCA_SUCCESS;
}

#ifdef DOCA_ARCH_DPU
static bool connected_or_failed(const struct se_sample *s)
{
	return s->connection != NULL || comch_idle(s);
}

static bool disconnected_or_failed(const struct se_sample *s)
{
	return s->connection == NULL || comch_idle(s);
}
#else
static bool left_starting(const struct se_sample *s)
{
	return comch_state(s) != DOCA_CTX_STATE_STARTING;
}
#endif

static void send_done(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct se_sample *s = ctx_user_data.ptr;
	doca_error_t status = doca_task_get_status(doca_comch_task_send_as_task(task));

	(void)task_user_data;
	if (status != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The message failed to send: %s", doca_error_get_descr(status));
		s->comch_result = status;
	}
	s->sent = true;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static struct doca_ctx *ctx_of(struct doca_comch_connection *connection)
{
#ifdef DOCA_ARCH_DPU
	return doca_comch_server_as_ctx(doca_comch_server_get_server_ctx(connection));
#else
	return doca_comch_client_as_ctx(doca_comch_client_get_client_ctx(connection));
#endif
}

static void received(struct doca_comch_event_msg_recv *event, uint8_t *recv_buffer, uint32_t msg_len,
		     struct doca_comch_connection *connection)
{
	struct se_sample *s = sample_of(ctx_of(connection));

	(void)event;
	if (s->blob_len != 0) {
		DOCA_LOG_WARN("Ignored a second message of %u bytes", msg_len);
		return;
	}
	if (msg_len == 0 || msg_len > SE_MAX_MSG_SIZE) {
		DOCA_LOG_ERR("A message of %u bytes is no export blob (1 to %d bytes)", msg_len, SE_MAX_MSG_SIZE);
		s->comch_result = DOCA_ERROR_INVALID_VALUE;
		return;
	}
	memcpy(s->blob, recv_buffer, msg_len);
	s->blob_len = msg_len;
}

#ifdef DOCA_ARCH_DPU
static void connected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *connection,
		      uint8_t change_successful)
{
	struct se_sample *s = sample_of(ctx_of(connection));

	(void)event;
	if (!change_successful)
		return;
	if (s->connection != NULL) {
		DOCA_LOG_WARN("Refused a second client: the sample serves one");
		doca_comch_server_disconnect(s->server, connection);
		return;
	}
	s->connection = connection;
	DOCA_LOG_INFO("Server received a new connection");
}

static void disconnected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *connection,
			 uint8_t change_successful)
{
	struct se_sample *s = sample_of(ctx_of(connection));

	(void)event;
	(void)change_successful;
	if (connection == s->connection) {
		s->connection = NULL;
		DOCA_LOG_INFO("Client has disconnected from server");
	}
}

static doca_error_t create(struct se_sample *s)
{
	doca_error_t result = doca_comch_server_create(s->dev, s->rep, SE_SERVICE_NAME, &s->server);

	if (result != DOCA_SUCCESS)
		return result;
	s->comch_ctx = doca_comch_server_as_ctx(s->server);
	result = doca_comch_server_set_max_msg_size(s->server, SE_MAX_MSG_SIZE);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_set_recv_queue_size(s->server, SE_RECV_QUEUE_SIZE);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_task_send_set_conf(s->server, send_done, send_done, SE_SEND_TASKS);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_msg_recv_register(s->server, received);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_connection_status_changed_register(s->server, connected, disconnected);
	return result;
}

static doca_error_t start(struct se_sample *s)
{
	doca_error_t result = doca_ctx_start(s->comch_ctx);

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start the comch server: %s", doca_error_get_descr(result));
		return result;
	}
	DOCA_LOG_INFO("Comch server \"%s\" is running. Waiting for the host to connect", SE_SERVICE_NAME);
	result = se_progress_until(s, s->comch_pe, connected_or_failed, "a client on the host");
	if (result == DOCA_SUCCESS && s->connection == NULL) {
		DOCA_LOG_ERR("The comch server stopped before a client connected");
		result = DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Received connection from host");
	return result;
}
#else
static doca_error_t create(struct se_sample *s)
{
	doca_error_t result = doca_comch_client_create(s->dev, SE_SERVICE_NAME, &s->client);

	if (result != DOCA_SUCCESS)
		return result;
	s->comch_ctx = doca_comch_client_as_ctx(s->client);
	result = doca_comch_client_set_max_msg_size(s->client, SE_MAX_MSG_SIZE);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_set_recv_queue_size(s->client, SE_RECV_QUEUE_SIZE);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_task_send_set_conf(s->client, send_done, send_done, SE_SEND_TASKS);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_event_msg_recv_register(s->client, received);
	return result;
}

static doca_error_t start(struct se_sample *s)
{
	doca_error_t result = doca_ctx_start(s->comch_ctx);

	if (result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("Failed to start the comch client: %s", doca_error_get_descr(result));
		return result == DOCA_SUCCESS ? DOCA_ERROR_UNEXPECTED : result;
	}
	result = se_progress_until(s, s->comch_pe, left_starting, "the comch server " SE_SERVICE_NAME " on the DPU");
	if (result != DOCA_SUCCESS)
		return result;
	if (comch_state(s) != DOCA_CTX_STATE_RUNNING) {
		DOCA_LOG_ERR("The comch client did not connect to " SE_SERVICE_NAME);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	result = doca_comch_client_get_connection(s->client, &s->connection);
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Connection to DPU has been established");
	return result;
}
#endif

doca_error_t se_connect(struct se_sample *s)
{
	union doca_data user_data = {.ptr = s};
	doca_error_t result = doca_pe_create(&s->comch_pe);

	if (result == DOCA_SUCCESS)
		result = create(s);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(s->comch_pe, s->comch_ctx);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(s->comch_ctx, user_data);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set the comch side up: %s", doca_error_get_descr(result));
		return result;
	}
	return start(s);
}

doca_error_t se_send(struct se_sample *s, const uint8_t *data, size_t len)
{
	struct doca_comch_task_send *task;
	doca_error_t result;

#ifdef DOCA_ARCH_DPU
	result = doca_comch_server_task_send_alloc_init(s->server, s->connection, data, (uint32_t)len, &task);
#else
	result = doca_comch_client_task_send_alloc_init(s->client, s->connection, data, (uint32_t)len, &task);
#endif
	if (result == DOCA_SUCCESS) {
		s->sent = false;
		result = doca_task_submit(doca_comch_task_send_as_task(task));
		if (result != DOCA_SUCCESS)
			doca_task_free(doca_comch_task_send_as_task(task));
	}
	if (result == DOCA_SUCCESS)
		result = se_progress_until(s, s->comch_pe, sent, "the message's delivery");
	if (result == DOCA_SUCCESS)
		result = s->comch_result;
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to send %zu bytes: %s", len, doca_error_get_descr(result));
	return result;
}

doca_error_t se_receive(struct se_sample *s)
{
	doca_error_t result;

	DOCA_LOG_INFO("Waiting for the exported event from the remote side");
	result = se_progress_until(s, s->comch_pe, blob_arrived, "the exported event");
	if (result == DOCA_SUCCESS)
		result = s->comch_result;
	if (result == DOCA_SUCCESS)
		DOCA_LOG_INFO("Received blob from remote side (%zu bytes)", s->blob_len);
	return result;
}

void se_comch_close(struct se_sample *s)
{
	doca_error_t result;

	if (s->comch_ctx != NULL) {
#ifdef DOCA_ARCH_DPU
		/* The host leaves first: the server waits for its client to disconnect, as DOCA's samples do. */
		se_progress_until(s, s->comch_pe, disconnected_or_failed, "the host to disconnect");
#endif
		if (!comch_idle(s)) {
			result = doca_ctx_stop(s->comch_ctx);
			if (result != DOCA_SUCCESS && result != DOCA_ERROR_IN_PROGRESS)
				DOCA_LOG_ERR("Failed to stop the comch context: %s", doca_error_get_descr(result));
			se_progress_until(s, s->comch_pe, comch_idle, "the comch context to stop");
		}
#ifdef DOCA_ARCH_DPU
		result = doca_comch_server_destroy(s->server);
#else
		result = doca_comch_client_destroy(s->client);
#endif
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to destroy the comch context: %s", doca_error_get_descr(result));
	}
	if (s->comch_pe != NULL)
		doca_pe_destroy(s->comch_pe);
}
