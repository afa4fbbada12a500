/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch_ctrl_path_client: DOCA's comch control path client sample flow, on softdpu. On a host
 * function (-p) it connects to the server of the control path sample, sends its text (-t) once the
 * connection runs, prints the server's answer and stops: start returns DOCA_ERROR_IN_PROGRESS, the state
 * callback sees STARTING and then RUNNING, where the connection is fetched and the text sent.
 */
#include <string.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_log.h>

#include "common.h"

DOCA_LOG_REGISTER(COMCH_CTRL_PATH_CLIENT);

struct client_state {
	struct doca_comch_client *client;
	const char *text;
	doca_error_t result;
	bool finish;
	bool ran;
};

static void send_text(struct client_state *state)
{
	struct doca_comch_connection *connection;
	struct doca_comch_task_send *task;
	union doca_data user_data = {.ptr = state};
	doca_error_t result = doca_comch_client_get_connection(state->client, &connection);

	if (result == DOCA_SUCCESS)
		result = doca_comch_connection_set_user_data(connection, user_data);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_task_send_alloc_init(state->client, connection, state->text, (uint32_t)strlen(state->text), &task);
	if (result == DOCA_SUCCESS) {
		result = doca_task_submit(doca_comch_task_send_as_task(task));
		if (result != DOCA_SUCCESS)
			doca_task_free(doca_comch_task_send_as_task(task));
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to send the message: %s", doca_error_get_descr(result));
		state->result = result;
		doca_ctx_stop(doca_comch_client_as_ctx(state->client));
	}
}

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
			  enum doca_ctx_states next)
{
	struct client_state *state = user_data.ptr;

	(void)ctx;
	(void)prev;
	switch (next) {
	case DOCA_CTX_STATE_STARTING:
		DOCA_LOG_INFO("Client context entered starting state. Waiting for connection");
		break;
	case DOCA_CTX_STATE_RUNNING:
		DOCA_LOG_INFO("Client context is running. Sending message");
		state->ran = true;
		send_text(state);
		break;
	case DOCA_CTX_STATE_STOPPING:
		DOCA_LOG_INFO("Client context entered stopping state. Waiting for connection termination");
		break;
	case DOCA_CTX_STATE_IDLE:
		if (!state->ran && state->result == DOCA_SUCCESS)
			state->result = DOCA_ERROR_CONNECTION_ABORTED;
		state->finish = true;
		break;
	}
}

static void send_ok(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void send_failed(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct client_state *state = ctx_user_data.ptr;

	(void)task_user_data;
	state->result = doca_task_get_status(doca_comch_task_send_as_task(task));
	DOCA_LOG_ERR("Message failed to send: %s", doca_error_get_descr(state->result));
	doca_task_free(doca_comch_task_send_as_task(task));
	doca_ctx_stop(doca_comch_client_as_ctx(state->client));
}

static void message_received(struct doca_comch_event_msg_recv *event, uint8_t *recv_buffer, uint32_t msg_len,
			     struct doca_comch_connection *connection)
{
	struct client_state *state = doca_comch_connection_get_user_data(connection).ptr;

	(void)event;
	DOCA_LOG_INFO("Message received: '%.*s'", (int)msg_len, (const char *)recv_buffer);
	doca_ctx_stop(doca_comch_client_as_ctx(state->client));
}

static doca_error_t run(const struct sample_config *cfg)
{
	struct client_state state = {.text = cfg->text, .result = DOCA_SUCCESS};
	struct doca_dev *dev = NULL;
	struct doca_pe *pe = NULL;
	struct doca_ctx *ctx;
	union doca_data user_data = {.ptr = &state};
	uint32_t max_msg_size = 0;
	doca_error_t result;

	result = open_device(cfg->pci, doca_comch_cap_client_is_supported, &dev);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_pe_create(&pe);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_create(dev, SERVER_NAME, &state.client);
	if (result != DOCA_SUCCESS)
		goto close;
	ctx = doca_comch_client_as_ctx(state.client);
	result = doca_pe_connect_ctx(pe, ctx);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_state_changed_cb(ctx, state_changed);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_task_send_set_conf(state.client, send_ok, send_failed, SEND_TASKS);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_event_msg_recv_register(state.client, message_received);
	if (result == DOCA_SUCCESS)
		result = doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg_size);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_set_max_msg_size(state.client, max_msg_size);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_set_recv_queue_size(state.client, RECV_QUEUE_SIZE);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(ctx, user_data);
	if (result == DOCA_SUCCESS && strlen(cfg->text) > max_msg_size) {
		DOCA_LOG_ERR("The text is %zu bytes; the maximal message size is %u", strlen(cfg->text), max_msg_size);
		result = DOCA_ERROR_INVALID_VALUE;
	}
	if (result == DOCA_SUCCESS) {
		result = doca_ctx_start(ctx);
		if (result != DOCA_ERROR_IN_PROGRESS) {
			DOCA_LOG_ERR("Failed to start the client: %s", doca_error_get_descr(result));
			result = result == DOCA_SUCCESS ? DOCA_ERROR_UNEXPECTED : result;
		} else {
			result = DOCA_SUCCESS;
		}
	}
	if (result == DOCA_SUCCESS) {
		progress_until(pe, &state.finish);
		result = state.result;
	} else {
		DOCA_LOG_ERR("Failed to set the client up: %s", doca_error_get_descr(result));
	}
	doca_comch_client_destroy(state.client);
close:
	if (pe != NULL)
		doca_pe_destroy(pe);
	doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	return sample_main(argc, argv, "doca_comch_ctrl_path_client", false, run);
}
