/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory maps and buffers (doca_mmap.h, doca_buf.h, doca_buf_inventory.h), and where a map's memory
 * lives for a peer process: a `mem` segment (docs/protocol.md, "Mmap export") and the byte offset of the
 * range in it. A map over the program's own memory gets one when it starts with a PCI permission
 * (shared.c: the pages are moved into a memfd in place); an imported map is the exporter's segment.
 */
#ifndef SOFTDPU_CAPI_MMAP_H_
#define SOFTDPU_CAPI_MMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_mmap.h>

#include "fabric/blob.h"
#include "fabric/exports.h"
#include "fabric/segment.h"

#define SDPU_MMAP_PAYLOAD (SDPU_DESCRIPTOR_SIZE + 8 + 8 + 4 + SDPU_PCI_TRAILER_SIZE)
#define SDPU_MMAP_BLOB_SIZE (SDPU_BLOB_HEADER + SDPU_MMAP_PAYLOAD)
#define SDPU_ACCESS_ALL 0x7fu
#define SDPU_ACCESS_PCI (DOCA_ACCESS_FLAG_PCI_READ_ONLY | DOCA_ACCESS_FLAG_PCI_READ_WRITE)
#define SDPU_MMAP_MAX_DEVS_DEFAULT 64

/* A range of the program's memory that was made shared (shared.c), counted by the maps over it. */
struct sdpu_shared;

struct doca_mmap {
	uint8_t *addr;
	size_t len;
	uint32_t permissions;
	bool started, ever_started, imported, invalid;
	struct doca_dev **devs;
	uint32_t ndevs, max_devs;
	uint32_t bufs;
	/* Consumers over it (they write into it until destroyed). */
	uint32_t users;
	union doca_data user_data;
	doca_mmap_memrange_free_cb_t *free_cb;
	void *free_opaque;
	/* Where the memory lives for peers (NULL: this process only), and the range's byte offset in it. */
	struct sdpu_segment *segment;
	size_t offset;
	struct sdpu_shared *shared;
	/* Exported: the slot, and the blob the map owns until it is destroyed. */
	bool exported;
	struct sdpu_export_slot slot;
	uint8_t blob[SDPU_MMAP_BLOB_SIZE];
	/* Imported: the exporter's slot. */
	struct sdpu_export_view view;
};

struct doca_buf_inventory {
	uint32_t capacity, out;
	bool started;
	union doca_data user_data;
	struct doca_buf *free_list;
	/* Blocks of descriptors (the first of `capacity`, then one per expand). */
	struct doca_buf **blocks;
	uint32_t nblocks;
};

struct doca_buf {
	struct doca_buf_inventory *inventory;
	struct doca_mmap *mmap;
	uint8_t *head;
	size_t len;
	uint8_t *data;
	size_t data_len;
	uint16_t refs;
	struct doca_buf *free_next;
};

/* BAD_STATE (logged, naming `call`) unless the map is started and, if imported, its export still valid. */
doca_error_t sdpu_mmap_usable(struct doca_mmap *mmap, const char *call);

/*
 * Makes [addr, addr + len) of this process shared with peers, in place (shared.c): a range already
 * shared (by another live map over it) is reused. The segment and the range's offset in it.
 */
doca_error_t sdpu_shared_acquire(uint8_t *addr, size_t len, const char *call, struct sdpu_shared **out, struct sdpu_segment **segment,
				 size_t *offset);
void sdpu_shared_release(struct sdpu_shared *shared);

#endif /* SOFTDPU_CAPI_MMAP_H_ */
