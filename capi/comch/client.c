/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch client (struct doca_comch_client): on a host function, it connects to the server of its exact
 * name bound to its own function's representor. Its start returns DOCA_ERROR_IN_PROGRESS: the helper
 * thread looks for the server and runs the handshake (client_hs.c), retrying every 100 ms while the server
 * is not there, and posts the connection; the next doca_pe_progress takes it (STARTING -> RUNNING).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/io.h"
#include "fabric/pci.h"

#define SOURCE "comch_client"

static struct doca_comch_client *client_of(struct doca_ctx *ctx)
{
	return (struct doca_comch_client *)ctx;
}

static void adopt(struct doca_comch_client *c, struct doca_comch_connection *conn)
{
	c->conn = conn;
	sdpu_comch_adopt(&c->base, conn);
}

static void client_mail(struct sdpu_comch *base)
{
	struct doca_comch_client *c = (struct doca_comch_client *)base;
	struct doca_comch_connection *conn;
	doca_error_t failure;

	sdpu_io_lock();
	conn = c->established;
	failure = c->failure;
	c->established = NULL;
	c->failure = DOCA_SUCCESS;
	sdpu_io_unlock();
	if (conn != NULL) {
		adopt(c, conn);
		sdpu_ctx_start_completed(&c->base.ctx);
	} else if (failure != DOCA_SUCCESS) {
		sdpu_ctx_fail(&c->base.ctx, failure);
	}
}

/* The connection ended: held sends fail with `reason`, and so does the client (RUNNING -> STOPPING -> IDLE). */
static void client_closed(struct sdpu_comch *base, struct doca_comch_connection *conn, doca_error_t reason)
{
	sdpu_comch_forget(base, conn);
	for (struct doca_comch_task_send *t = sdpu_conn_take_pending(conn); t != NULL; t = t->pending_next)
		sdpu_task_complete(&t->base, reason);
	sdpu_ctx_fail(&base->ctx, reason);
}

static doca_error_t client_start(struct doca_ctx *ctx, bool *running)
{
	struct doca_comch_client *c = client_of(ctx);
	const struct doca_devinfo_rep *rep = sdpu_topology_rep_of(c->base.dev->fabric->topology, &c->base.dev->info->pci);
	doca_error_t err = sdpu_comch_require(&c->base, "doca_ctx_start");

	if (err == DOCA_SUCCESS)
		err = sdpu_io_start();
	if (err == DOCA_SUCCESS)
		err = sdpu_comch_start(&c->base);
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_pci_format(&c->base.dev->info->pci, c->client_pci);
	c->arm_pci[0] = c->key[0] = '\0';
	if (rep != NULL) {
		sdpu_pci_format(&rep->arm, c->arm_pci);
		sdpu_server_key(c->arm_pci, c->client_pci, c->base.name, c->base.name_len, c->key);
	}
	sdpu_conn_free(c->conn);
	c->conn = NULL;
	sdpu_io_lock();
	c->attempting = true;
	c->established = NULL;
	c->failure = DOCA_SUCCESS;
	c->timer = sdpu_io_timer(0, sdpu_client_attempt, c);
	sdpu_io_unlock();
	*running = false;
	return DOCA_SUCCESS;
}

static void client_stop(struct doca_ctx *ctx)
{
	struct doca_comch_client *c = client_of(ctx);
	struct doca_comch_connection *established;

	sdpu_io_lock();
	sdpu_client_cancel(c);
	established = c->established;
	c->established = NULL;
	c->failure = DOCA_SUCCESS;
	sdpu_io_unlock();
	if (established != NULL)
		adopt(c, established); /* its READY was sent: it is left like any connection */
	for (struct doca_comch_connection *conn = c->base.conns; conn != NULL; conn = conn->next)
		sdpu_conn_leave(conn, DOCA_ERROR_SHUTDOWN);
}

static bool client_stop_complete(struct doca_ctx *ctx)
{
	return client_of(ctx)->base.nconns == 0;
}

static void client_idle(struct doca_ctx *ctx)
{
	sdpu_comch_idle(&client_of(ctx)->base);
}

static const struct sdpu_ctx_ops CLIENT_OPS = {
	.name = "doca_comch_client", .start = client_start, .stop = client_stop, .stop_complete = client_stop_complete, .idle = client_idle};

doca_error_t doca_comch_client_create(struct doca_dev *dev, const char *name, struct doca_comch_client **comch_client)
{
	struct doca_comch_client *c;
	doca_error_t err;

	if (dev == NULL || comch_client == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (dev->info->dpu_side) {
		char pci[13];

		sdpu_pci_format(&dev->info->pci, pci);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
			     "doca_comch_client_create: %s is on the DPU's Arm side; a comch client runs only on the host", pci);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	err = sdpu_comch_check_name(dev->info, name, "doca_comch_client_create");
	if (err != DOCA_SUCCESS)
		return err;
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->base.name = (uint8_t *)strdup(name)) == NULL) {
		free(c);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdpu_ctx_init(&c->base.ctx, &CLIENT_OPS);
	sdpu_comch_init(&c->base, false, dev, (const uint8_t *)name, strlen(name));
	c->base.closed = client_closed;
	c->base.mail_handler = client_mail;
	c->fd = -1;
	{
		char pci[13], what[200];

		sdpu_pci_format(&dev->info->pci, pci);
		snprintf(what, sizeof(what), "%.160s from %s", name, pci);
		sdpu_stat_open(&c->base.ctx.stat, SDPU_STAT_CLIENT, what, NULL, 0);
	}
	sdpu_dev_use(dev, 1);
	*comch_client = c;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_client_destroy(struct doca_comch_client *comch_client)
{
	doca_error_t err;

	if (comch_client == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_destroy(&comch_client->base.ctx);
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_conn_free(comch_client->conn);
	sdpu_dev_use(comch_client->base.dev, -1);
	sdpu_comch_free(&comch_client->base);
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_client_get_connection(const struct doca_comch_client *comch_client, struct doca_comch_connection **connection)
{
	doca_error_t err;

	if (comch_client == NULL || connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_running((struct doca_ctx *)&comch_client->base.ctx, "doca_comch_client_get_connection");
	if (err == DOCA_SUCCESS)
		*connection = comch_client->conn;
	return err;
}

doca_error_t doca_comch_client_set_max_msg_size(struct doca_comch_client *comch_client, uint32_t size)
{
	return comch_client == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_set_max_msg_size(&comch_client->base, size, "doca_comch_client_set_max_msg_size");
}

doca_error_t doca_comch_client_get_max_msg_size(const struct doca_comch_client *comch_client, uint32_t *size)
{
	if (comch_client == NULL || size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*size = comch_client->base.max_msg_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_client_set_recv_queue_size(struct doca_comch_client *comch_client, uint32_t size)
{
	return comch_client == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_set_recv_queue_size(&comch_client->base, size, "doca_comch_client_set_recv_queue_size");
}

doca_error_t doca_comch_client_get_recv_queue_size(const struct doca_comch_client *comch_client, uint32_t *size)
{
	if (comch_client == NULL || size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*size = comch_client->base.recv_queue_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_client_get_device(const struct doca_comch_client *comch_client, struct doca_dev **dev)
{
	if (comch_client == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*dev = comch_client->base.dev;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_comch_client_as_ctx(struct doca_comch_client *comch_client)
{
	return comch_client == NULL ? NULL : &comch_client->base.ctx;
}

doca_error_t doca_comch_client_task_send_set_conf(struct doca_comch_client *comch_client,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks)
{
	return comch_client == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_task_send_set_conf(&comch_client->base, task_completion_cb, task_error_cb, num_send_tasks,
								    "doca_comch_client_task_send_set_conf");
}

doca_error_t doca_comch_client_task_send_alloc_init(struct doca_comch_client *comch_client, struct doca_comch_connection *peer,
						    const void *msg, uint32_t len, struct doca_comch_task_send **task)
{
	return comch_client == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_task_send_alloc_init(&comch_client->base, peer, msg, len, task,
								      "doca_comch_client_task_send_alloc_init");
}

doca_error_t doca_comch_client_event_msg_recv_register(struct doca_comch_client *comch_client,
						       doca_comch_event_msg_recv_cb_t recv_event_cb)
{
	return comch_client == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_event_msg_recv_register(&comch_client->base, recv_event_cb,
									 "doca_comch_client_event_msg_recv_register");
}

doca_error_t doca_comch_client_event_consumer_register(struct doca_comch_client *comch_client,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb)
{
	return comch_client == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_event_consumer_register(&comch_client->base, new_consumer_event_cb,
									 expired_consumer_event_cb, "doca_comch_client_event_consumer_register");
}
