/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_version.h: the DOCA release whose API softdpu models (3.0.0058, the VERSION file of the
 * install tree). Written for softdpu from DOCA's public API reference; no NVIDIA text.
 */
#ifndef DOCA_VERSION_H_
#define DOCA_VERSION_H_

#include <stddef.h>

#include <doca_compat.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DOCA_VERSION_MAJOR 3
#define DOCA_VERSION_MINOR 0
#define DOCA_VERSION_PATCH 58
#define DOCA_VERSION_STRING "3.0.0058"

/* major.minor.patch packed into one number, patch as given (EXACT) or in thousands (the official form). */
#define DOCA_VERSION_CALC_EXACT(major, minor, patch) ((size_t)((major) << 24 | (minor) << 16 | (patch)))
#define DOCA_VERSION_EXACT DOCA_VERSION_CALC_EXACT(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)
#define DOCA_VERSION_CALC(major, minor, patch) ((size_t)((major) << 24 | (minor) << 16 | ((patch) * 1000)))
#define DOCA_VERSION_OFFICIAL DOCA_VERSION_CALC(DOCA_VERSION_MAJOR, DOCA_VERSION_MINOR, DOCA_VERSION_PATCH)
#define DOCA_VERSION_EQ_CURRENT(major, minor, patch) (DOCA_VERSION_CALC(major, minor, patch) == DOCA_VERSION_OFFICIAL)
#define DOCA_VERSION_LTE_CURRENT(major, minor, patch) (DOCA_VERSION_CALC(major, minor, patch) <= DOCA_VERSION_OFFICIAL)

/* The version the program was compiled against. */
static inline const char *doca_version(void)
{
	return DOCA_VERSION_STRING;
}

/* The version of the library the program runs with. */
DOCA_EXPERIMENTAL const char *doca_version_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_VERSION_H_ */
