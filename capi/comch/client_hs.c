/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A comch client's side of the handshake, on the helper thread (io lock held): find the server
 * (docs/protocol.md, "Rendezvous"), connect, HELLO (this side's own PCI address and its Arm device's in
 * the long form, its max_msg_size and recv_queue_size, as configured or defaulted), then the first frame
 * back, checked in protocol.md's order ("What the client checks"); then the segment is mapped and checked,
 * this side's bell reference published, READY sent and the connection posted. Only transport failures are
 * retried, every 100 ms; a refusal or a bad answer fails the start, since a retry would get the same.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/io.h"
#include "core/shm.h"
#include "fabric/rendezvous.h"

#define SOURCE "comch_client"

static void close_attempt(struct doca_comch_client *c)
{
	sdpu_io_unwatch(c->watch);
	sdpu_io_cancel(c->timer);
	c->watch = c->timer = 0;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void sdpu_client_cancel(struct doca_comch_client *c)
{
	c->attempting = false;
	close_attempt(c);
}

static void retry(struct doca_comch_client *c, const char *why)
{
	sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, SOURCE, "client for \"%s\": %s; retrying in %d ms", (const char *)c->base.name, why, SDPU_RETRY_MS);
	close_attempt(c);
	if (c->attempting)
		c->timer = sdpu_io_timer(SDPU_RETRY_MS, sdpu_client_attempt, c);
}

/* The start fails with `err`: posted to the client's context. */
static void fail(struct doca_comch_client *c, doca_error_t err)
{
	sdpu_client_cancel(c);
	c->failure = err;
	sdpu_comch_post(&c->base);
}

static void on_timeout(void *arg)
{
	struct doca_comch_client *c = arg;

	c->timer = 0;
	retry(c, "the server did not answer the handshake in time");
}

/* The WELCOME's checks; DOCA_SUCCESS and the connection, or the error the start fails with. */
static doca_error_t established(struct doca_comch_client *c, const struct sdpu_frame *f, struct doca_comch_connection **out)
{
	struct ucred cred = {0, 0, 0};
	socklen_t len = sizeof(cred);
	struct sdpu_segment *segment;
	struct sdpu_conn_layout layout;
	struct sdpu_identity server;
	doca_error_t err;
	const char *name = (const char *)c->base.name;

	if (!sdpu_safe_integer(f->pid) || f->pid > UINT32_MAX || !sdpu_safe_integer(f->start) ||
	    !sdpu_alive((uint32_t)f->pid, (uint64_t)f->start) || f->msg_size > c->base.max_msg_size ||
	    f->s2c_slots != c->base.recv_queue_size) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the server \"%s\" answered with a connection this client did not ask for", name);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || (double)cred.pid != f->pid || cred.uid != getuid()) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
			     "the server \"%s\"'s WELCOME does not say who it is: its socket belongs to pid %d, uid %u, not to the pid %.0f of this user it claims",
			     name, (int)cred.pid, (unsigned)cred.uid, f->pid);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if ((double)f->segment.pid != f->pid || f->segment.start != f->start) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the server (pid %.0f) handed over a segment of another process (pid %u)", f->pid,
			     f->segment.pid);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	err = sdpu_segment_open(&f->segment, "conn", SOURCE, &segment);
	if (err != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the connection segment of the server \"%s\" does not open (%s)", name,
			     doca_error_get_name(err));
		return err;
	}
	if (!sdpu_conn_layout_read(segment, &layout) || layout.msg_size != f->msg_size || layout.c2s_slots != f->c2s_slots ||
	    layout.s2c_slots != f->s2c_slots) {
		sdpu_segment_close(segment);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the connection segment does not have the announced layout");
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	server.pid = (uint32_t)f->pid;
	server.start = (uint64_t)f->start;
	*out = sdpu_conn_create(&c->base, false, c->fd, segment, &layout, server);
	c->fd = -1; /* the connection owns it now, or closed it */
	return *out != NULL ? DOCA_SUCCESS : DOCA_ERROR_NO_MEMORY;
}

/* The first complete frame decides. */
static void answer(struct doca_comch_client *c, const struct sdpu_frame *f)
{
	struct doca_comch_connection *conn = NULL;
	uint8_t ready[16];
	doca_error_t err;

	sdpu_io_unwatch(c->watch);
	sdpu_io_cancel(c->timer);
	c->watch = c->timer = 0;
	if (f->type == SDPU_REJECT) {
		err = f->code >= 1 && f->code <= DOCA_ERROR_SKIPPED ? (doca_error_t)f->code : DOCA_ERROR_CONNECTION_ABORTED;
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the server refused the connection (%s): %s", doca_error_get_name(err), f->reason);
		fail(c, err);
		return;
	}
	if (f->type != SDPU_WELCOME) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the server answered with frame type %u", f->type);
		fail(c, DOCA_ERROR_CONNECTION_ABORTED);
		return;
	}
	err = established(c, f, &conn);
	if (err != DOCA_SUCCESS) {
		fail(c, err);
		return;
	}
	if (send(conn->fd, ready, sdpu_encode_ready(ready), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, SOURCE, "cannot send READY: %s", strerror(errno));
	sdpu_log_sdk(DOCA_LOG_LEVEL_INFO, SOURCE, "client for \"%s\" connected to server pid %u", (const char *)c->base.name, conn->peer.pid);
	c->attempting = false;
	c->established = conn;
	sdpu_comch_post(&c->base);
}

static void on_readable(void *arg, uint32_t events)
{
	struct doca_comch_client *c = arg;
	struct sdpu_frame f;
	char why[512];
	bool other_version;

	(void)events;
	for (;;) {
		size_t room;
		uint8_t *at = sdpu_frames_space(&c->reader, &room);
		ssize_t n = room > 0 ? recv(c->fd, at, room, MSG_DONTWAIT) : 0;
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			retry(c, "the connection closed during the handshake");
			return;
		}
		sdpu_frames_put(&c->reader, (size_t)n);
		r = sdpu_frames_next(&c->reader, &f, why, sizeof(why), &other_version);
		if (r == 0)
			continue;
		if (r < 0) {
			/* A bad frame, or one of another version, would be the same on every retry: the start fails. */
			if (other_version)
				sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
					     "the server \"%s\" speaks another comch handshake version: %s (softdpu on both sides must be of one protocol version, docs/protocol.md#versions)",
					     (const char *)c->base.name, why);
			else
				sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "bad handshake from the server \"%s\": %s", (const char *)c->base.name, why);
			fail(c, other_version ? DOCA_ERROR_NOT_SUPPORTED : DOCA_ERROR_CONNECTION_ABORTED);
			return;
		}
		answer(c, &f);
		return;
	}
}

void sdpu_client_attempt(void *arg)
{
	struct doca_comch_client *c = arg;
	struct sockaddr_un addr;
	uint8_t hello[4 + SDPU_MAX_FRAME];
	size_t n;
	char why[160];

	c->timer = 0;
	if (!c->attempting)
		return;
	if (c->key[0] == '\0') {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "no DPU in topology %s represents %s", c->base.dev->fabric->topology->source,
			     c->client_pci);
		fail(c, DOCA_ERROR_NOT_FOUND);
		return;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (!sdpu_find_service(c->base.dev->fabric, SDPU_SERVER_KIND, c->key, addr.sun_path, sizeof(addr.sun_path))) {
		snprintf(why, sizeof(why), "no such server on %s for %s yet", c->arm_pci, c->client_pci);
		retry(c, why);
		return;
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		snprintf(why, sizeof(why), "cannot connect to %s: %s", addr.sun_path, strerror(errno));
		retry(c, why);
		return;
	}
	n = sdpu_encode_hello(hello, c->client_pci, c->arm_pci, c->base.max_msg_size, c->base.recv_queue_size, c->base.name,
			      (uint16_t)c->base.name_len);
	if (send(c->fd, hello, n, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)n) {
		retry(c, "cannot send HELLO");
		return;
	}
	memset(&c->reader, 0, sizeof(c->reader));
	c->watch = sdpu_io_watch(c->fd, EPOLLIN | EPOLLRDHUP, on_readable, c);
	c->timer = sdpu_io_timer(SDPU_HANDSHAKE_TIMEOUT_MS, on_timeout, c);
	if (c->watch == 0 || c->timer == 0)
		retry(c, "cannot watch the handshake");
}
