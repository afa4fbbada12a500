/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sync event PCI export blobs (docs/protocol.md, "Export blobs", "Sync event PCI export") as a hostile
 * holder may hand them over, and the control block and waiter table they lead to as a hostile exporter
 * may have written them: doca_sync_event_create_from_export (capi/syncevent/export.c, with
 * capi/fabric/blob.c's envelope and trailer and capi/fabric/exports.c's slot), then the import used
 * (capi/syncevent/layout.c: its control block checks, and an update ringing its waiters' bells, which
 * reads their bell references, capi/fabric/bell.c). It runs on a live fabric where this process
 * exported real events, so that a mutated blob can name real segments, slots and DPUs.
 *
 * A blob names segments and a slot of the process that exported it, so a seed written by another
 * process would name nothing live: the input is a mode byte and then a difference, XORed onto a blob this
 * process exported at its start (all zeros is that blob; bytes past its 224 are taken as they are):
 *   bit 0  reseal: the length and CRC-32 of what the blob now holds (a checksum is no wall to a fuzzer,
 *          so the checks behind the envelope are reached; without it the envelope itself is tested);
 *   bit 1  stamp this fabric's id;
 *   bit 2  start from a blob whose counter is in a mem segment of its own;
 *   bit 3  start from the blob of a second event whose control block is the rest of the input past the
 *          blob's 224 bytes, XORed onto that block as it was made (from its byte 64 on: the segment
 *          header is the segment's own check, fabric/segment.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_log.h>
#include <doca_sync_event.h>

#include "core/dev.h"
#include "common.h"
#include "fabric/blob.h"
#include "fabric/fabric.h"
#include "fabric/segment.h"
#include "syncevent/syncevent.h"

#define RESEAL 1
#define STAMP 2
#define MEMORY 4
#define CONTROL 8

static struct doca_dev *dev;
static struct doca_sync_event *event, *victim;
/* A counter segment of another kind than the control block's, for blobs that name it as the value's. */
static struct sdpu_segment *memory;
/* What the differences apply to: the blob as exported, one naming `memory` as the counter's, the victim's. */
static uint8_t exported[3][SDPU_SE_BLOB_SIZE];
/* The victim's control block as it was made, and its size. */
static uint8_t *pristine;
static size_t control_size;

/* A started event, exported to remote PCI: its blob in `blob`. */
static struct doca_sync_event *exported_event(uint8_t blob[SDPU_SE_BLOB_SIZE])
{
	struct doca_sync_event *se;
	const uint8_t *data;
	size_t sz;
	doca_error_t err;

	if ((err = doca_sync_event_create(&se)) != DOCA_SUCCESS ||
	    (err = doca_sync_event_add_publisher_location_remote_pci(se)) != DOCA_SUCCESS ||
	    (err = doca_sync_event_add_subscriber_location_cpu(se, dev)) != DOCA_SUCCESS ||
	    (err = doca_sync_event_start(se)) != DOCA_SUCCESS ||
	    (err = doca_sync_event_export_to_remote_pci(se, dev, &data, &sz)) != DOCA_SUCCESS)
		die("exporting a sync event", err);
	if (sz != SDPU_SE_BLOB_SIZE)
		die("the blob's size", DOCA_ERROR_UNEXPECTED);
	memcpy(blob, data, sz);
	return se;
}

static void write_seeds(void)
{
	uint8_t input[1 + SDPU_SE_BLOB_SIZE + 512] = {0};
	uint8_t *control = input + 1 + SDPU_SE_BLOB_SIZE - SDPU_SEGMENT_HEADER;

	seed("exported", input, 1 + SDPU_SE_BLOB_SIZE);
	input[0] = MEMORY;
	seed("memory-counter", input, 1 + SDPU_SE_BLOB_SIZE);
	input[0] = RESEAL | STAMP;
	input[1 + 4] = 1; /* version 0 */
	seed("resealed", input, 1 + SDPU_SE_BLOB_SIZE);
	input[1 + 4] = 0;
	input[0] = CONTROL;
	seed("control", input, sizeof(input));
	/* Waiter entry 0 claimed and wanting (state, wants at 256 and 260), with the high-water mark 1 and one waiting. */
	control[SDPU_SE_WAITING] = 1;
	control[SDPU_SE_HIGH] = 1;
	control[SDPU_SE_TABLE + SDPU_SE_E_STATE] = 1;
	control[SDPU_SE_TABLE + SDPU_SE_E_WANTS] = 1;
	control[SDPU_SE_TABLE + SDPU_SE_E_BELL] = 1;
	seed("control-waiter", input, sizeof(input));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	doca_error_t err;

	(void)argc;
	(void)argv;
	require_fabric();
	seed_mode();
	quiet_log();
	dev = open_dev("03:00.0");
	event = exported_event(exported[0]);
	victim = exported_event(exported[2]);
	if ((err = sdpu_segment_create("mem", 4096, &memory)) != DOCA_SUCCESS)
		die("a mem segment", err);
	memcpy(exported[1], exported[0], SDPU_SE_BLOB_SIZE);
	/* The counter at the first byte after the mem segment's header, resealed. */
	sdpu_descriptor_encode(&memory->descriptor, exported[1] + SDPU_BLOB_HEADER + SDPU_DESCRIPTOR_SIZE);
	memcpy(exported[1] + SDPU_BLOB_HEADER + 2 * SDPU_DESCRIPTOR_SIZE, &(double){64}, 8);
	sdpu_blob_seal(exported[1], SDPU_BLOB_SYNC_EVENT_PCI, SDPU_SE_PAYLOAD, dev->fabric->id);
	control_size = victim->control->size;
	pristine = malloc(control_size);
	if (pristine == NULL)
		die("malloc", DOCA_ERROR_NO_MEMORY);
	memcpy(pristine, victim->control->base, control_size);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doca_sync_event *imported;
	const uint8_t *base;
	uint8_t *blob;
	size_t n;

	if (size < 1)
		return 0;
	n = size - 1;
	base = exported[data[0] & CONTROL ? 2 : data[0] & MEMORY ? 1 : 0];
	if (data[0] & CONTROL) {
		uint8_t *control = victim->control->base;
		size_t extra = n > SDPU_SE_BLOB_SIZE ? n - SDPU_SE_BLOB_SIZE : 0;

		/* The victim's block as made, with the difference from byte 64 on. */
		memcpy(control, pristine, control_size);
		for (size_t i = 0; i < extra && SDPU_SEGMENT_HEADER + i < control_size; i++)
			control[SDPU_SEGMENT_HEADER + i] ^= data[1 + SDPU_SE_BLOB_SIZE + i];
		n -= extra;
	}
	/* Exactly the blob's bytes: a read past them is AddressSanitizer's to see. */
	blob = malloc(n > 0 ? n : 1);
	if (blob == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		blob[i] = data[1 + i] ^ (i < SDPU_SE_BLOB_SIZE ? base[i] : 0);
	if ((data[0] & STAMP) && n >= SDPU_BLOB_HEADER)
		memcpy(blob + 16, dev->fabric->id, 8);
	if ((data[0] & RESEAL) && n >= SDPU_BLOB_HEADER) {
		uint32_t len = (uint32_t)n, crc;

		memcpy(blob + 8, &len, 4);
		crc = sdpu_crc32(blob + 16, n - 16);
		memcpy(blob + 12, &crc, 4);
	}
	if (doca_sync_event_create_from_export(dev, blob, n, &imported) == DOCA_SUCCESS) {
		uint64_t value = 0;

		/* An import the checks let through is used as a program would (an update rings the waiters), then given back. */
		if (doca_sync_event_start(imported) == DOCA_SUCCESS) {
			doca_sync_event_update_add(imported, 1, &value);
			doca_sync_event_update_set(imported, value + 1);
			doca_sync_event_get(imported, &value);
			doca_sync_event_wait_neq(imported, value + 1, UINT64_MAX);
			doca_sync_event_stop(imported);
		}
		if (doca_sync_event_destroy(imported) != DOCA_SUCCESS)
			abort();
	}
	free(blob);
	return 0;
}
