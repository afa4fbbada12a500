/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_compat.h: the attributes every declaration of DOCA's C API carries.
 *
 * Written for softdpu from DOCA's public API reference; it contains no text of NVIDIA's headers. A
 * stable function is exported; an experimental one is exported too, and a program that uses it without
 * defining DOCA_ALLOW_EXPERIMENTAL_API (as NVIDIA's samples do in their meson.build) gets a deprecation
 * warning naming the macro. DOCA_ALLOW_DEPRECATED_API does the same for deprecated functions.
 */
#ifndef DOCA_COMPAT_H_
#define DOCA_COMPAT_H_

#include <doca_build_config.h>

/*
 * DOCA's doca_compat.h brings in the C library's string, integer, allocation and assert headers for its
 * helpers, so every DOCA header does; NVIDIA's samples rely on it (their mains call memset, strcpy and
 * strnlen with no <string.h> of their own).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DOCA_USED __attribute__((used))
#define DOCA_STABLE __attribute__((visibility("default")))

#ifdef DOCA_ALLOW_EXPERIMENTAL_API
#define DOCA_EXPERIMENTAL DOCA_STABLE
#else
#define DOCA_EXPERIMENTAL \
	__attribute__((deprecated("experimental DOCA API: define DOCA_ALLOW_EXPERIMENTAL_API to use it"))) DOCA_STABLE
#endif

#ifdef DOCA_ALLOW_DEPRECATED_API
#define DOCA_DEPRECATED DOCA_STABLE
#else
#define DOCA_DEPRECATED \
	__attribute__((deprecated("deprecated DOCA API: define DOCA_ALLOW_DEPRECATED_API to use it"))) DOCA_STABLE
#endif

/* Branch hints, as DOCA's DOCA_IS_ERROR uses them. */
#ifndef doca_likely
#define doca_likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef doca_unlikely
#define doca_unlikely(x) __builtin_expect(!!(x), 0)
#endif

#endif /* DOCA_COMPAT_H_ */
