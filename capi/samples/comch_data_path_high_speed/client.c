/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch_data_path_high_speed_client: DOCA's comch data path sample flow (the client, on the host),
 * on softdpu. It connects from -p to the data path server, starts the test over the control path, sends
 * its text (-t) through a producer to the server's consumer, receives the server's text through a
 * consumer of its own, stops the test and disconnects. The client's start returns DOCA_ERROR_IN_PROGRESS.
 */
#include <string.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_log.h>

#include "common.h"
#include "data_path.h"

DOCA_LOG_REGISTER(COMCH_DATA_PATH_CLIENT);

/* The control block first: the connection's user data points at both (data_path.c reads the control). */
struct client_state {
	struct data_path_control control;
	struct doca_comch_client *client;
	bool running;
};

static void sent(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void received(struct doca_comch_event_msg_recv *event, uint8_t *msg, uint32_t len, struct doca_comch_connection *conn)
{
	struct client_state *state = doca_comch_connection_get_user_data(conn).ptr;

	(void)event;
	if (state == NULL)
		return;
	if (len == strlen(START_MSG) && memcmp(msg, START_MSG, len) == 0)
		state->control.started = true;
	if (len == strlen(STOP_MSG) && memcmp(msg, STOP_MSG, len) == 0)
		state->control.stopped = true;
}

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev, enum doca_ctx_states next)
{
	struct client_state *state = user_data.ptr;

	(void)ctx;
	(void)prev;
	if (next == DOCA_CTX_STATE_RUNNING && doca_comch_client_get_connection(state->client, &state->control.conn) == DOCA_SUCCESS) {
		doca_comch_connection_set_user_data(state->control.conn, user_data);
		state->running = true;
		DOCA_LOG_INFO("Client context is running: connected to the server");
	}
}

static doca_error_t control_send(struct client_state *state, const char *text)
{
	struct doca_comch_task_send *task;
	doca_error_t result = doca_comch_client_task_send_alloc_init(state->client, state->control.conn, text, (uint32_t)strlen(text), &task);

	if (result == DOCA_SUCCESS) {
		result = doca_task_submit(doca_comch_task_send_as_task(task));
		if (result != DOCA_SUCCESS)
			doca_task_free(doca_comch_task_send_as_task(task));
	}
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to send '%s': %s", text, doca_error_get_descr(result));
	return result;
}

static doca_error_t run(const struct sample_config *cfg)
{
	struct client_state state = {0};
	struct doca_dev *dev = NULL;
	union doca_data ud = {.ptr = &state};
	uint32_t max_msg = 0;
	bool started = false;
	doca_error_t result = open_device(cfg->pci, doca_comch_cap_client_is_supported, &dev);

	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&state.control.pe);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_create(dev, DATA_PATH_SERVER_NAME, &state.client);
	if (result == DOCA_SUCCESS)
		result = doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_set_max_msg_size(state.client, max_msg);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(state.control.pe, doca_comch_client_as_ctx(state.client));
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(doca_comch_client_as_ctx(state.client), ud);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_state_changed_cb(doca_comch_client_as_ctx(state.client), state_changed);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_task_send_set_conf(state.client, sent, sent, 8);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_event_msg_recv_register(state.client, received);
	if (result == DOCA_SUCCESS)
		result = doca_comch_client_event_consumer_register(state.client, data_path_consumer_new, data_path_consumer_expired);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create the client: %s", doca_error_get_descr(result));
		goto out;
	}
	result = doca_ctx_start(doca_comch_client_as_ctx(state.client));
	if (result != DOCA_ERROR_IN_PROGRESS) {
		DOCA_LOG_ERR("The client start returned %s, not DOCA_ERROR_IN_PROGRESS", doca_error_get_name(result));
		result = result == DOCA_SUCCESS ? DOCA_ERROR_UNEXPECTED : result;
		goto out;
	}
	started = true;
	result = data_path_wait(&state.control, NULL, &state.running, "the server " DATA_PATH_SERVER_NAME " (is it running?)");
	if (result == DOCA_SUCCESS)
		result = control_send(&state, START_MSG);
	if (result == DOCA_SUCCESS)
		result = data_path_wait(&state.control, NULL, &state.control.started, "the server to start the test");
	if (result == DOCA_SUCCESS)
		result = data_path_send_msg(dev, &state.control, cfg->text);
	if (result == DOCA_SUCCESS)
		result = data_path_recv_msg(dev, &state.control);
	if (result == DOCA_SUCCESS)
		result = control_send(&state, STOP_MSG);
	if (result == DOCA_SUCCESS)
		result = data_path_wait(&state.control, NULL, &state.control.stopped, "the server to stop the test");
out:
	if (started) {
		struct doca_ctx *ctx = doca_comch_client_as_ctx(state.client);
		enum doca_ctx_states s = DOCA_CTX_STATE_RUNNING;

		doca_ctx_stop(ctx);
		for (doca_ctx_get_state(ctx, &s); s != DOCA_CTX_STATE_IDLE; doca_ctx_get_state(ctx, &s))
			doca_pe_progress(state.control.pe);
	}
	if (state.client != NULL)
		doca_comch_client_destroy(state.client);
	if (state.control.pe != NULL)
		doca_pe_destroy(state.control.pe);
	if (dev != NULL)
		doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	return sample_main(argc, argv, "doca_comch_data_path_high_speed_client", false, run);
}
