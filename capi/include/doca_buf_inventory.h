/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_buf_inventory.h: a bounded pool of buffer descriptors. Written for softdpu from DOCA's
 * public API reference; no NVIDIA text.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;
struct doca_buf_inventory;

DOCA_STABLE doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory);
DOCA_STABLE doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);
DOCA_STABLE doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);
DOCA_STABLE doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);
DOCA_EXPERIMENTAL doca_error_t doca_buf_inventory_expand(struct doca_buf_inventory *inventory, uint32_t num_elements);

/* A buffer of the region [addr, addr + len) with the data window [data, data + data_len). */
DOCA_STABLE doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
							    void *addr, size_t len, void *data, size_t data_len,
							    struct doca_buf **buf);

/* An empty buffer over [addr, addr + len): what a consumer posts. */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *addr, size_t len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

/* A full buffer over [data, data + data_len): what a producer sends. */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							      struct doca_mmap *mmap, void *data, size_t data_len,
							      struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

DOCA_STABLE doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory,
						    const struct doca_buf *src_buf, struct doca_buf **dst_buf);

/* Properties. */
DOCA_STABLE doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory,
							  union doca_data user_data);
DOCA_STABLE doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
							  union doca_data *user_data);
DOCA_STABLE doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
							     uint32_t *num_of_elements);
DOCA_STABLE doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
								  uint32_t *num_of_free_elements);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
