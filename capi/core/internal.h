/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the library's files share and nothing exports (libdoca.map exports doca_* only): the SDK's own
 * log lines, level names, and the one line every generated stub writes.
 */
#ifndef SOFTDPU_CAPI_INTERNAL_H_
#define SOFTDPU_CAPI_INTERNAL_H_

#include <stdatomic.h>
#include <stdint.h>

#include <doca_error.h>

/* An SDK line (the library's own, [DOCA] in the line) from `source`, filtered by the SDK levels. */
void sdpu_log_sdk(uint32_t level, const char *source, const char *format, ...) __attribute__((format(printf, 3, 4)));

/* A level given as a number (50) or a name ("info", "WARNING", "err"); INVALID_VALUE otherwise. */
doca_error_t sdpu_log_level_parse(const char *text, uint32_t *level);

/* The level's names for messages: "10=DISABLE 20=CRITICAL ... 70=TRACE". */
extern const char sdpu_log_level_names[];

/*
 * A generated stub's line, once per function and process: `function` is not implemented and answers
 * `answer` (DOCA_ERROR_NOT_SUPPORTED, NULL, 0 or nothing).
 */
void sdpu_unsupported(atomic_flag *once, const char *source, const char *function, const char *answer);

/* The DOCA error an errno stands for (src/core/error.ts ERRNO_CODES; OPERATING_SYSTEM for the rest). */
doca_error_t sdpu_os_error(int errno_value);

/* softdpu's version, given by the build (package.json's). */
#ifndef SOFTDPU_VERSION
#define SOFTDPU_VERSION "unknown"
#endif

#endif /* SOFTDPU_CAPI_INTERNAL_H_ */
