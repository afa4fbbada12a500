/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch server (struct doca_comch_server): on the DPU's Arm side, bound to the representor of one host
 * function, it accepts the clients of that function that ask for its exact name. Its start claims the
 * name and listens (docs/protocol.md, "Rendezvous"); the helper thread runs each handshake
 * (server_hs.c) and posts established connections, which this side raises as connection events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/io.h"
#include "fabric/faults.h"
#include "fabric/pci.h"
#include "fabric/names.h"
#include "fabric/rendezvous.h"

#define SOURCE "comch_server"

static struct doca_comch_server *server_of(struct doca_ctx *ctx)
{
	return (struct doca_comch_server *)ctx;
}

static void run_connected(struct sdpu_work *work)
{
	struct doca_comch_connection *conn = (struct doca_comch_connection *)((char *)work - offsetof(struct doca_comch_connection, connected));
	struct doca_comch_server *s = (struct doca_comch_server *)conn->owner;

	if (!(SDPU_FAULTS_ON(SDPU_FAULTS_EVENT) && sdpu_fault_lose_event(&s->base.ctx, "connection_established")))
		s->connect_cb(&s->status_event, conn, 1);
}

static void run_disconnected(struct sdpu_work *work)
{
	struct doca_comch_connection *conn = (struct doca_comch_connection *)((char *)work - offsetof(struct doca_comch_connection, disconnected));
	struct doca_comch_server *s = (struct doca_comch_server *)conn->owner;

	if (!(SDPU_FAULTS_ON(SDPU_FAULTS_EVENT) && sdpu_fault_lose_event(&s->base.ctx, "connection_disconnected")))
		s->disconnect_cb(&s->status_event, conn, 1);
	sdpu_conn_free(conn);
}

static void take_accepted(struct doca_comch_server *s, struct doca_comch_connection *list)
{
	while (list != NULL) {
		struct doca_comch_connection *conn = list;

		list = conn->next;
		conn->connected.run = run_connected;
		conn->disconnected.run = run_disconnected;
		sdpu_comch_adopt(&s->base, conn);
		sdpu_ctx_queue(&s->base.ctx, &conn->connected);
	}
}

static void server_mail(struct sdpu_comch *c)
{
	struct doca_comch_server *s = (struct doca_comch_server *)c;
	struct doca_comch_connection *list;

	sdpu_io_lock();
	list = s->accepted;
	s->accepted = NULL;
	sdpu_io_unlock();
	take_accepted(s, list);
}

static void server_closed(struct sdpu_comch *c, struct doca_comch_connection *conn, doca_error_t reason)
{
	struct doca_comch_server *s = (struct doca_comch_server *)c;

	sdpu_comch_forget(c, conn);
	for (struct doca_comch_task_send *t = sdpu_conn_take_pending(conn); t != NULL; t = t->pending_next)
		sdpu_task_complete(&t->base, reason);
	sdpu_io_lock();
	s->clients--;
	sdpu_io_unlock();
	sdpu_ctx_queue(&c->ctx, &conn->disconnected);
}

static doca_error_t server_start(struct doca_ctx *ctx, bool *running)
{
	struct doca_comch_server *s = server_of(ctx);
	char arm[13], client[13], key[23];
	doca_error_t err = sdpu_comch_require(&s->base, "doca_ctx_start");

	if (err != DOCA_SUCCESS)
		return err;
	if (s->connect_cb == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
			     "doca_ctx_start: set the connection callbacks (doca_comch_server_event_connection_status_changed_register) before starting");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!sdpu_start_position(&s->position))
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_io_start();
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_pci_format(&s->base.dev->info->pci, arm);
	sdpu_pci_format(&s->rep->info->pci, client);
	sdpu_server_key(arm, client, s->base.name, s->base.name_len, key);
	err = sdpu_claim_name(s->base.dev->fabric, SDPU_SERVER_KIND, key, &s->lock_fd);
	if (err == DOCA_ERROR_ALREADY_EXIST)
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_ctx_start: a comch server named \"%s\" already runs on %s for %s",
			     (const char *)s->base.name, arm, client);
	if (err != DOCA_SUCCESS)
		return err;
	err = sdpu_listen_service(s->base.dev->fabric, SDPU_SERVER_KIND, key, &s->listen_fd, s->path, sizeof(s->path));
	if (err == DOCA_SUCCESS)
		err = sdpu_comch_start(&s->base);
	if (err != DOCA_SUCCESS) {
		if (s->listen_fd >= 0) {
			close(s->listen_fd);
			unlink(s->path);
		}
		close(s->lock_fd);
		s->lock_fd = s->listen_fd = -1;
		return err;
	}
	sdpu_io_lock();
	s->running = true;
	s->clients = 0;
	s->listen_watch = sdpu_io_watch(s->listen_fd, EPOLLIN, sdpu_server_accept, s);
	sdpu_io_unlock();
	sdpu_log_sdk(DOCA_LOG_LEVEL_INFO, SOURCE, "server \"%s\" listening for %s", (const char *)s->base.name, client);
	*running = true;
	return DOCA_SUCCESS;
}

static void server_stop(struct doca_ctx *ctx)
{
	struct doca_comch_server *s = server_of(ctx);
	struct doca_comch_connection *accepted;

	sdpu_io_lock();
	s->running = false;
	sdpu_io_unwatch(s->listen_watch);
	s->listen_watch = 0;
	sdpu_server_drop_handshakes(s);
	accepted = s->accepted;
	s->accepted = NULL;
	sdpu_io_unlock();
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->path);
	}
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->listen_fd = s->lock_fd = -1;
	/* Connections whose READY arrived are established for the client: they are raised, then left. */
	take_accepted(s, accepted);
	for (struct doca_comch_connection *conn = s->base.conns; conn != NULL; conn = conn->next)
		sdpu_conn_leave(conn, DOCA_ERROR_SHUTDOWN);
}

static bool server_stop_complete(struct doca_ctx *ctx)
{
	return server_of(ctx)->base.nconns == 0;
}

static void server_idle(struct doca_ctx *ctx)
{
	sdpu_comch_idle(&server_of(ctx)->base);
}

static const struct sdpu_ctx_ops SERVER_OPS = {
	.name = "doca_comch_server", .start = server_start, .stop = server_stop, .stop_complete = server_stop_complete, .idle = server_idle};

doca_error_t doca_comch_server_create(struct doca_dev *dev, struct doca_dev_rep *repr, const char *name,
				      struct doca_comch_server **comch_server)
{
	struct doca_comch_server *s;
	doca_error_t err;

	if (dev == NULL || repr == NULL || comch_server == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dev->info->dpu_side) {
		char pci[13];

		sdpu_pci_format(&dev->info->pci, pci);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
			     "doca_comch_server_create: %s is a host function; a comch server runs only on the DPU's Arm side", pci);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (repr->dev != dev) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_comch_server_create: the representor belongs to another device");
		return DOCA_ERROR_INVALID_VALUE;
	}
	err = sdpu_comch_check_name(dev->info, name, "doca_comch_server_create");
	if (err != DOCA_SUCCESS)
		return err;
	s = calloc(1, sizeof(*s));
	if (s == NULL || (s->base.name = (uint8_t *)strdup(name)) == NULL) {
		free(s);
		return DOCA_ERROR_NO_MEMORY;
	}
	sdpu_ctx_init(&s->base.ctx, &SERVER_OPS);
	sdpu_comch_init(&s->base, true, dev, (const uint8_t *)name, strlen(name));
	s->base.closed = server_closed;
	s->base.mail_handler = server_mail;
	s->rep = repr;
	s->status_event.owner = &s->base;
	s->lock_fd = s->listen_fd = -1;
	{
		char pci[13], what[200];

		sdpu_pci_format(&repr->info->pci, pci);
		snprintf(what, sizeof(what), "%.160s for %s", name, pci);
		sdpu_stat_open(&s->base.ctx.stat, SDPU_STAT_SERVER, what, NULL, 0);
	}
	sdpu_dev_use(dev, 1);
	sdpu_rep_use(repr, 1);
	*comch_server = s;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_server_destroy(struct doca_comch_server *comch_server)
{
	doca_error_t err;

	if (comch_server == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_destroy(&comch_server->base.ctx);
	if (err != DOCA_SUCCESS)
		return err;
	sdpu_dev_use(comch_server->base.dev, -1);
	sdpu_rep_use(comch_server->rep, -1);
	sdpu_comch_free(&comch_server->base);
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_server_disconnect(struct doca_comch_server *comch_server, struct doca_comch_connection *connection)
{
	doca_error_t err;

	if (comch_server == NULL || connection == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_running(&comch_server->base.ctx, "doca_comch_server_disconnect");
	if (err != DOCA_SUCCESS)
		return err;
	if (connection->owner != &comch_server->base) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_comch_server_disconnect: the connection is not one of this server's");
		return DOCA_ERROR_NOT_CONNECTED;
	}
	err = sdpu_conn_disconnect(connection);
	if (err == DOCA_ERROR_AGAIN)
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, SOURCE, "doca_comch_server_disconnect: the client's queue is full; progress and call again");
	return err;
}

doca_error_t doca_comch_server_set_max_msg_size(struct doca_comch_server *comch_server, uint32_t size)
{
	return comch_server == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_set_max_msg_size(&comch_server->base, size, "doca_comch_server_set_max_msg_size");
}

doca_error_t doca_comch_server_get_max_msg_size(const struct doca_comch_server *comch_server, uint32_t *size)
{
	if (comch_server == NULL || size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*size = comch_server->base.max_msg_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_server_set_recv_queue_size(struct doca_comch_server *comch_server, uint32_t size)
{
	return comch_server == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_set_recv_queue_size(&comch_server->base, size, "doca_comch_server_set_recv_queue_size");
}

doca_error_t doca_comch_server_get_recv_queue_size(const struct doca_comch_server *comch_server, uint32_t *size)
{
	if (comch_server == NULL || size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*size = comch_server->base.recv_queue_size;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_server_get_device(const struct doca_comch_server *comch_server, struct doca_dev **dev)
{
	if (comch_server == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*dev = comch_server->base.dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_comch_server_get_device_rep(const struct doca_comch_server *comch_server, struct doca_dev_rep **rep)
{
	if (comch_server == NULL || rep == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*rep = comch_server->rep;
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_comch_server_as_ctx(struct doca_comch_server *comch_server)
{
	return comch_server == NULL ? NULL : &comch_server->base.ctx;
}

doca_error_t doca_comch_server_task_send_set_conf(struct doca_comch_server *comch_server,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb, uint32_t num_send_tasks)
{
	return comch_server == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_task_send_set_conf(&comch_server->base, task_completion_cb, task_error_cb, num_send_tasks,
								    "doca_comch_server_task_send_set_conf");
}

doca_error_t doca_comch_server_task_send_alloc_init(struct doca_comch_server *comch_server, struct doca_comch_connection *peer,
						    const void *msg, uint32_t len, struct doca_comch_task_send **task)
{
	return comch_server == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_task_send_alloc_init(&comch_server->base, peer, msg, len, task,
								      "doca_comch_server_task_send_alloc_init");
}

doca_error_t doca_comch_server_event_msg_recv_register(struct doca_comch_server *comch_server,
						       doca_comch_event_msg_recv_cb_t recv_event_cb)
{
	return comch_server == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_event_msg_recv_register(&comch_server->base, recv_event_cb,
									 "doca_comch_server_event_msg_recv_register");
}

doca_error_t doca_comch_server_event_connection_status_changed_register(
	struct doca_comch_server *comch_server, doca_comch_event_connection_status_changed_cb_t connect_event_cb,
	doca_comch_event_connection_status_changed_cb_t disconnect_event_cb)
{
	doca_error_t err;

	if (comch_server == NULL || connect_event_cb == NULL || disconnect_event_cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_ctx_require_idle(&comch_server->base.ctx, "doca_comch_server_event_connection_status_changed_register");
	if (err == DOCA_SUCCESS) {
		comch_server->connect_cb = connect_event_cb;
		comch_server->disconnect_cb = disconnect_event_cb;
	}
	return err;
}

doca_error_t doca_comch_server_event_consumer_register(struct doca_comch_server *comch_server,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb)
{
	return comch_server == NULL ? DOCA_ERROR_INVALID_VALUE
				    : sdpu_comch_event_consumer_register(&comch_server->base, new_consumer_event_cb,
									 expired_consumer_event_cb, "doca_comch_server_event_consumer_register");
}
