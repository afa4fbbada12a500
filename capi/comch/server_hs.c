/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A comch server's side of the handshake, on the helper thread (io lock held): accept, HELLO and its
 * checks in protocol.md's order ("What the server checks"), the connection segment and WELCOME, then
 * READY, after which the connection is posted to the server's context. A malformed frame, a frame out of
 * order, an end of stream mid-handshake or the 5000 ms timeout drops the peer without an answer; a
 * well-formed frame of another version gets REJECT(UNSUPPORTED_VERSION); a refused HELLO gets REJECT with
 * its code. Every refusal is one WARNING line on the SDK log; other clients are served on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <doca_log.h>

#include "comch/comch.h"
#include "core/internal.h"
#include "core/io.h"
#include "core/shm.h"

#define SOURCE "comch_server"

struct sdpu_handshake {
	struct doca_comch_server *server;
	int fd;
	uint64_t watch, timer;
	bool welcomed;
	struct sdpu_segment *segment;
	struct sdpu_conn_layout layout;
	struct sdpu_identity client;
	struct sdpu_handshake *next;
	struct sdpu_frame_reader reader;
};

static void unlink_handshake(struct sdpu_handshake *hs)
{
	for (struct sdpu_handshake **at = &hs->server->handshakes; *at != NULL; at = &(*at)->next)
		if (*at == hs) {
			*at = hs->next;
			break;
		}
	sdpu_io_unwatch(hs->watch);
	sdpu_io_cancel(hs->timer);
	hs->server->clients--;
}

static void close_handshake(struct sdpu_handshake *hs)
{
	unlink_handshake(hs);
	close(hs->fd);
	sdpu_segment_close(hs->segment);
	free(hs);
}

static bool send_all(int fd, const uint8_t *buf, size_t n)
{
	return send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n;
}

static void drop(struct sdpu_handshake *hs, doca_error_t code, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* Drops the peer, answering with REJECT(code) unless code is DOCA_SUCCESS. */
static void drop(struct sdpu_handshake *hs, doca_error_t code, const char *format, ...)
{
	char why[1024];
	va_list args;

	va_start(args, format);
	vsnprintf(why, sizeof(why), format, args);
	va_end(args);
	sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "server \"%s\": %s; dropping that peer", (const char *)hs->server->base.name, why);
	hs->server->base.ctx.stat.c[2] += 1; /* refused, for observers: every dropped peer, as the TypeScript server counts */
	if (code != DOCA_SUCCESS) {
		uint8_t frame[4 + SDPU_MAX_FRAME];

		send_all(hs->fd, frame, sdpu_encode_reject(frame, (uint16_t)code, why));
	}
	close_handshake(hs);
}

/* Why a HELLO is refused (with the code), or DOCA_SUCCESS to accept it. */
static doca_error_t check(struct sdpu_handshake *hs, const struct sdpu_frame *f, char *why, size_t size)
{
	struct doca_comch_server *s = hs->server;
	const struct sdpu_caps *caps = &s->base.dev->info->caps;
	char rep[13], arm[13];
	struct ucred cred = {0, 0, 0};
	socklen_t len = sizeof(cred);

	sdpu_pci_format(&s->rep->info->pci, rep);
	sdpu_pci_format(&s->base.dev->info->pci, arm);
	if (f->name_len != s->base.name_len || memcmp(f->name, s->base.name, f->name_len) != 0) {
		snprintf(why, size, "a client asked for another server name (%u bytes)", f->name_len);
		return DOCA_ERROR_NOT_FOUND;
	}
	if (!sdpu_pci_matches(&s->rep->info->pci, f->client_pci)) {
		snprintf(why, size, "a client claiming function \"%s\" knocked; this server serves %s only", f->client_pci, rep);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!sdpu_pci_matches(&s->base.dev->info->pci, f->arm_pci)) {
		snprintf(why, size, "a client looked for Arm device \"%s\", not %s", f->arm_pci, arm);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!sdpu_safe_integer(f->pid) || f->pid > UINT32_MAX || !sdpu_safe_integer(f->start) ||
	    !sdpu_alive((uint32_t)f->pid, (uint64_t)f->start)) {
		snprintf(why, size, "a client named a process (pid %.0f) that does not run", f->pid);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (getsockopt(hs->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || (double)cred.pid != f->pid || cred.uid != getuid()) {
		snprintf(why, size, "a client's HELLO does not say who it is: its socket belongs to pid %d, uid %u, not to the pid %.0f of this user it claims",
			 (int)cred.pid, (unsigned)cred.uid, f->pid);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (f->max_msg_size < 1 || f->max_msg_size > caps->value[SDPU_CAP_COMCH_MAX_MSG_SIZE] || f->recv_queue_size < 1 ||
	    f->recv_queue_size > caps->value[SDPU_CAP_COMCH_MAX_RECV_QUEUE_SIZE]) {
		snprintf(why, size, "a client asked for max_msg_size %u and recv_queue_size %u (limits %llu and %llu)", f->max_msg_size,
			 f->recv_queue_size, (unsigned long long)caps->value[SDPU_CAP_COMCH_MAX_MSG_SIZE],
			 (unsigned long long)caps->value[SDPU_CAP_COMCH_MAX_RECV_QUEUE_SIZE]);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (s->clients > caps->value[SDPU_CAP_COMCH_MAX_CLIENTS]) {
		snprintf(why, size, "the server already has its maximum of %llu clients",
			 (unsigned long long)caps->value[SDPU_CAP_COMCH_MAX_CLIENTS]);
		return DOCA_ERROR_CONNECTION_ABORTED;
	}
	return DOCA_SUCCESS;
}

/* HELLO accepted: the connection segment (msg size the smaller of the two, c2s ours, s2c theirs), then WELCOME. */
static bool welcome(struct sdpu_handshake *hs, const struct sdpu_frame *f)
{
	struct doca_comch_server *s = hs->server;
	const struct sdpu_caps *caps = &s->base.dev->info->caps;
	uint32_t msg = f->max_msg_size < s->base.max_msg_size ? f->max_msg_size : s->base.max_msg_size;
	uint32_t entries = (uint32_t)(2 * (caps->value[SDPU_CAP_CONSUMER_MAX_CONSUMERS] + caps->value[SDPU_CAP_PRODUCER_MAX_PRODUCERS]));
	uint8_t frame[4 + SDPU_MAX_FRAME];

	sdpu_conn_layout(&hs->layout, msg, s->base.recv_queue_size, f->recv_queue_size, entries);
	if (sdpu_conn_segment_create(&hs->layout, s->position, &hs->segment) != DOCA_SUCCESS) {
		drop(hs, DOCA_SUCCESS, "cannot create a connection segment of %llu bytes", (unsigned long long)hs->layout.size);
		return false;
	}
	hs->client.pid = (uint32_t)f->pid;
	hs->client.start = (uint64_t)f->start;
	if (!send_all(hs->fd, frame, sdpu_encode_welcome(frame, &hs->segment->descriptor, msg, hs->layout.c2s_slots, hs->layout.s2c_slots))) {
		drop(hs, DOCA_SUCCESS, "cannot send WELCOME: %s", strerror(errno));
		return false;
	}
	hs->welcomed = true;
	return true;
}

/* READY: the connection is the server context's from now on. */
static void establish(struct sdpu_handshake *hs)
{
	struct doca_comch_server *s = hs->server;
	struct doca_comch_connection *conn, **tail;

	unlink_handshake(hs);
	conn = sdpu_conn_create(&s->base, true, hs->fd, hs->segment, &hs->layout, hs->client);
	if (conn != NULL) {
		s->clients++;
		for (tail = &s->accepted; *tail != NULL; tail = &(*tail)->next)
			;
		*tail = conn;
		sdpu_comch_post(&s->base);
		sdpu_log_sdk(DOCA_LOG_LEVEL_INFO, SOURCE, "server \"%s\": client pid %u connected", (const char *)s->base.name, hs->client.pid);
	} else {
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "server \"%s\": cannot set up the connection of client pid %u",
			     (const char *)s->base.name, hs->client.pid);
	}
	free(hs);
}

/* Every complete frame; false once the handshake is over (dropped or established). */
static bool frames(struct sdpu_handshake *hs)
{
	struct sdpu_frame f;
	char why[512];
	bool other_version;
	int r;

	while ((r = sdpu_frames_next(&hs->reader, &f, why, sizeof(why), &other_version)) != 0) {
		if (r < 0) {
			drop(hs, other_version ? DOCA_ERROR_UNSUPPORTED_VERSION : DOCA_SUCCESS, "bad handshake: %s", why);
			return false;
		}
		if (!hs->welcomed && f.type == SDPU_HELLO) {
			doca_error_t code = check(hs, &f, why, sizeof(why));

			if (code != DOCA_SUCCESS) {
				drop(hs, code, "%s", why);
				return false;
			}
			if (!welcome(hs, &f))
				return false;
		} else if (hs->welcomed && f.type == SDPU_READY) {
			establish(hs);
			return false;
		} else {
			drop(hs, DOCA_SUCCESS, "unexpected handshake frame type %u", f.type);
			return false;
		}
	}
	return true;
}

static void on_readable(void *arg, uint32_t events)
{
	struct sdpu_handshake *hs = arg;

	(void)events;
	for (;;) {
		size_t room;
		uint8_t *at = sdpu_frames_space(&hs->reader, &room);
		ssize_t n = room > 0 ? recv(hs->fd, at, room, MSG_DONTWAIT) : 0;

		if (n > 0) {
			sdpu_frames_put(&hs->reader, (size_t)n);
			if (!frames(hs))
				return;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n == 0)
			drop(hs, DOCA_SUCCESS, "%s", sdpu_frames_partial(&hs->reader) ? "the handshake ended in the middle of a frame (truncated)"
										      : "the peer left during the handshake");
		else
			drop(hs, DOCA_SUCCESS, "the handshake's socket failed: %s", strerror(errno));
		return;
	}
}

static void on_timeout(void *arg)
{
	struct sdpu_handshake *hs = arg;

	hs->timer = 0;
	drop(hs, DOCA_SUCCESS, "handshake not finished within %d ms", SDPU_HANDSHAKE_TIMEOUT_MS);
}

void sdpu_server_accept(void *arg, uint32_t events)
{
	struct doca_comch_server *s = arg;

	(void)events;
	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct sdpu_handshake *hs;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "server \"%s\": accept failed: %s", (const char *)s->base.name,
					     strerror(errno));
			return;
		}
		hs = s->running ? calloc(1, sizeof(*hs)) : NULL;
		if (hs == NULL) {
			close(fd);
			continue;
		}
		hs->server = s;
		hs->fd = fd;
		hs->next = s->handshakes;
		s->handshakes = hs;
		s->clients++;
		hs->watch = sdpu_io_watch(fd, EPOLLIN | EPOLLRDHUP, on_readable, hs);
		hs->timer = sdpu_io_timer(SDPU_HANDSHAKE_TIMEOUT_MS, on_timeout, hs);
		if (hs->watch == 0 || hs->timer == 0)
			close_handshake(hs);
	}
}

void sdpu_server_drop_handshakes(struct doca_comch_server *server)
{
	while (server->handshakes != NULL)
		close_handshake(server->handshakes);
}
