/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch handshake on a connection's Unix socket (docs/protocol.md, "Comch handshake"): frames of a
 * u32 length (the bytes after it, at most 8192) and a body of magic, version, type and fields. A reader
 * takes bytes as they come and hands out whole frames, refusing the first bad one with a reason.
 */
#ifndef SOFTDPU_CAPI_WIRE_H_
#define SOFTDPU_CAPI_WIRE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/segment.h"

#define SDPU_WIRE_VERSION 4
#define SDPU_MAX_FRAME 8192

enum sdpu_frame_type { SDPU_HELLO = 1, SDPU_WELCOME = 2, SDPU_READY = 3, SDPU_REJECT = 4 };

struct sdpu_frame {
	uint16_t type;
	/* HELLO and WELCOME: the sender's identity, as sent (checked by the receiver). */
	double pid;
	double start;
	/* HELLO. The texts are read up to their first NUL; the name points into the reader's buffer. */
	char client_pci[17];
	char arm_pci[17];
	uint32_t max_msg_size;
	uint32_t recv_queue_size;
	const uint8_t *name;
	uint16_t name_len;
	/* WELCOME. */
	struct sdpu_descriptor segment;
	uint32_t msg_size;
	uint32_t c2s_slots;
	uint32_t s2c_slots;
	/* REJECT. */
	uint16_t code;
	char reason[1025];
};

struct sdpu_frame_reader {
	uint8_t buf[4 + SDPU_MAX_FRAME];
	size_t len;
	/* The last frame handed out, consumed by the next call. */
	size_t taken;
};

/* Room for `*room` more bytes at the returned address; call sdpu_frames_put(n) after writing n there. */
uint8_t *sdpu_frames_space(struct sdpu_frame_reader *r, size_t *room);
void sdpu_frames_put(struct sdpu_frame_reader *r, size_t n);

/*
 * 1 and the next whole frame, 0 when more bytes are needed, -1 for a bad frame: `why` says what is wrong
 * and *other_version is true for a well-formed frame of another version.
 */
int sdpu_frames_next(struct sdpu_frame_reader *r, struct sdpu_frame *f, char *why, size_t size, bool *other_version);

/* True when bytes of an unfinished frame are waiting (the stream ended in the middle of one). */
bool sdpu_frames_partial(const struct sdpu_frame_reader *r);

/* Encoders: the frame's bytes in `out` (large enough: 4 + SDPU_MAX_FRAME), their count returned. */
size_t sdpu_encode_hello(uint8_t *out, const char *client_pci, const char *arm_pci, uint32_t max_msg_size,
			 uint32_t recv_queue_size, const uint8_t *name, uint16_t name_len);
size_t sdpu_encode_welcome(uint8_t *out, const struct sdpu_descriptor *segment, uint32_t msg_size, uint32_t c2s, uint32_t s2c);
size_t sdpu_encode_ready(uint8_t *out);
size_t sdpu_encode_reject(uint8_t *out, uint16_t code, const char *reason);

/* The rendezvous key of a server: base64url(SHA-256("<arm pci>|<client pci>|<name in lower-case hex>"))[0, 22). */
void sdpu_server_key(const char *arm_pci, const char *client_pci, const uint8_t *name, size_t name_len, char key[23]);

#endif /* SOFTDPU_CAPI_WIRE_H_ */
