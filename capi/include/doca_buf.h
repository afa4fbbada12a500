/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_buf.h: a buffer descriptor (a region of a memory map with a data window inside it,
 * reference-counted, chainable into lists). Written for softdpu from DOCA's public API reference; no
 * NVIDIA text.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;

/* Reference counts (kept on a list's head). */
DOCA_STABLE doca_error_t doca_buf_inc_refcount(struct doca_buf *buf, uint16_t *refcount);
DOCA_STABLE doca_error_t doca_buf_dec_refcount(struct doca_buf *buf, uint16_t *refcount);
DOCA_STABLE doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

/* The region and its data window. */
DOCA_STABLE doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);
DOCA_STABLE doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);
DOCA_STABLE doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);
DOCA_STABLE doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);
DOCA_STABLE doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);
DOCA_STABLE doca_error_t doca_buf_set_data_len(struct doca_buf *buf, size_t data_len);
DOCA_STABLE doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/* Lists. */
DOCA_STABLE doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);
DOCA_STABLE doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);
DOCA_STABLE doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last);
DOCA_STABLE doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first);
DOCA_STABLE doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list);
DOCA_STABLE doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);
DOCA_STABLE doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);
DOCA_EXPERIMENTAL doca_error_t doca_buf_chain_list_tail(struct doca_buf *list1_head, struct doca_buf *list1_tail,
							struct doca_buf *list2);
DOCA_STABLE doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
