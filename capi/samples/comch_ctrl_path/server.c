/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch_ctrl_path_server: DOCA's comch control path server sample flow, on softdpu. On the DPU's Arm
 * side it waits for a client of the host function -r, prints the client's text and answers with its own
 * (-t), then stops: locate the device and the representor, make the progress engine and the server,
 * register the send task and the receive and connection events, start, progress until done, tear down.
 */
#include <string.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_log.h>

#include "common.h"

DOCA_LOG_REGISTER(COMCH_CTRL_PATH_SERVER);

struct server_state {
	struct doca_comch_server *server;
	const char *text;
	doca_error_t result;
	bool finish;
};

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev,
			  enum doca_ctx_states next)
{
	struct server_state *state = user_data.ptr;

	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_IDLE) {
		DOCA_LOG_INFO("Server context has been stopped");
		state->finish = true;
	} else if (next == DOCA_CTX_STATE_RUNNING) {
		DOCA_LOG_INFO("Server context is running. Waiting for a client");
	}
}

/* Sent (or failed): the exchange is over either way. */
static void send_done(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct server_state *state = ctx_user_data.ptr;

	(void)task_user_data;
	state->result = doca_task_get_status(doca_comch_task_send_as_task(task));
	if (state->result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Message failed to send: %s", doca_error_get_descr(state->result));
	doca_task_free(doca_comch_task_send_as_task(task));
	doca_ctx_stop(doca_comch_server_as_ctx(state->server));
}

static void message_received(struct doca_comch_event_msg_recv *event, uint8_t *recv_buffer, uint32_t msg_len,
			     struct doca_comch_connection *connection)
{
	struct doca_comch_server *server = doca_comch_server_get_server_ctx(connection);
	union doca_data user_data;
	struct server_state *state;
	struct doca_comch_task_send *task;
	doca_error_t result;

	(void)event;
	doca_ctx_get_user_data(doca_comch_server_as_ctx(server), &user_data);
	state = user_data.ptr;
	DOCA_LOG_INFO("Message received: '%.*s'", (int)msg_len, (const char *)recv_buffer);
	result = doca_comch_server_task_send_alloc_init(server, connection, state->text, (uint32_t)strlen(state->text), &task);
	if (result == DOCA_SUCCESS) {
		result = doca_task_submit(doca_comch_task_send_as_task(task));
		if (result != DOCA_SUCCESS)
			doca_task_free(doca_comch_task_send_as_task(task));
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to send the answer: %s", doca_error_get_descr(result));
		state->result = result;
		doca_ctx_stop(doca_comch_server_as_ctx(server));
	}
}

static void connected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *connection,
		      uint8_t change_successful)
{
	(void)event;
	(void)connection;
	if (change_successful)
		DOCA_LOG_INFO("Client connected");
}

static void disconnected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *connection,
			 uint8_t change_successful)
{
	(void)event;
	(void)connection;
	(void)change_successful;
	DOCA_LOG_INFO("Client disconnected");
}

static doca_error_t run(const struct sample_config *cfg)
{
	struct server_state state = {.text = cfg->text, .result = DOCA_SUCCESS};
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	struct doca_pe *pe = NULL;
	struct doca_ctx *ctx;
	union doca_data user_data = {.ptr = &state};
	uint32_t max_msg_size = 0;
	doca_error_t result;

	result = open_device(cfg->pci, doca_comch_cap_server_is_supported, &dev);
	if (result != DOCA_SUCCESS)
		return result;
	result = open_representor(dev, cfg->rep_pci, &rep);
	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&pe);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_create(dev, rep, SERVER_NAME, &state.server);
	if (result != DOCA_SUCCESS)
		goto close;
	ctx = doca_comch_server_as_ctx(state.server);
	result = doca_pe_connect_ctx(pe, ctx);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_state_changed_cb(ctx, state_changed);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_task_send_set_conf(state.server, send_done, send_done, SEND_TASKS);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_msg_recv_register(state.server, message_received);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_connection_status_changed_register(state.server, connected, disconnected);
	if (result == DOCA_SUCCESS)
		result = doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg_size);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_set_max_msg_size(state.server, max_msg_size);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_set_recv_queue_size(state.server, RECV_QUEUE_SIZE);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(ctx, user_data);
	if (result == DOCA_SUCCESS && strlen(cfg->text) > max_msg_size) {
		DOCA_LOG_ERR("The text is %zu bytes; the maximal message size is %u", strlen(cfg->text), max_msg_size);
		result = DOCA_ERROR_INVALID_VALUE;
	}
	if (result == DOCA_SUCCESS) {
		result = doca_ctx_start(ctx);
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("Failed to start the server: %s", doca_error_get_descr(result));
	}
	if (result == DOCA_SUCCESS) {
		progress_until(pe, &state.finish);
		result = state.result;
	} else {
		DOCA_LOG_ERR("Failed to set the server up: %s", doca_error_get_descr(result));
	}
	doca_comch_server_destroy(state.server);
close:
	if (pe != NULL)
		doca_pe_destroy(pe);
	if (rep != NULL)
		doca_dev_rep_close(rep);
	doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	return sample_main(argc, argv, "doca_comch_ctrl_path_server", true, run);
}
