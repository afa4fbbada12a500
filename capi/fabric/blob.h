/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Export blobs (docs/protocol.md, "Export blobs"): the envelope every blob has (magic 'SDPB', version
 * 1, kind, length, a CRC-32 over the rest, the fabric id) and the PCI trailer that ties a PCI export to
 * its exporter's export slot and its DPU. Blobs are secrets: nothing here logs one's bytes.
 */
#ifndef SOFTDPU_CAPI_BLOB_H_
#define SOFTDPU_CAPI_BLOB_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

#include "fabric/exports.h"

#define SDPU_BLOB_HEADER 24
#define SDPU_PCI_TRAILER_SIZE 112

enum sdpu_blob_kind { SDPU_BLOB_MMAP_PCI = 1, SDPU_BLOB_SYNC_EVENT_PCI = 2, SDPU_BLOB_SYNC_EVENT_NET = 3 };

/* zlib's CRC-32 (IEEE 802.3, reflected, initial and final XOR 0xffffffff). */
uint32_t sdpu_crc32(const uint8_t *data, size_t len);

/* Writes the envelope of a blob of `payload` bytes (already written after the header) and seals it. */
void sdpu_blob_seal(uint8_t *blob, enum sdpu_blob_kind kind, size_t payload, const uint8_t fabric_id[8]);

/*
 * Checks an envelope in protocol.md's order (INVALID_VALUE, one log line naming what is wrong): at least
 * 24 bytes, magic, version, declared length, CRC, kind, the kind's exact length, the fabric.
 */
doca_error_t sdpu_blob_check(const uint8_t *blob, size_t len, enum sdpu_blob_kind kind, size_t payload,
			     const uint8_t fabric_id[8], const char *call);

/* The PCI trailer at `at`: slot index, generation, export table descriptor, DPU name. */
void sdpu_pci_trailer_write(uint8_t *at, const struct sdpu_export_slot *slot, const char *dpu);
/* Reads it: INVALID_VALUE for another DPU or a bad descriptor. */
doca_error_t sdpu_pci_trailer_read(const uint8_t *at, const char *dpu, const char *what, const char *call,
				   struct sdpu_export_slot *slot);

#endif /* SOFTDPU_CAPI_BLOB_H_ */
