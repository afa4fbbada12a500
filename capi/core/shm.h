/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Words in memory another process or thread writes (docs/protocol.md, "Conventions"): sequentially
 * consistent atomics for the words both sides change, and single reads and writes of the plain fields.
 * A plain field is read once, with one load, into a local that is then checked and used: the compiler
 * never reads it a second time, so a peer that changes it meanwhile cannot slip a value past a check.
 * Every field is little-endian and naturally aligned; the fabric is little-endian only.
 */
#ifndef SOFTDPU_CAPI_SHM_H_
#define SOFTDPU_CAPI_SHM_H_

#include <stdint.h>
#include <string.h>

static inline int32_t sdpu_load(const void *at)
{
	return __atomic_load_n((const int32_t *)at, __ATOMIC_SEQ_CST);
}

static inline void sdpu_store(void *at, int32_t value)
{
	__atomic_store_n((int32_t *)at, value, __ATOMIC_SEQ_CST);
}

/* True if the word held `expected` and now holds `value`. */
static inline int sdpu_cas(void *at, int32_t expected, int32_t value)
{
	return __atomic_compare_exchange_n((int32_t *)at, &expected, value, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static inline int32_t sdpu_exchange(void *at, int32_t value)
{
	return __atomic_exchange_n((int32_t *)at, value, __ATOMIC_SEQ_CST);
}

/* The value before. */
static inline int32_t sdpu_add(void *at, int32_t value)
{
	return (int32_t)__atomic_fetch_add((uint32_t *)at, (uint32_t)value, __ATOMIC_SEQ_CST);
}

static inline void sdpu_or(void *at, uint32_t mask)
{
	__atomic_fetch_or((uint32_t *)at, mask, __ATOMIC_SEQ_CST);
}

static inline void sdpu_and(void *at, uint32_t mask)
{
	__atomic_fetch_and((uint32_t *)at, mask, __ATOMIC_SEQ_CST);
}

/* Plain fields: one load or store each. */
static inline uint32_t sdpu_get_u32(const void *at)
{
	return __atomic_load_n((const uint32_t *)at, __ATOMIC_RELAXED);
}

static inline uint16_t sdpu_get_u16(const void *at)
{
	return __atomic_load_n((const uint16_t *)at, __ATOMIC_RELAXED);
}

static inline double sdpu_get_f64(const void *at)
{
	uint64_t bits = __atomic_load_n((const uint64_t *)at, __ATOMIC_RELAXED);
	double value;

	memcpy(&value, &bits, sizeof(value));
	return value;
}

static inline void sdpu_put_u32(void *at, uint32_t value)
{
	__atomic_store_n((uint32_t *)at, value, __ATOMIC_RELAXED);
}

static inline void sdpu_put_u16(void *at, uint16_t value)
{
	__atomic_store_n((uint16_t *)at, value, __ATOMIC_RELAXED);
}

static inline void sdpu_put_f64(void *at, double value)
{
	uint64_t bits;

	memcpy(&bits, &value, sizeof(bits));
	__atomic_store_n((uint64_t *)at, bits, __ATOMIC_RELAXED);
}

/* An f64 that holds an integer a JavaScript peer can represent exactly (a pid, a start time, a size). */
static inline int sdpu_safe_integer(double value)
{
	return value >= 0 && value <= 9007199254740991.0 && value == (double)(uint64_t)value;
}

#endif /* SOFTDPU_CAPI_SHM_H_ */
