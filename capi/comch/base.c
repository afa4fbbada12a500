/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a comch server and a comch client share: message size and queue depth, the send task pool, the
 * receive and consumer event registrations, their connections, and the mailbox through which the helper
 * thread hands them what its handshakes made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/pe.h"

static const char *name_of(const struct sdpu_comch *c)
{
	return c->server ? "doca_comch_server" : "doca_comch_client";
}

static bool poll_mail(struct sdpu_source *source)
{
	struct sdpu_comch *c = (struct sdpu_comch *)((char *)source - offsetof(struct sdpu_comch, mail_source));

	if (__atomic_load_n(&c->mail, __ATOMIC_SEQ_CST) == 0)
		return false;
	__atomic_store_n(&c->mail, 0, __ATOMIC_SEQ_CST);
	c->mail_handler(c);
	return false;
}

void sdpu_comch_post(struct sdpu_comch *c)
{
	__atomic_store_n(&c->mail, 1, __ATOMIC_SEQ_CST);
	sdpu_source_ring(&c->mail_source);
}

void sdpu_comch_init(struct sdpu_comch *c, bool server, struct doca_dev *dev, const uint8_t *name, size_t name_len)
{
	c->server = server;
	c->dev = dev;
	c->name_len = name_len;
	c->max_msg_size = (uint32_t)dev->info->caps.value[SDPU_CAP_COMCH_MAX_MSG_SIZE];
	c->recv_queue_size = (uint32_t)dev->info->caps.value[SDPU_CAP_COMCH_MAX_RECV_QUEUE_SIZE];
	if (c->recv_queue_size > SDPU_DEFAULT_RECV_QUEUE_SIZE)
		c->recv_queue_size = SDPU_DEFAULT_RECV_QUEUE_SIZE;
	c->recv_event.owner = c;
	c->consumer_event.owner = c;
	c->mail_source.bit = -1;
	(void)name;
}

doca_error_t sdpu_comch_check_name(const struct doca_devinfo *info, const char *name, const char *call)
{
	uint64_t max = info->caps.value[SDPU_CAP_COMCH_MAX_NAME_LEN];

	if (name == NULL || name[0] == '\0') {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "comch", "%s: the server name must be a non-empty string", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (strlen(name) + 1 > max) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "comch", "%s: the name is %zu bytes (%zu with its NUL), more than max_name_len %llu",
			     call, strlen(name), strlen(name) + 1, (unsigned long long)max);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t sdpu_comch_require(struct sdpu_comch *c, const char *call)
{
	const char *missing = c->ctx.confs[SDPU_TASK_SEND] == NULL ? "the send task configuration (_task_send_set_conf)"
			      : c->recv_cb == NULL			? "the receive callback (_event_msg_recv_register)"
									: NULL;

	if (missing == NULL)
		return DOCA_SUCCESS;
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, name_of(c), "%s: set %s before starting", call, missing);
	return DOCA_ERROR_BAD_STATE;
}

doca_error_t sdpu_comch_start(struct sdpu_comch *c)
{
	if (!sdpu_source_reserve(&c->ctx, &c->mail_source, poll_mail))
		return DOCA_ERROR_NO_MEMORY;
	__atomic_store_n(&c->mail, 0, __ATOMIC_SEQ_CST);
	sdpu_source_attach(&c->mail_source);
	return DOCA_SUCCESS;
}

void sdpu_comch_idle(struct sdpu_comch *c)
{
	if (c->mail_source.ctx != NULL)
		sdpu_source_release(&c->mail_source);
}

void sdpu_comch_free(struct sdpu_comch *c)
{
	free(c->name);
	free(c);
}

void sdpu_comch_adopt(struct sdpu_comch *c, struct doca_comch_connection *conn)
{
	char name[48];

	conn->next = c->conns;
	c->conns = conn;
	c->nconns++;
	conn->number = ++c->adopted;
	snprintf(name, sizeof(name), "%s connection %u", c->server ? "server" : "client", conn->number);
	sdpu_stat_open(&conn->stat, SDPU_STAT_CONNECTION, name, &c->ctx.stat, conn->number);
	sdpu_stat_peer(&conn->stat, conn->peer.pid);
	c->ctx.stat.c[0] = (double)c->nconns;
	if (c->server)
		c->ctx.stat.c[1] += 1;
	sdpu_stat_event(&c->ctx.stat, SDPU_STAT_EV_CONNECT, "connection %u %s pid %u", c->adopted, c->server ? "from" : "to server",
			conn->peer.pid);
	sdpu_source_attach(&conn->source);
}

void sdpu_comch_forget(struct sdpu_comch *c, struct doca_comch_connection *conn)
{
	for (struct doca_comch_connection **at = &c->conns; *at != NULL; at = &(*at)->next)
		if (*at == conn) {
			*at = conn->next;
			c->nconns--;
			c->ctx.stat.c[0] = (double)c->nconns;
			const char *why = doca_error_get_name(conn->close_reason);

			sdpu_stat_event(&c->ctx.stat, SDPU_STAT_EV_DISCONNECT, "connection %u (%spid %u) %s", conn->number, c->server ? "" : "server ", conn->peer.pid,
					strncmp(why, "DOCA_ERROR_", 11) == 0 ? why + 11 : why);
			sdpu_stat_close(&conn->stat);
			return;
		}
}

doca_error_t sdpu_comch_set_max_msg_size(struct sdpu_comch *c, uint32_t size, const char *call)
{
	uint64_t cap = c->dev->info->caps.value[SDPU_CAP_COMCH_MAX_MSG_SIZE];
	doca_error_t err = sdpu_ctx_require_idle(&c->ctx, call);

	if (err != DOCA_SUCCESS)
		return err;
	if (size < 1 || size > cap) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, name_of(c), "%s: max_msg_size %u is not in [1, %llu]", call, size, (unsigned long long)cap);
		return DOCA_ERROR_INVALID_VALUE;
	}
	c->max_msg_size = size;
	return DOCA_SUCCESS;
}

doca_error_t sdpu_comch_set_recv_queue_size(struct sdpu_comch *c, uint32_t size, const char *call)
{
	uint64_t cap = c->dev->info->caps.value[SDPU_CAP_COMCH_MAX_RECV_QUEUE_SIZE];
	doca_error_t err = sdpu_ctx_require_idle(&c->ctx, call);

	if (err != DOCA_SUCCESS)
		return err;
	if (size < 1 || size > cap) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, name_of(c), "%s: recv_queue_size %u is not in [1, %llu]", call, size,
			     (unsigned long long)cap);
		return DOCA_ERROR_INVALID_VALUE;
	}
	c->recv_queue_size = size;
	return DOCA_SUCCESS;
}

static doca_error_t send_execute(struct doca_task *task)
{
	struct doca_comch_task_send *t = (struct doca_comch_task_send *)task;

	return sdpu_conn_send(t->conn, t);
}

static void send_dispatch(struct doca_task *task, bool success)
{
	struct sdpu_comch *c = (struct sdpu_comch *)task->ctx;

	(success ? c->send_ok : c->send_err)((struct doca_comch_task_send *)task, task->user_data, c->ctx.user_data);
}

doca_error_t sdpu_comch_task_send_set_conf(struct sdpu_comch *c, doca_comch_task_send_completion_cb_t ok,
					   doca_comch_task_send_completion_cb_t err, uint32_t num, const char *call)
{
	doca_error_t r;

	if (ok == NULL || err == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	r = sdpu_task_conf_set(&c->ctx, SDPU_TASK_SEND, "send", num, (uint32_t)c->dev->info->caps.value[SDPU_CAP_COMCH_MAX_SEND_TASKS],
			       sizeof(struct doca_comch_task_send), send_execute, send_dispatch, call);
	if (r == DOCA_SUCCESS) {
		c->send_ok = ok;
		c->send_err = err;
	}
	return r;
}

doca_error_t sdpu_comch_task_send_alloc_init(struct sdpu_comch *c, struct doca_comch_connection *conn, const void *msg,
					     uint32_t len, struct doca_comch_task_send **task, const char *call)
{
	struct doca_task *t;
	doca_error_t err;

	if (conn == NULL || task == NULL || (msg == NULL && len > 0))
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_running(&c->ctx, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (conn->owner != c) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, name_of(c), "%s: the connection does not belong to this context", call);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (conn->state == SDPU_CLOSED || len > conn->layout.msg_size) {
		if (conn->state != SDPU_CLOSED)
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, name_of(c), "%s: a %u-byte message exceeds the connection's max_msg_size %u%s",
				     call, len, conn->layout.msg_size,
				     conn->layout.msg_size < c->max_msg_size ? " (the smaller of this side's and the peer's setting)" : "");
		return conn->state == SDPU_CLOSED ? DOCA_ERROR_NOT_CONNECTED : DOCA_ERROR_INVALID_VALUE;
	}
	if (conn->state != SDPU_CONNECTED)
		return DOCA_ERROR_NOT_CONNECTED;
	err = sdpu_task_alloc(&c->ctx, SDPU_TASK_SEND, call, &t);
	if (err != DOCA_SUCCESS)
		return err;
	((struct doca_comch_task_send *)t)->conn = conn;
	((struct doca_comch_task_send *)t)->msg = msg;
	((struct doca_comch_task_send *)t)->len = len;
	*task = (struct doca_comch_task_send *)t;
	return DOCA_SUCCESS;
}

doca_error_t sdpu_comch_event_msg_recv_register(struct sdpu_comch *c, doca_comch_event_msg_recv_cb_t cb, const char *call)
{
	doca_error_t err;

	if (cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_idle(&c->ctx, call);
	if (err == DOCA_SUCCESS)
		c->recv_cb = cb;
	return err;
}

doca_error_t sdpu_comch_event_consumer_register(struct sdpu_comch *c, doca_comch_event_consumer_cb_t new_cb,
						doca_comch_event_consumer_cb_t expired_cb, const char *call)
{
	doca_error_t err;

	if (new_cb == NULL || expired_cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_idle(&c->ctx, call);
	if (err == DOCA_SUCCESS) {
		c->consumer_new = new_cb;
		c->consumer_expired = expired_cb;
	}
	return err;
}
