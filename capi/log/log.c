/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_log.h: sources, backends and levels, with application and SDK (the library's own) lines apart.
 *
 * A backend writes an application line at level L when upper <= L <= lower (a lower number is more
 * severe: the lower limit is the most verbose level written, the upper limit the most severe). The
 * global lower and upper limits set those of every application backend and are the limits a new one
 * starts with (INFO and CRIT); a strict limit is never made less verbose (lower) or less severe (upper)
 * again. An SDK backend writes an SDK line at level L when L <= its SDK level, which the global SDK limit
 * sets on every SDK backend and gives new ones (INFO). doca_log_backend_create_standard makes two fixed
 * application backends: stdout for INFO and more verbose, stderr for WARNING and more severe.
 *
 * Until the program creates a backend, a default one writes application lines up to INFO and SDK lines
 * up to WARNING to stderr ($SOFTDPU_LOG_LEVEL and $SOFTDPU_SDK_LOG_LEVEL change those levels), so that
 * an error is never silent; it follows the global limits like any other backend. This and the line's
 * format, [HH:MM:SS:mmm][pid][APP or DOCA][LEVEL][source] message, are src/core/log.ts's.
 *
 * Lines are written at once, under one lock (a line is never interleaved with another thread's, and
 * nothing is lost when the process dies right after); a failing sink never fails the call that logged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"

enum sink { SINK_FILE, SINK_FD, SINK_BUF, SINK_SYSLOG };

struct doca_log_backend {
	struct doca_log_backend *next;
	enum sink sink;
	bool app;
	bool sdk;
	uint32_t lower;
	uint32_t upper;
	bool lower_strict;
	bool upper_strict;
	/* create_standard's fixed split: lower is never above clamp_lower, upper never below clamp_upper. */
	uint32_t clamp_lower;
	uint32_t clamp_upper;
	uint32_t sdk_level;
	FILE *file;
	int fd;
	char *buf;
	size_t capacity;
	log_flush_callback flush;
	char *syslog_name;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t global_lower = DOCA_LOG_LEVEL_INFO;
static uint32_t global_upper = DOCA_LOG_LEVEL_CRIT;
static uint32_t global_sdk = DOCA_LOG_LEVEL_INFO;
/* The program's backends, in creation order; none is ever freed (DOCA has no destroy call). */
static struct doca_log_backend *backends;
static struct doca_log_backend **backends_tail = &backends;
static struct doca_log_backend default_backend;
static bool default_ready;
static bool standard_created;
static char **sources;
static int nsources;

const char sdpu_log_level_names[] = "10=DISABLE 20=CRITICAL 30=ERROR 40=WARNING 50=INFO 60=DEBUG 70=TRACE";

static bool valid_level(uint32_t level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE && level % 10 == 0;
}

doca_error_t sdpu_log_level_parse(const char *text, uint32_t *level)
{
	static const struct {
		const char *name;
		uint32_t level;
	} names[] = {
		{"DISABLE", 10}, {"CRIT", 20}, {"CRITICAL", 20}, {"ERROR", 30}, {"ERR", 30}, {"WARNING", 40},
		{"WARN", 40},	 {"INFO", 50}, {"INF", 50},	 {"DEBUG", 60}, {"DBG", 60}, {"TRACE", 70},
		{"TRC", 70},
	};
	char *end;
	unsigned long n;

	if (text == NULL || *text == '\0')
		return DOCA_ERROR_INVALID_VALUE;
	errno = 0;
	n = strtoul(text, &end, 10);
	if (*end == '\0' && errno == 0 && text[0] != '-') {
		if (n > DOCA_LOG_LEVEL_TRACE || !valid_level((uint32_t)n))
			return DOCA_ERROR_INVALID_VALUE;
		*level = (uint32_t)n;
		return DOCA_SUCCESS;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(text, names[i].name) == 0) {
			*level = names[i].level;
			return DOCA_SUCCESS;
		}
	}
	return DOCA_ERROR_INVALID_VALUE;
}

/* A level from the environment for the default backend; a bad one is said once and not used. */
static uint32_t env_level(const char *name, uint32_t fallback)
{
	const char *text = getenv(name);
	uint32_t level;

	if (text == NULL || *text == '\0')
		return fallback;
	if (sdpu_log_level_parse(text, &level) == DOCA_SUCCESS)
		return level;
	dprintf(STDERR_FILENO, "softdpu: $%s=\"%s\" is not a log level (%s, or their names); ignored\n", name, text,
		sdpu_log_level_names);
	return fallback;
}

/* Called with the lock held. */
static void default_init(void)
{
	if (default_ready)
		return;
	default_ready = true;
	default_backend.sink = SINK_FD;
	default_backend.fd = STDERR_FILENO;
	default_backend.app = true;
	default_backend.sdk = true;
	default_backend.lower = env_level("SOFTDPU_LOG_LEVEL", DOCA_LOG_LEVEL_INFO);
	default_backend.upper = global_upper;
	default_backend.clamp_lower = DOCA_LOG_LEVEL_TRACE;
	default_backend.clamp_upper = DOCA_LOG_LEVEL_DISABLE;
	default_backend.sdk_level = env_level("SOFTDPU_SDK_LOG_LEVEL", DOCA_LOG_LEVEL_WARNING);
}

static bool accepts(const struct doca_log_backend *b, uint32_t level, bool sdk)
{
	uint32_t lower = b->lower < b->clamp_lower ? b->lower : b->clamp_lower;
	uint32_t upper = b->upper > b->clamp_upper ? b->upper : b->clamp_upper;

	if (sdk)
		return b->sdk && level <= b->sdk_level;
	return b->app && level <= lower && level >= upper;
}

static void write_fd(int fd, const char *line, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, line, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		line += n;
		len -= (size_t)n;
	}
}

static int syslog_priority(uint32_t level)
{
	switch (level) {
	case DOCA_LOG_LEVEL_CRIT:
		return LOG_CRIT;
	case DOCA_LOG_LEVEL_ERROR:
		return LOG_ERR;
	case DOCA_LOG_LEVEL_WARNING:
		return LOG_WARNING;
	case DOCA_LOG_LEVEL_INFO:
		return LOG_INFO;
	default:
		return LOG_DEBUG;
	}
}

static void write_line(struct doca_log_backend *b, uint32_t level, const char *line, size_t len)
{
	switch (b->sink) {
	case SINK_FILE:
		fwrite(line, 1, len, b->file);
		fflush(b->file);
		break;
	case SINK_FD:
		write_fd(b->fd, line, len);
		break;
	case SINK_BUF:
		snprintf(b->buf, b->capacity, "%s", line);
		b->flush(b->buf);
		break;
	case SINK_SYSLOG:
		syslog(syslog_priority(level), "%.*s", (int)(len > 0 ? len - 1 : 0), line);
		break;
	}
}

static const char *level_tag(uint32_t level)
{
	static const char *const tags[] = {"CRIT", "ERR", "WARN", "INF", "DBG", "TRC"};

	return tags[level / 10 - 2];
}

/* The backends a line may reach: the program's, or the default until it created one. Lock held. */
static struct doca_log_backend *targets(void)
{
	default_init();
	return backends != NULL ? backends : &default_backend;
}

/*
 * Writes one line to every backend that takes it. `source` names an SDK line's source; an application
 * line's is looked up under the same lock (an unknown or unregistered one: INVALID_VALUE).
 */
static doca_error_t emit(uint32_t level, bool sdk, const char *source, int app_source, const char *format, va_list args)
{
	char stack[1024];
	char *line = stack;
	struct timespec now;
	struct tm tm;
	int head, body;
	bool wanted = false;
	doca_error_t result = DOCA_SUCCESS;

	if (!valid_level(level) || level == DOCA_LOG_LEVEL_DISABLE)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (!sdk)
		source = app_source >= 0 && app_source < nsources ? sources[app_source] : NULL;
	if (source == NULL) {
		result = DOCA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (struct doca_log_backend *b = targets(); b != NULL; b = b->next)
		wanted = wanted || accepts(b, level, sdk);
	if (!wanted)
		goto out;
	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	head = snprintf(stack, sizeof(stack), "[%02d:%02d:%02d:%03ld][%d][%s][%s][%.128s] ", tm.tm_hour, tm.tm_min, tm.tm_sec,
			now.tv_nsec / 1000000, (int)getpid(), sdk ? "DOCA" : "APP", level_tag(level), source);
	{
		va_list copy;

		va_copy(copy, args);
		body = vsnprintf(stack + head, sizeof(stack) - (size_t)head - 1, format, copy);
		va_end(copy);
	}
	if (body < 0)
		goto out;
	if ((size_t)head + (size_t)body + 2 > sizeof(stack)) {
		line = malloc((size_t)head + (size_t)body + 2);
		if (line != NULL) {
			memcpy(line, stack, (size_t)head);
			vsnprintf(line + head, (size_t)body + 1, format, args);
		} else {
			/* Out of memory: the truncated line in the stack buffer is better than none. */
			line = stack;
			body = (int)sizeof(stack) - head - 2;
		}
	}
	line[head + body] = '\n';
	line[head + body + 1] = '\0';
	for (struct doca_log_backend *b = targets(); b != NULL; b = b->next) {
		if (accepts(b, level, sdk))
			write_line(b, level, line, (size_t)head + (size_t)body + 1);
	}
	if (line != stack)
		free(line);
out:
	pthread_mutex_unlock(&lock);
	return result;
}

void sdpu_log_sdk(uint32_t level, const char *source, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	emit(level, true, source, -1, format, args);
	va_end(args);
}

doca_error_t doca_log(uint32_t level, int source, const char *fname, int line, const char *func, const char *format, ...)
{
	doca_error_t result;
	va_list args;

	(void)fname;
	(void)line;
	(void)func;
	if (format == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	va_start(args, format);
	result = emit(level, false, NULL, source, format, args);
	va_end(args);
	return result;
}

doca_error_t doca_log_register_source(const char *source_name, int *source)
{
	char **grown;
	char *copy;

	if (source_name == NULL || source == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	copy = strdup(source_name);
	if (copy == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutex_lock(&lock);
	grown = realloc(sources, sizeof(*sources) * (size_t)(nsources + 1));
	if (grown == NULL) {
		pthread_mutex_unlock(&lock);
		free(copy);
		return DOCA_ERROR_NO_MEMORY;
	}
	sources = grown;
	sources[nsources] = copy;
	*source = nsources++;
	pthread_mutex_unlock(&lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_unregister_source(int source)
{
	doca_error_t result = DOCA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&lock);
	if (source >= 0 && source < nsources && sources[source] != NULL) {
		free(sources[source]);
		sources[source] = NULL;
		result = DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	return result;
}

/* A new backend with the global limits, appended to the program's list. */
static doca_error_t add_backend(struct doca_log_backend *init, struct doca_log_backend **out)
{
	struct doca_log_backend *b = malloc(sizeof(*b));

	if (b == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*b = *init;
	b->next = NULL;
	if (b->clamp_lower == 0)
		b->clamp_lower = DOCA_LOG_LEVEL_TRACE;
	if (b->clamp_upper == 0)
		b->clamp_upper = DOCA_LOG_LEVEL_DISABLE;
	pthread_mutex_lock(&lock);
	b->lower = global_lower;
	b->upper = global_upper;
	b->sdk_level = global_sdk;
	*backends_tail = b;
	backends_tail = &b->next;
	pthread_mutex_unlock(&lock);
	if (out != NULL)
		*out = b;
	return DOCA_SUCCESS;
}

static doca_error_t create_file(FILE *fptr, bool sdk, struct doca_log_backend **backend)
{
	if (fptr == NULL || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return add_backend(&(struct doca_log_backend){.sink = SINK_FILE, .app = !sdk, .sdk = sdk, .file = fptr},
			   backend);
}

static doca_error_t create_fd(int fd, bool sdk, struct doca_log_backend **backend)
{
	if (fd < 0 || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return add_backend(&(struct doca_log_backend){.sink = SINK_FD, .app = !sdk, .sdk = sdk, .fd = fd}, backend);
}

static doca_error_t create_buf(char *buf, size_t capacity, log_flush_callback handler, bool sdk,
			       struct doca_log_backend **backend)
{
	if (buf == NULL || capacity == 0 || handler == NULL || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return add_backend(&(struct doca_log_backend){.sink = SINK_BUF, .app = !sdk, .sdk = sdk, .buf = buf,
						      .capacity = capacity, .flush = handler},
			   backend);
}

static doca_error_t create_syslog(const char *name, bool sdk, struct doca_log_backend **backend)
{
	char *copy;
	doca_error_t result;

	if (name == NULL || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	copy = strdup(name);
	if (copy == NULL)
		return DOCA_ERROR_NO_MEMORY;
	/* syslog has one identity per process: the first backend's name. */
	openlog(copy, LOG_PID, LOG_USER);
	result = add_backend(
		&(struct doca_log_backend){.sink = SINK_SYSLOG, .app = !sdk, .sdk = sdk, .syslog_name = copy}, backend);
	if (result != DOCA_SUCCESS)
		free(copy);
	return result;
}

doca_error_t doca_log_backend_create_with_file(FILE *fptr, struct doca_log_backend **backend)
{
	return create_file(fptr, false, backend);
}

doca_error_t doca_log_backend_create_with_file_sdk(FILE *fptr, struct doca_log_backend **backend)
{
	return create_file(fptr, true, backend);
}

doca_error_t doca_log_backend_create_with_fd(int fd, struct doca_log_backend **backend)
{
	return create_fd(fd, false, backend);
}

doca_error_t doca_log_backend_create_with_fd_sdk(int fd, struct doca_log_backend **backend)
{
	return create_fd(fd, true, backend);
}

doca_error_t doca_log_backend_create_with_buf(char *buf, size_t capacity, log_flush_callback handler,
					      struct doca_log_backend **backend)
{
	return create_buf(buf, capacity, handler, false, backend);
}

doca_error_t doca_log_backend_create_with_buf_sdk(char *buf, size_t capacity, log_flush_callback handler,
						  struct doca_log_backend **backend)
{
	return create_buf(buf, capacity, handler, true, backend);
}

doca_error_t doca_log_backend_create_with_syslog(const char *name, struct doca_log_backend **backend)
{
	return create_syslog(name, false, backend);
}

doca_error_t doca_log_backend_create_with_syslog_sdk(const char *name, struct doca_log_backend **backend)
{
	return create_syslog(name, true, backend);
}

doca_error_t doca_log_backend_create_standard(void)
{
	doca_error_t result;
	bool created;

	pthread_mutex_lock(&lock);
	created = standard_created;
	standard_created = true;
	pthread_mutex_unlock(&lock);
	if (created)
		return DOCA_SUCCESS;
	result = add_backend(&(struct doca_log_backend){.sink = SINK_FD, .app = true, .fd = STDOUT_FILENO,
							.clamp_upper = DOCA_LOG_LEVEL_INFO},
			     NULL);
	if (result != DOCA_SUCCESS)
		return result;
	return add_backend(&(struct doca_log_backend){.sink = SINK_FD, .app = true, .fd = STDERR_FILENO,
						      .clamp_lower = DOCA_LOG_LEVEL_WARNING},
			   NULL);
}

/* Strict limits move only towards more verbose (lower) or more severe (upper). Lock held. */
static bool set_lower(struct doca_log_backend *b, uint32_t level)
{
	if (b->lower_strict && level < b->lower)
		return false;
	b->lower = level;
	return true;
}

static bool set_upper(struct doca_log_backend *b, uint32_t level)
{
	if (b->upper_strict && level > b->upper)
		return false;
	b->upper = level;
	return true;
}

/* Applies `set` to one backend, or (backend NULL) to every application backend and the global limit. */
static doca_error_t set_limit(struct doca_log_backend *backend, uint32_t level, bool (*set)(struct doca_log_backend *, uint32_t),
			      uint32_t *global)
{
	doca_error_t result = DOCA_SUCCESS;

	if (!valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	default_init();
	if (backend != NULL) {
		if (!backend->app)
			result = DOCA_ERROR_INVALID_VALUE;
		else if (!set(backend, level))
			result = DOCA_ERROR_NOT_PERMITTED;
	} else {
		*global = level;
		set(&default_backend, level);
		for (struct doca_log_backend *b = backends; b != NULL; b = b->next) {
			if (b->app)
				set(b, level);
		}
	}
	pthread_mutex_unlock(&lock);
	return result;
}

doca_error_t doca_log_backend_set_level_lower_limit(struct doca_log_backend *backend, uint32_t level)
{
	if (backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return set_limit(backend, level, set_lower, NULL);
}

doca_error_t doca_log_backend_set_level_upper_limit(struct doca_log_backend *backend, uint32_t upper_limit)
{
	if (backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return set_limit(backend, upper_limit, set_upper, NULL);
}

doca_error_t doca_log_level_set_global_lower_limit(uint32_t level)
{
	return set_limit(NULL, level, set_lower, &global_lower);
}

doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit)
{
	return set_limit(NULL, upper_limit, set_upper, &global_upper);
}

static doca_error_t set_strict(struct doca_log_backend *backend, bool lower)
{
	if (backend == NULL || !backend->app)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (lower)
		backend->lower_strict = true;
	else
		backend->upper_strict = true;
	pthread_mutex_unlock(&lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_log_backend *backend)
{
	return set_strict(backend, true);
}

doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_log_backend *backend)
{
	return set_strict(backend, false);
}

static uint32_t get_global(const uint32_t *global)
{
	uint32_t level;

	pthread_mutex_lock(&lock);
	level = *global;
	pthread_mutex_unlock(&lock);
	return level;
}

uint32_t doca_log_level_get_global_lower_limit(void)
{
	return get_global(&global_lower);
}

uint32_t doca_log_level_get_global_upper_limit(void)
{
	return get_global(&global_upper);
}

uint32_t doca_log_level_get_global_sdk_limit(void)
{
	return get_global(&global_sdk);
}

doca_error_t doca_log_backend_set_sdk_level(struct doca_log_backend *backend, uint32_t level)
{
	if (backend == NULL || !backend->sdk || !valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	backend->sdk_level = level;
	pthread_mutex_unlock(&lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level)
{
	if (!valid_level(level))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	default_init();
	global_sdk = level;
	default_backend.sdk_level = level;
	for (struct doca_log_backend *b = backends; b != NULL; b = b->next) {
		if (b->sdk)
			b->sdk_level = level;
	}
	pthread_mutex_unlock(&lock);
	return DOCA_SUCCESS;
}
