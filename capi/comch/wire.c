/* SPDX-License-Identifier: Apache-2.0 */
/*
 * comch/wire.h. A frame's length counts its 8-byte body header (magic, version, type) and its fields:
 * HELLO's is 8 + 58 + the name's length. Every length is checked before a byte is read.
 */
#include "comch/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "core/shm.h"
#include "fabric/digest.h"
#include "fabric/liveness.h"

#define MAGIC 0x5348434d /* 'MCHS' */

uint8_t *sdpu_frames_space(struct sdpu_frame_reader *r, size_t *room)
{
	if (r->taken > 0) {
		memmove(r->buf, r->buf + r->taken, r->len - r->taken);
		r->len -= r->taken;
		r->taken = 0;
	}
	*room = sizeof(r->buf) - r->len;
	return r->buf + r->len;
}

void sdpu_frames_put(struct sdpu_frame_reader *r, size_t n)
{
	r->len += n;
}

bool sdpu_frames_partial(const struct sdpu_frame_reader *r)
{
	return r->len > r->taken;
}

/* A text field of `n` bytes, up to its first NUL. */
static void text(char *out, const uint8_t *p, size_t n)
{
	size_t len = 0;

	while (len < n && p[len] != 0)
		len++;
	memcpy(out, p, len);
	out[len] = '\0';
}

static int bad(char *why, size_t size, const char *format, size_t a, size_t b)
{
	snprintf(why, size, format, a, b);
	return -1;
}

static int decode(const uint8_t *body, size_t n, struct sdpu_frame *f, char *why, size_t size, bool *other_version)
{
	const uint8_t *x = body + 8;
	size_t fields = n - 8;

	if (n < 8)
		return bad(why, size, "a frame is truncated (%zu of %zu bytes)", n, 8);
	if (sdpu_get32(body) != MAGIC)
		return bad(why, size, "not a comch handshake frame (bad magic)", 0, 0);
	if (sdpu_get16(body + 4) != SDPU_WIRE_VERSION) {
		*other_version = true;
		return bad(why, size, "handshake version %zu is not %zu", sdpu_get16(body + 4), SDPU_WIRE_VERSION);
	}
	memset(f, 0, sizeof(*f));
	f->type = sdpu_get16(body + 6);
	switch (f->type) {
	case SDPU_HELLO:
		if (fields < 58)
			return bad(why, size, "HELLO frame is truncated (%zu of %zu bytes)", fields, 58);
		f->name_len = sdpu_get16(x + 56);
		if (fields != 58 + (size_t)f->name_len)
			return bad(why, size, "HELLO frame has %zu bytes for a %zu-byte name", fields, f->name_len);
		f->pid = sdpu_getf64(x);
		f->start = sdpu_getf64(x + 8);
		text(f->client_pci, x + 16, 16);
		text(f->arm_pci, x + 32, 16);
		f->max_msg_size = sdpu_get32(x + 48);
		f->recv_queue_size = sdpu_get32(x + 52);
		f->name = x + 58;
		return 1;
	case SDPU_WELCOME:
		if (fields < 72)
			return bad(why, size, "WELCOME frame is truncated (%zu of %zu bytes)", fields, 72);
		if (sdpu_descriptor_decode(x + 16, &f->segment) != DOCA_SUCCESS)
			return bad(why, size, "WELCOME frame: its segment descriptor holds impossible values", 0, 0);
		f->pid = sdpu_getf64(x);
		f->start = sdpu_getf64(x + 8);
		f->msg_size = sdpu_get32(x + 56);
		f->c2s_slots = sdpu_get32(x + 60);
		f->s2c_slots = sdpu_get32(x + 64);
		return 1;
	case SDPU_READY:
		return 1;
	case SDPU_REJECT: {
		size_t r;

		if (fields < 4)
			return bad(why, size, "REJECT frame is truncated (%zu of %zu bytes)", fields, 4);
		r = sdpu_get16(x + 2);
		if (fields < 4 + r)
			return bad(why, size, "REJECT frame is truncated (%zu of %zu bytes)", fields, 4 + r);
		f->code = sdpu_get16(x);
		memcpy(f->reason, x + 4, r > 1024 ? 1024 : r);
		f->reason[r > 1024 ? 1024 : r] = '\0';
		return 1;
	}
	default:
		return bad(why, size, "unknown handshake frame type %zu", f->type, 0);
	}
}

int sdpu_frames_next(struct sdpu_frame_reader *r, struct sdpu_frame *f, char *why, size_t size, bool *other_version)
{
	const uint8_t *at;
	uint32_t length;

	*other_version = false;
	if (r->taken > 0) {
		size_t room;

		sdpu_frames_space(r, &room);
	}
	if (r->len < 4)
		return 0;
	at = r->buf;
	length = sdpu_get32(at);
	if (length > SDPU_MAX_FRAME)
		return bad(why, size, "a %zu-byte handshake frame exceeds the %zu-byte limit", length, SDPU_MAX_FRAME);
	if (r->len < 4 + (size_t)length)
		return 0;
	r->taken = 4 + (size_t)length;
	return decode(at + 4, length, f, why, size, other_version);
}

static size_t frame(uint8_t *out, uint16_t type, size_t fields)
{
	uint32_t length = (uint32_t)(8 + fields), magic = MAGIC;
	uint16_t version = SDPU_WIRE_VERSION;

	memset(out, 0, 12 + fields);
	memcpy(out, &length, 4);
	memcpy(out + 4, &magic, 4);
	memcpy(out + 8, &version, 2);
	memcpy(out + 10, &type, 2);
	return 12 + fields;
}

size_t sdpu_encode_hello(uint8_t *out, const char *client_pci, const char *arm_pci, uint32_t max_msg_size,
			 uint32_t recv_queue_size, const uint8_t *name, uint16_t name_len)
{
	struct sdpu_identity self = sdpu_self();
	size_t n = frame(out, SDPU_HELLO, 58 + (size_t)name_len);
	uint8_t *x = out + 12;

	sdpu_putf64(x, self.pid);
	sdpu_putf64(x + 8, (double)self.start);
	memcpy(x + 16, client_pci, strnlen(client_pci, 16));
	memcpy(x + 32, arm_pci, strnlen(arm_pci, 16));
	sdpu_put32(x + 48, max_msg_size);
	sdpu_put32(x + 52, recv_queue_size);
	memcpy(x + 56, &name_len, 2);
	memcpy(x + 58, name, name_len);
	return n;
}

size_t sdpu_encode_welcome(uint8_t *out, const struct sdpu_descriptor *segment, uint32_t msg_size, uint32_t c2s, uint32_t s2c)
{
	struct sdpu_identity self = sdpu_self();
	size_t n = frame(out, SDPU_WELCOME, 72);
	uint8_t *x = out + 12;

	sdpu_putf64(x, self.pid);
	sdpu_putf64(x + 8, (double)self.start);
	sdpu_descriptor_encode(segment, x + 16);
	sdpu_put32(x + 56, msg_size);
	sdpu_put32(x + 60, c2s);
	sdpu_put32(x + 64, s2c);
	sdpu_put32(x + 68, 0); /* connection id: 0 today */
	return n;
}

size_t sdpu_encode_ready(uint8_t *out)
{
	return frame(out, SDPU_READY, 0);
}

size_t sdpu_encode_reject(uint8_t *out, uint16_t code, const char *reason)
{
	uint16_t r = (uint16_t)strnlen(reason, 1024);
	size_t n = frame(out, SDPU_REJECT, 4 + (size_t)r);

	memcpy(out + 12, &code, 2);
	memcpy(out + 14, &r, 2);
	memcpy(out + 16, reason, r);
	return n;
}

void sdpu_server_key(const char *arm_pci, const char *client_pci, const uint8_t *name, size_t name_len, char key[23])
{
	size_t prefix = strlen(arm_pci) + strlen(client_pci) + 2;
	char *text = malloc(prefix + 2 * name_len + 1);
	uint8_t digest[32];

	if (text == NULL) {
		key[0] = '\0';
		return;
	}
	snprintf(text, prefix + 1, "%s|%s|", arm_pci, client_pci);
	for (size_t i = 0; i < name_len; i++)
		snprintf(text + prefix + 2 * i, 3, "%02x", name[i]);
	sdpu_sha256(text, prefix + 2 * name_len, digest);
	free(text);
	sdpu_base64url(digest, 22, key);
}
