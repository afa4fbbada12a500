/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_buf_inventory.h and doca_buf.h: an inventory is a bounded pool of buffer descriptors (NO_MEMORY
 * when every one is out); a buffer is a region of a started map with a data window inside it, counted
 * by references (it goes back to its inventory, and stops counting against its map, at 0). Buffer lists
 * are not modelled: every buffer is a list of one (max_buf_list_len is 1), as on the TypeScript side.
 */
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/internal.h"
#include "mmap/mmap.h"

#define SOURCE "buf"
#define MAX_ELEMENTS (1u << 24)

static doca_error_t refuse(doca_error_t err, const char *call, const char *why)
{
	sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: %s", call, why);
	return err;
}

static doca_error_t add_block(struct doca_buf_inventory *inv, uint32_t n)
{
	struct doca_buf *block = calloc(n, sizeof(*block));
	struct doca_buf **blocks = realloc(inv->blocks, (inv->nblocks + 1) * sizeof(*blocks));

	if (blocks != NULL)
		inv->blocks = blocks;
	if (block == NULL || blocks == NULL) {
		free(block);
		return DOCA_ERROR_NO_MEMORY;
	}
	inv->blocks[inv->nblocks++] = block;
	for (uint32_t i = n; i > 0; i--) {
		block[i - 1].inventory = inv;
		block[i - 1].free_next = inv->free_list;
		inv->free_list = &block[i - 1];
	}
	inv->capacity += n;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **inventory)
{
	struct doca_buf_inventory *inv;

	if (inventory == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (num_elements < 1 || num_elements > MAX_ELEMENTS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_buf_inventory_create: num_elements %zu is not in [1, 2^24]", num_elements);
		return DOCA_ERROR_INVALID_VALUE;
	}
	inv = calloc(1, sizeof(*inv));
	if (inv == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (add_block(inv, (uint32_t)num_elements) != DOCA_SUCCESS) {
		free(inv);
		return DOCA_ERROR_NO_MEMORY;
	}
	*inventory = inv;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inv)
{
	if (inv == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (inv->out > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_buf_inventory_destroy: %u buffer(s) are still out; release them (doca_buf_dec_refcount) first",
			     inv->out);
		return DOCA_ERROR_IN_USE;
	}
	for (uint32_t i = 0; i < inv->nblocks; i++)
		free(inv->blocks[i]);
	free(inv->blocks);
	free(inv);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inv)
{
	if (inv == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	inv->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inv)
{
	if (inv == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (inv->out > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "doca_buf_inventory_stop: %u buffer(s) are still out", inv->out);
		return DOCA_ERROR_IN_USE;
	}
	inv->started = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_expand(struct doca_buf_inventory *inv, uint32_t num_elements)
{
	if (inv == NULL || num_elements == 0 || num_elements > MAX_ELEMENTS - inv->capacity)
		return refuse(DOCA_ERROR_INVALID_VALUE, "doca_buf_inventory_expand", "the inventory would hold 0 or more than 2^24 elements");
	return add_block(inv, num_elements);
}

/* Whether [p, p + n) lies inside the map's range. */
static bool inside(const struct doca_mmap *m, const uint8_t *p, size_t n)
{
	return p >= m->addr && n <= m->len && (size_t)(p - m->addr) <= m->len - n;
}

static doca_error_t take(struct doca_buf_inventory *inv, struct doca_mmap *m, uint8_t *head, size_t len, uint8_t *data, size_t data_len,
			 const char *call, struct doca_buf **out)
{
	struct doca_buf *b;

	if (!inv->started)
		return refuse(DOCA_ERROR_BAD_STATE, call, "the inventory is not started");
	if (inv->free_list == NULL) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_DEBUG, SOURCE, "%s: all %u elements of the inventory are in use", call, inv->capacity);
		return DOCA_ERROR_NO_MEMORY;
	}
	b = inv->free_list;
	inv->free_list = b->free_next;
	inv->out++;
	m->bufs++;
	b->mmap = m;
	b->head = head;
	b->len = len;
	b->data = data;
	b->data_len = data_len;
	b->refs = 1;
	*out = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inv, struct doca_mmap *m, void *addr, size_t len, void *data,
						size_t data_len, struct doca_buf **buf)
{
	const char *call = "doca_buf_inventory_buf_get_by_args";
	uint8_t *head = addr, *d = data;
	doca_error_t err;

	if (inv == NULL || m == NULL || addr == NULL || buf == NULL || (data == NULL && data_len > 0))
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_mmap_usable(m, call);
	if (err != DOCA_SUCCESS)
		return err;
	if (d == NULL)
		d = head;
	if (!inside(m, head, len)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the region [%p, +%zu) is not inside the map's memory range [%p, +%zu)", call, addr, len,
			     (void *)m->addr, m->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (d < head || data_len > len || (size_t)(d - head) > len - data_len) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the data window [%p, +%zu) is not inside the region [%p, +%zu)", call, (void *)d, data_len,
			     addr, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return take(inv, m, head, len, d, data_len, call, buf);
}

doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inv, const struct doca_buf *src, struct doca_buf **dst)
{
	doca_error_t err;

	if (inv == NULL || src == NULL || dst == NULL || src->refs == 0)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_mmap_usable(src->mmap, "doca_buf_inventory_buf_dup");
	if (err != DOCA_SUCCESS)
		return err;
	return take(inv, src->mmap, src->head, src->len, src->data, src->data_len, "doca_buf_inventory_buf_dup", dst);
}

doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inv, union doca_data user_data)
{
	if (inv == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	inv->user_data = user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inv, union doca_data *user_data)
{
	if (inv == NULL || user_data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = inv->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inv, uint32_t *n)
{
	if (inv == NULL || n == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*n = inv->capacity;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inv, uint32_t *n)
{
	if (inv == NULL || n == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*n = inv->capacity - inv->out;
	return DOCA_SUCCESS;
}

/* ---- doca_buf.h ---- */

static doca_error_t live(const struct doca_buf *b, const char *call)
{
	if (b == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (b->refs == 0)
		return refuse(DOCA_ERROR_BAD_STATE, call, "the buffer was released (its reference count is 0)");
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inc_refcount(struct doca_buf *b, uint16_t *refcount)
{
	doca_error_t err = live(b, "doca_buf_inc_refcount");

	if (err != DOCA_SUCCESS)
		return err;
	if (b->refs == UINT16_MAX)
		return refuse(DOCA_ERROR_TOO_BIG, "doca_buf_inc_refcount", "the reference count is already 65535");
	if (refcount != NULL)
		*refcount = b->refs;
	b->refs++;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_dec_refcount(struct doca_buf *b, uint16_t *refcount)
{
	doca_error_t err = live(b, "doca_buf_dec_refcount");

	if (err != DOCA_SUCCESS)
		return err;
	if (refcount != NULL)
		*refcount = b->refs;
	if (--b->refs == 0) {
		struct doca_buf_inventory *inv = b->inventory;

		b->mmap->bufs--;
		b->mmap = NULL;
		inv->out--;
		b->free_next = inv->free_list;
		inv->free_list = b;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_refcount(const struct doca_buf *b, uint16_t *refcount)
{
	if (b == NULL || refcount == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*refcount = b->refs;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_len(const struct doca_buf *b, size_t *len)
{
	doca_error_t err = live(b, "doca_buf_get_len");

	if (err == DOCA_SUCCESS && len == NULL)
		err = DOCA_ERROR_INVALID_VALUE;
	if (err == DOCA_SUCCESS)
		*len = b->len;
	return err;
}

doca_error_t doca_buf_get_head(const struct doca_buf *b, void **head)
{
	doca_error_t err = live(b, "doca_buf_get_head");

	if (err == DOCA_SUCCESS && head == NULL)
		err = DOCA_ERROR_INVALID_VALUE;
	if (err == DOCA_SUCCESS)
		*head = b->head;
	return err;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *b, size_t *data_len)
{
	doca_error_t err = live(b, "doca_buf_get_data_len");

	if (err == DOCA_SUCCESS && data_len == NULL)
		err = DOCA_ERROR_INVALID_VALUE;
	if (err == DOCA_SUCCESS)
		*data_len = b->data_len;
	return err;
}

doca_error_t doca_buf_get_data(const struct doca_buf *b, void **data)
{
	doca_error_t err = live(b, "doca_buf_get_data");

	if (err == DOCA_SUCCESS && data == NULL)
		err = DOCA_ERROR_INVALID_VALUE;
	if (err == DOCA_SUCCESS)
		*data = b->data;
	return err;
}

doca_error_t doca_buf_set_data(struct doca_buf *b, void *data, size_t data_len)
{
	const char *call = "doca_buf_set_data";
	uint8_t *d = data;
	doca_error_t err = live(b, call);

	if (err != DOCA_SUCCESS)
		return err;
	if (d == NULL || d < b->head || data_len > b->len || (size_t)(d - b->head) > b->len - data_len) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: the data window [%p, +%zu) is not inside the buffer's region [%p, +%zu)", call, data,
			     data_len, (void *)b->head, b->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	b->data = d;
	b->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data_len(struct doca_buf *b, size_t data_len)
{
	const char *call = "doca_buf_set_data_len";
	doca_error_t err = live(b, call);

	if (err != DOCA_SUCCESS)
		return err;
	if (data_len > b->len - (size_t)(b->data - b->head)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s: data length %zu from offset %zu exceeds the %zu-byte region", call, data_len,
			     (size_t)(b->data - b->head), b->len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	b->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_reset_data_len(struct doca_buf *b)
{
	doca_error_t err = live(b, "doca_buf_reset_data_len");

	if (err == DOCA_SUCCESS)
		b->data_len = 0;
	return err;
}

/* Lists of one. */
doca_error_t doca_buf_get_next_in_list(struct doca_buf *b, struct doca_buf **next_buf)
{
	if (b == NULL || next_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*next_buf = NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_last_in_list(struct doca_buf *b, struct doca_buf **last_buf)
{
	if (b == NULL || last_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*last_buf = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_last_in_list(const struct doca_buf *b, uint8_t *is_last)
{
	if (b == NULL || is_last == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*is_last = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *b, uint8_t *is_first)
{
	if (b == NULL || is_first == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*is_first = 1;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_in_list(const struct doca_buf *b, uint8_t *is_in_list)
{
	if (b == NULL || is_in_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*is_in_list = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *b, uint32_t *num_elements)
{
	if (b == NULL || num_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_elements = 1;
	return DOCA_SUCCESS;
}
