/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_comch_msgq.h: a message queue that pairs consumers and producers without a
 * connection, typically with one side on the DPA. Written for softdpu from DOCA's public API reference;
 * no NVIDIA text. The C library does not model it yet: every call answers DOCA_ERROR_NOT_SUPPORTED.
 */
#ifndef DOCA_COMCH_MSGQ_H_
#define DOCA_COMCH_MSGQ_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_dpa;
struct doca_comch_msgq;
struct doca_comch_consumer;
struct doca_comch_producer;

DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_create(struct doca_dev *dev, struct doca_comch_msgq **msgq);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_destroy(struct doca_comch_msgq *msgq);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_set_dpa_consumer(struct doca_comch_msgq *msgq, struct doca_dpa *dpa);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_set_dpa_producer(struct doca_comch_msgq *msgq, struct doca_dpa *dpa);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_set_max_num_consumers(struct doca_comch_msgq *msgq,
								     uint32_t max_num_consumers);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_set_max_num_producers(struct doca_comch_msgq *msgq,
								     uint32_t max_num_producers);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_start(struct doca_comch_msgq *msgq);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_stop(struct doca_comch_msgq *msgq);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_consumer_create(struct doca_comch_msgq *msgq,
							       struct doca_comch_consumer **consumer);
DOCA_EXPERIMENTAL doca_error_t doca_comch_msgq_producer_create(struct doca_comch_msgq *msgq,
							       struct doca_comch_producer **producer);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_MSGQ_H_ */
