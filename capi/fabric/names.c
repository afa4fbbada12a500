/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/names.h: entry names (src/fabric/names.ts's ENTRY) and the start position of new rings. */
#include "fabric/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_error.h>
#include <doca_log.h>

#include "core/internal.h"
#include "fabric/liveness.h"

static bool kind_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (!first && ((c >= '0' && c <= '9') || c == '-'));
}

static bool tag_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Decimal digits at *p up to `stop`; advances *p. */
static bool number(const char **p, char stop, uint64_t *value, bool *overflow)
{
	const char *s = *p;

	*value = 0;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (*value > (UINT64_MAX - 9) / 10)
			*overflow = true;
		else
			*value = *value * 10 + (uint64_t)(*s - '0');
	}
	if (*s != stop)
		return false;
	*p = s + 1;
	return true;
}

bool sdpu_entry_parse(const char *name, struct sdpu_entry *out)
{
	const char *p = name;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	while (kind_char(*p, n == 0) && n < 16)
		out->kind[n++] = *p++;
	if (n == 0 || *p++ != '.')
		return false;
	if (!number(&p, '-', &out->pid, &out->overflow) || !number(&p, '.', &out->start, &out->overflow))
		return false;
	for (n = 0; tag_char(*p) && n < 40; n++)
		out->tag[n] = *p++;
	if (n == 0)
		return false;
	if (*p == '\0')
		return true;
	out->socket = strcmp(p, ".sock") == 0;
	return out->socket;
}

doca_error_t sdpu_socket_path(const char *dir, const char *kind, const char *tag, char *out, size_t size)
{
	struct sdpu_identity self = sdpu_self();
	int n = snprintf(out, size, "%s/%s.%u-%llu.%s.sock", dir, kind, self.pid, (unsigned long long)self.start, tag);

	if (n < 0 || (size_t)n >= size || n > SDPU_MAX_SOCKET_PATH) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "fabric",
			     "socket path %s/%s.%u-%llu.%s.sock is longer than %d bytes; use a shorter fabric directory", dir,
			     kind, self.pid, (unsigned long long)self.start, tag, SDPU_MAX_SOCKET_PATH);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

bool sdpu_start_position(uint32_t *position)
{
	const char *text = getenv("SOFTDPU_START_POSITION");
	char *end;
	unsigned long long value;

	*position = 0;
	if (text == NULL || *text == '\0')
		return true;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno != 0 || *end != '\0' || text[0] == '-' || text[0] == '+' || text[0] == ' ' || value >= (1ULL << 32)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "fabric", "SOFTDPU_START_POSITION \"%s\" is not an integer in [0, 2^32)",
			     text);
		return false;
	}
	*position = (uint32_t)value;
	return true;
}
