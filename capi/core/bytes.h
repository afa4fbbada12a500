/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fields of byte buffers: frames read from a socket, export blobs. Every field is little-endian (the
 * fabric is little-endian only, docs/protocol.md "Conventions") and may be unaligned, so it is copied,
 * never read through a cast pointer.
 */
#ifndef SOFTDPU_CAPI_BYTES_H_
#define SOFTDPU_CAPI_BYTES_H_

#include <stdint.h>
#include <string.h>

static inline uint16_t sdpu_get16(const uint8_t *at)
{
	uint16_t v;

	memcpy(&v, at, 2);
	return v;
}

static inline uint32_t sdpu_get32(const uint8_t *at)
{
	uint32_t v;

	memcpy(&v, at, 4);
	return v;
}

static inline double sdpu_getf64(const uint8_t *at)
{
	double v;

	memcpy(&v, at, 8);
	return v;
}

static inline void sdpu_put16(uint8_t *at, uint16_t v)
{
	memcpy(at, &v, 2);
}

static inline void sdpu_put32(uint8_t *at, uint32_t v)
{
	memcpy(at, &v, 4);
}

static inline void sdpu_putf64(uint8_t *at, double v)
{
	memcpy(at, &v, 8);
}

#endif /* SOFTDPU_CAPI_BYTES_H_ */
