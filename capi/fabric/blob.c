/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fabric/blob.h. Envelope: 0 u32 magic 'SDPB', 4 u16 version 1, 6 u16 kind, 8 u32 total length,
 * 12 u32 CRC-32 of bytes [16, length), 16 fabric id [8], 24 payload. Trailer: 0 u32 slot index,
 * 4 i32 generation, 8 export table descriptor [40], 48 text[64] DPU name.
 */
#include "fabric/blob.h"

#include <stdio.h>
#include <string.h>

#include <doca_log.h>

#include "core/bytes.h"
#include "core/internal.h"

#define MAGIC 0x42504453 /* 'SDPB' */
#define VERSION 1

static const char *const KIND_NAMES[] = {"", "mmap PCI export", "sync event PCI export", "sync event remote-net export"};

static const char *kind_name(uint32_t kind)
{
	return kind >= 1 && kind <= 3 ? KIND_NAMES[kind] : NULL;
}

uint32_t sdpu_crc32(const uint8_t *data, size_t len)
{
	static uint32_t table[256];
	static int ready;
	uint32_t crc = 0xffffffffu;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

void sdpu_blob_seal(uint8_t *blob, enum sdpu_blob_kind kind, size_t payload, const uint8_t fabric_id[8])
{
	size_t len = SDPU_BLOB_HEADER + payload;

	sdpu_put32(blob, MAGIC);
	sdpu_put16(blob + 4, VERSION);
	sdpu_put16(blob + 6, (uint16_t)kind);
	sdpu_put32(blob + 8, (uint32_t)len);
	if (fabric_id != NULL)
		memcpy(blob + 16, fabric_id, 8);
	else
		memset(blob + 16, 0, 8);
	sdpu_put32(blob + 12, sdpu_crc32(blob + 16, len - 16));
}

doca_error_t sdpu_blob_check(const uint8_t *blob, size_t len, enum sdpu_blob_kind kind, size_t payload,
			     const uint8_t fabric_id[8], const char *call)
{
	const char *problem = NULL;
	char why[160];
	uint32_t got;

	if (blob == NULL || len < SDPU_BLOB_HEADER) {
		snprintf(why, sizeof(why), "the export blob is truncated (%zu bytes)", blob == NULL ? (size_t)0 : len);
		problem = why;
	} else if (sdpu_get32(blob) != MAGIC) {
		problem = "the data is not a softdpu export blob";
	} else if (sdpu_get16(blob + 4) != VERSION) {
		snprintf(why, sizeof(why), "the export blob has version %u, not %d", sdpu_get16(blob + 4), VERSION);
		problem = why;
	} else if (sdpu_get32(blob + 8) != len) {
		snprintf(why, sizeof(why), "the export blob is truncated or padded (%zu bytes, its header says %u)", len, sdpu_get32(blob + 8));
		problem = why;
	} else if (sdpu_get32(blob + 12) != sdpu_crc32(blob + 16, len - 16)) {
		problem = "the export blob is corrupted (checksum mismatch)";
	} else if ((got = sdpu_get16(blob + 6)) != (uint32_t)kind) {
		if (kind_name(got) != NULL)
			snprintf(why, sizeof(why), "the blob is a %s blob, not a %s blob", kind_name(got), kind_name(kind));
		else
			snprintf(why, sizeof(why), "the blob is a kind %u blob, not a %s blob", got, kind_name(kind));
		problem = why;
	} else if (len != SDPU_BLOB_HEADER + payload) {
		snprintf(why, sizeof(why), "the %s blob has %zu bytes, not %zu", kind_name(kind), len, SDPU_BLOB_HEADER + payload);
		problem = why;
	} else if (fabric_id != NULL && memcmp(blob + 16, fabric_id, 8) != 0) {
		problem = "the export blob was made in another fabric";
	}
	if (problem == NULL)
		return DOCA_SUCCESS;
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "%s", problem);
	return DOCA_ERROR_INVALID_VALUE;
}

void sdpu_pci_trailer_write(uint8_t *at, const struct sdpu_export_slot *slot, const char *dpu)
{
	size_t n = strlen(dpu);

	sdpu_put32(at, slot->index);
	sdpu_put32(at + 4, (uint32_t)slot->generation);
	sdpu_descriptor_encode(&slot->table, at + 8);
	memset(at + 8 + SDPU_DESCRIPTOR_SIZE, 0, 64);
	memcpy(at + 8 + SDPU_DESCRIPTOR_SIZE, dpu, n > 64 ? 64 : n);
}

doca_error_t sdpu_pci_trailer_read(const uint8_t *at, const char *dpu, const char *what, const char *call,
				   struct sdpu_export_slot *slot)
{
	char name[65] = {0};

	memcpy(name, at + 8 + SDPU_DESCRIPTOR_SIZE, 64);
	if (strcmp(name, dpu) != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "the %s was exported on DPU \"%s\"; this device belongs to %s", what, name, dpu);
		return DOCA_ERROR_INVALID_VALUE;
	}
	slot->index = sdpu_get32(at);
	slot->generation = (int32_t)sdpu_get32(at + 4);
	if (sdpu_descriptor_decode(at + 8, &slot->table) != DOCA_SUCCESS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "the blob's export table descriptor is impossible");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}
