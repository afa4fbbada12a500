/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_log.h: DOCA's logging, with application and SDK (library) lines kept apart. Written
 * for softdpu from DOCA's public API reference; no NVIDIA text. docs/c.md says how the limits combine.
 *
 * A program registers one source per file with DOCA_LOG_REGISTER(NAME), which runs before main, and
 * logs with DOCA_LOG_ERR/WARN/INFO/DBG/CRIT (DOCA_LOG_TRC only when DOCA_LOGGING_ALLOW_TRACE is defined).
 * Lines go to the backends the program created; until it creates one, application lines up to INFO and
 * SDK lines up to WARNING go to stderr.
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A higher number is more verbose. */
enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10,
	DOCA_LOG_LEVEL_CRIT = 20,
	DOCA_LOG_LEVEL_ERROR = 30,
	DOCA_LOG_LEVEL_WARNING = 40,
	DOCA_LOG_LEVEL_INFO = 50,
	DOCA_LOG_LEVEL_DEBUG = 60,
	DOCA_LOG_LEVEL_TRACE = 70,
};

struct doca_log_backend;

/* A buffer backend calls this with each line, written at the start of its buffer. */
typedef void (*log_flush_callback)(char *buf);

/* Limits of one backend's application lines: the most verbose (lower) and most severe (upper) level. */
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t level);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend);

/* The limits of every application backend at once, and of those created later. */
DOCA_EXPERIMENTAL doca_error_t doca_log_level_set_global_lower_limit(uint32_t level);
DOCA_EXPERIMENTAL doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit);
DOCA_EXPERIMENTAL uint32_t doca_log_level_get_global_lower_limit(void);
DOCA_EXPERIMENTAL uint32_t doca_log_level_get_global_upper_limit(void);

/* Sources: the name every line of a file carries. */
DOCA_EXPERIMENTAL doca_error_t doca_log_register_source(const char *source_name, int *source);
DOCA_EXPERIMENTAL doca_error_t doca_log_unregister_source(int source);

/* Backends for application lines. */
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity, log_flush_callback handler,
								struct doca_log_backend **backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend);

/* Backends for SDK lines, and their level. */
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity,
								    log_flush_callback handler,
								    struct doca_log_backend **backend);
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name,
								       struct doca_log_backend **backend);

/* The level of every SDK backend at once, and of those created later. */
DOCA_EXPERIMENTAL doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level);
DOCA_EXPERIMENTAL uint32_t doca_log_level_get_global_sdk_limit(void);

/* Application lines up to INFO on stdout, WARNING and more severe on stderr. */
DOCA_EXPERIMENTAL doca_error_t doca_log_backend_create_standard(void);

/* Writes one application line; the DOCA_LOG_* macros call it. */
DOCA_EXPERIMENTAL doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func,
					const char *format, ...) __attribute__((format(printf, 6, 7)));

#define DOCA_LOG(level, format, ...) doca_log(level, log_source, __FILE__, __LINE__, __func__, format, ##__VA_ARGS__)
#define DOCA_LOG_CRIT(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_CRIT, format, ##__VA_ARGS__)
#define DOCA_LOG_ERR(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_ERROR, format, ##__VA_ARGS__)
#define DOCA_LOG_WARN(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_WARNING, format, ##__VA_ARGS__)
#define DOCA_LOG_INFO(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_INFO, format, ##__VA_ARGS__)
#define DOCA_LOG_DBG(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_DEBUG, format, ##__VA_ARGS__)
#ifdef DOCA_LOGGING_ALLOW_TRACE
#define DOCA_LOG_TRC(format, ...) DOCA_LOG(DOCA_LOG_LEVEL_TRACE, format, ##__VA_ARGS__)
#else
#define DOCA_LOG_TRC(format, ...) \
	do { \
	} while (0)
#endif

/*
 * One source per translation unit, registered by a constructor of the highest user priority (101), so
 * that other constructors and everything before main can log through it.
 */
#define DOCA_LOG_REGISTER(source) \
	static int log_source; \
	static void __attribute__((constructor(101), used)) doca_log_register_source_of_this_file(void) \
	{ \
		doca_log_register_source(#source, &log_source); \
	}

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
