/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The comch handshake's frame reader (capi/comch/wire.c) on what a hostile peer sends: the input is a
 * byte stream, given to the reader in chunks the way recv() would (the first byte picks the chunk size),
 * each whole frame decoded and then put through the checks of its fields that need no live peer (PCI
 * texts, the server key of a HELLO's name, a REJECT's code), as server_hs.c and client_hs.c do.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <doca_error.h>

#include "comch/wire.h"
#include "core/shm.h"
#include "fabric/pci.h"
#include "fabric/segment.h"
#include "seeds.h"

static void write_seeds(void)
{
	static const uint8_t name[] = "fuzz-server";
	uint8_t frame[1 + 2 * (4 + SDPU_MAX_FRAME)];
	struct sdpu_segment *segment;
	size_t n;

	frame[0] = 0; /* one chunk */
	n = sdpu_encode_hello(frame + 1, "0000:03:00.0", "0000:03:00.0", 4080, 128, name, sizeof(name) - 1);
	seed("hello", frame, 1 + n);
	n += sdpu_encode_ready(frame + 1 + n);
	frame[0] = 7; /* chunks of 8 bytes */
	seed("hello-ready", frame, 1 + n);
	if (sdpu_segment_create("conn", 4096, &segment) != DOCA_SUCCESS)
		exit(2);
	frame[0] = 0;
	seed("welcome", frame, 1 + sdpu_encode_welcome(frame + 1, &segment->descriptor, 4080, 128, 128));
	sdpu_segment_close(segment);
	seed("reject", frame, 1 + sdpu_encode_reject(frame + 1, DOCA_ERROR_NOT_PERMITTED, "a client claiming function \"x\" knocked"));
	frame[0] = 0;
	n = sdpu_encode_ready(frame + 1);
	memcpy(frame + 1 + 4 + 4, "\x02\x00", 2); /* version 2: REJECT(UNSUPPORTED_VERSION) */
	seed("other-version", frame, 1 + n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	seed_mode();
	return 0;
}

/* What a server or a client reads of a frame's fields before it needs the peer's process or socket. */
static void check(const struct sdpu_frame *f)
{
	static const struct sdpu_pci arm = {0, 3, 0, 0};
	volatile int sink = 0;

	switch (f->type) {
	case SDPU_HELLO: {
		char key[23];

		sink += sdpu_pci_matches(&arm, f->client_pci) + sdpu_pci_matches(&arm, f->arm_pci);
		sink += sdpu_safe_integer(f->pid) && f->pid <= UINT32_MAX && sdpu_safe_integer(f->start);
		sdpu_server_key(f->arm_pci, f->client_pci, f->name, f->name_len, key);
		sink += (int)strlen(key);
		break;
	}
	case SDPU_WELCOME:
		sink += sdpu_safe_integer(f->pid) && f->pid <= UINT32_MAX && sdpu_safe_integer(f->start);
		sink += (double)f->segment.pid == f->pid && f->segment.start == f->start;
		break;
	case SDPU_REJECT:
		sink += f->code >= 1 && f->code <= DOCA_ERROR_SKIPPED;
		sink += (int)strlen(f->reason);
		break;
	default:
		break;
	}
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sdpu_frame_reader reader;
	size_t chunk, at = 1;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] + 1;
	if (data[0] == 0)
		chunk = size;
	memset(&reader, 0, sizeof(reader));
	while (at < size) {
		size_t room, n;
		uint8_t *space = sdpu_frames_space(&reader, &room);
		struct sdpu_frame f;
		char why[512];
		bool other_version;
		int r;

		if (room == 0)
			return 0; /* a full buffer and no frame: the reader said -1 or 0 before this */
		n = size - at < chunk ? size - at : chunk;
		n = n < room ? n : room;
		memcpy(space, data + at, n);
		sdpu_frames_put(&reader, n);
		at += n;
		while ((r = sdpu_frames_next(&reader, &f, why, sizeof(why), &other_version)) == 1)
			check(&f);
		if (r < 0)
			return strnlen(why, sizeof(why)) < sizeof(why) ? 0 : 1; /* the peer is dropped; the reason must be a string */
	}
	(void)sdpu_frames_partial(&reader);
	return 0;
}
