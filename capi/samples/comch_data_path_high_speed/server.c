/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_comch_data_path_high_speed_server: DOCA's comch data path sample flow (the server, on the DPU's
 * Arm side), on softdpu. It serves on -p with the representor -r, answers each control message with
 * itself (the client's start and stop of the test), receives the client's text through a consumer, sends
 * its own (-t) through a producer to the client's consumer, and ends once the client stopped the test
 * and disconnected.
 */
#include <string.h>

#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_log.h>

#include "common.h"
#include "data_path.h"

DOCA_LOG_REGISTER(COMCH_DATA_PATH_SERVER);

/* The control block first: the connection's user data points at both (data_path.c reads the control). */
struct server_state {
	struct data_path_control control;
	struct doca_comch_server *server;
	bool connected, disconnected;
};

static struct server_state *state_of(struct doca_comch_connection *conn)
{
	return doca_comch_connection_get_user_data(conn).ptr;
}

static void sent(struct doca_comch_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)task_user_data;
	(void)ctx_user_data;
	doca_task_free(doca_comch_task_send_as_task(task));
}

static void received(struct doca_comch_event_msg_recv *event, uint8_t *msg, uint32_t len, struct doca_comch_connection *conn)
{
	struct server_state *state = state_of(conn);
	struct doca_comch_task_send *task;

	(void)event;
	if (state == NULL)
		return;
	/* The control messages are answered with themselves. */
	if (doca_comch_server_task_send_alloc_init(state->server, conn, msg, len, &task) == DOCA_SUCCESS &&
	    doca_task_submit(doca_comch_task_send_as_task(task)) != DOCA_SUCCESS)
		doca_task_free(doca_comch_task_send_as_task(task));
	if (len == strlen(START_MSG) && memcmp(msg, START_MSG, len) == 0)
		state->control.started = true;
	if (len == strlen(STOP_MSG) && memcmp(msg, STOP_MSG, len) == 0) {
		state->control.stopped = true;
		state->control.remote_consumer_id = INVALID_CONSUMER_ID;
		state->control.consumer_known = true;
	}
}

static void connected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn, uint8_t ok)
{
	struct doca_comch_server *server = doca_comch_server_get_server_ctx(conn);
	union doca_data ud;
	struct server_state *state;

	(void)event;
	if (!ok || doca_ctx_get_user_data(doca_comch_server_as_ctx(server), &ud) != DOCA_SUCCESS)
		return;
	state = ud.ptr;
	if (state->control.conn != NULL) {
		DOCA_LOG_WARN("A second client connected; the sample serves one");
		return;
	}
	state->control.conn = conn;
	state->connected = true;
	doca_comch_connection_set_user_data(conn, ud);
	DOCA_LOG_INFO("A client connected");
}

static void disconnected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn, uint8_t ok)
{
	struct server_state *state = state_of(conn);

	(void)event;
	(void)ok;
	if (state != NULL && state->control.conn == conn) {
		state->disconnected = true;
		DOCA_LOG_INFO("The client disconnected");
	}
}

static doca_error_t run(const struct sample_config *cfg)
{
	struct server_state state = {0};
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	union doca_data ud = {.ptr = &state};
	uint32_t max_msg = 0;
	bool running = false;
	doca_error_t result = open_device(cfg->pci, doca_comch_cap_server_is_supported, &dev);

	if (result == DOCA_SUCCESS)
		result = open_representor(dev, cfg->rep_pci, &rep);
	if (result == DOCA_SUCCESS)
		result = doca_pe_create(&state.control.pe);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_create(dev, rep, DATA_PATH_SERVER_NAME, &state.server);
	if (result == DOCA_SUCCESS)
		result = doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_set_max_msg_size(state.server, max_msg);
	if (result == DOCA_SUCCESS)
		result = doca_pe_connect_ctx(state.control.pe, doca_comch_server_as_ctx(state.server));
	if (result == DOCA_SUCCESS)
		result = doca_ctx_set_user_data(doca_comch_server_as_ctx(state.server), ud);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_task_send_set_conf(state.server, sent, sent, 8);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_msg_recv_register(state.server, received);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_connection_status_changed_register(state.server, connected, disconnected);
	if (result == DOCA_SUCCESS)
		result = doca_comch_server_event_consumer_register(state.server, data_path_consumer_new, data_path_consumer_expired);
	if (result == DOCA_SUCCESS)
		result = doca_ctx_start(doca_comch_server_as_ctx(state.server));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start the server: %s", doca_error_get_descr(result));
		goto out;
	}
	running = true;
	DOCA_LOG_INFO("Server context is running; waiting for a client");
	result = data_path_wait(&state.control, NULL, &state.control.started, "a client to connect and start the test");
	if (result == DOCA_SUCCESS)
		result = data_path_recv_msg(dev, &state.control);
	if (result == DOCA_SUCCESS)
		result = data_path_send_msg(dev, &state.control, cfg->text);
	if (result == DOCA_SUCCESS)
		result = data_path_wait(&state.control, NULL, &state.control.stopped, "the client to stop the test");
	if (result == DOCA_SUCCESS)
		result = data_path_wait(&state.control, NULL, &state.disconnected, "the client to disconnect");
out:
	if (running) {
		struct doca_ctx *ctx = doca_comch_server_as_ctx(state.server);
		enum doca_ctx_states s = DOCA_CTX_STATE_RUNNING;

		doca_ctx_stop(ctx);
		for (doca_ctx_get_state(ctx, &s); s != DOCA_CTX_STATE_IDLE; doca_ctx_get_state(ctx, &s))
			doca_pe_progress(state.control.pe);
	}
	if (state.server != NULL)
		doca_comch_server_destroy(state.server);
	if (state.control.pe != NULL)
		doca_pe_destroy(state.control.pe);
	if (rep != NULL)
		doca_dev_rep_close(rep);
	if (dev != NULL)
		doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	return sample_main(argc, argv, "doca_comch_data_path_high_speed_server", true, run);
}
