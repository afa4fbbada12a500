/* SPDX-License-Identifier: Apache-2.0 */
/* core/json.h: a recursive-descent JSON reader with comments, bounded in depth and checked everywhere. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

#define MAX_DEPTH 32

struct parser {
	const char *p;
	const char *end;
	int line;
	char *error;
	size_t error_len;
	bool failed;
};

static bool fail(struct parser *ps, const char *format, ...) __attribute__((format(printf, 2, 3)));

static bool fail(struct parser *ps, const char *format, ...)
{
	va_list args;
	int n;

	if (ps->failed)
		return false;
	ps->failed = true;
	n = snprintf(ps->error, ps->error_len, "line %d: ", ps->line);
	if (n >= 0 && (size_t)n < ps->error_len) {
		va_start(args, format);
		vsnprintf(ps->error + n, ps->error_len - (size_t)n, format, args);
		va_end(args);
	}
	return false;
}

/* Whitespace and comments; false on an unterminated block comment. */
static bool skip_space(struct parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;

		if (c == '\n') {
			ps->line++;
			ps->p++;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			ps->p++;
		} else if (c == '/' && ps->end - ps->p >= 2 && ps->p[1] == '/') {
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
		} else if (c == '/' && ps->end - ps->p >= 2 && ps->p[1] == '*') {
			int start = ps->line;

			ps->p += 2;
			while (ps->p < ps->end && !(ps->end - ps->p >= 2 && ps->p[0] == '*' && ps->p[1] == '/')) {
				if (*ps->p == '\n')
					ps->line++;
				ps->p++;
			}
			if (ps->p >= ps->end) {
				ps->line = start;
				return fail(ps, "a comment that never ends");
			}
			ps->p += 2;
		} else {
			break;
		}
	}
	return true;
}

int sdpu_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool read_hex4(struct parser *ps, uint32_t *out)
{
	uint32_t v = 0;

	if (ps->end - ps->p < 4)
		return fail(ps, "a \\u escape needs four hex digits");
	for (int i = 0; i < 4; i++) {
		int d = sdpu_hex_digit(ps->p[i]);

		if (d < 0)
			return fail(ps, "a \\u escape needs four hex digits");
		v = v << 4 | (uint32_t)d;
	}
	ps->p += 4;
	*out = v;
	return true;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string at ps->p (on its opening quote), into a new NUL-terminated buffer. */
static bool read_string(struct parser *ps, char **out)
{
	/* The decoded text is never longer than the source (an escape of 6 bytes gives at most 3, a pair of 12 gives 4). */
	const char *start = ++ps->p;
	char *buf, *w;

	while (ps->p < ps->end && *ps->p != '"') {
		if (*ps->p == '\\')
			ps->p++;
		else if (*ps->p == '\n')
			return fail(ps, "a string that never ends");
		ps->p++;
	}
	if (ps->p >= ps->end)
		return fail(ps, "a string that never ends");
	buf = malloc((size_t)(ps->p - start) + 1);
	if (buf == NULL)
		return fail(ps, "out of memory");
	ps->p = start;
	w = buf;
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p++;
		uint32_t cp, low;

		if (c < 0x20) {
			free(buf);
			return fail(ps, "a control character in a string");
		}
		if (c != '\\') {
			*w++ = (char)c;
			continue;
		}
		c = (unsigned char)*ps->p++;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*w++ = (char)c;
			break;
		case 'b':
			*w++ = '\b';
			break;
		case 'f':
			*w++ = '\f';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 'r':
			*w++ = '\r';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'u':
			if (!read_hex4(ps, &cp))
				goto bad;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u') {
					fail(ps, "half of a UTF-16 surrogate pair");
					goto bad;
				}
				ps->p += 2;
				if (!read_hex4(ps, &low))
					goto bad;
				if (low < 0xDC00 || low > 0xDFFF) {
					fail(ps, "half of a UTF-16 surrogate pair");
					goto bad;
				}
				cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
			} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
				fail(ps, "half of a UTF-16 surrogate pair");
				goto bad;
			}
			if (cp == 0) {
				fail(ps, "a NUL character in a string");
				goto bad;
			}
			w += put_utf8(w, cp);
			break;
		default:
			fail(ps, "an unknown escape \\%c", c);
			goto bad;
		}
	}
	ps->p++;
	*w = '\0';
	*out = buf;
	return true;
bad:
	free(buf);
	return false;
}

static bool read_number(struct parser *ps, struct sdpu_json *v)
{
	const char *start = ps->p;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return fail(ps, "a number without digits");
	if (*ps->p == '0' && ps->end - ps->p > 1 && ps->p[1] >= '0' && ps->p[1] <= '9')
		return fail(ps, "a number with a leading zero");
	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
			return fail(ps, "a number without digits after its point");
		while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
			return fail(ps, "a number without digits in its exponent");
		while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
			ps->p++;
	}
	v->type = SDPU_JSON_NUMBER;
	v->text = strndup(start, (size_t)(ps->p - start));
	return v->text != NULL || fail(ps, "out of memory");
}

static bool read_value(struct parser *ps, struct sdpu_json *v, int depth);

static bool literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return false;
	ps->p += n;
	return true;
}

/* An array or object body, after its opening bracket; `close` is ']' or '}'. */
static bool read_container(struct parser *ps, struct sdpu_json *v, int depth, char close)
{
	bool object = close == '}';
	size_t cap = 0;

	v->type = object ? SDPU_JSON_OBJECT : SDPU_JSON_ARRAY;
	ps->p++;
	if (depth >= MAX_DEPTH)
		return fail(ps, "nested more than %d deep", MAX_DEPTH);
	if (!skip_space(ps))
		return false;
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;

		if (object) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a member's name in quotes");
			if (!read_string(ps, &key))
				return false;
			if (!skip_space(ps) || ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return fail(ps, "expected ':' after a member's name");
			}
			ps->p++;
		}
		if (v->count == cap) {
			size_t grown = cap == 0 ? 8 : cap * 2;
			struct sdpu_json *items = realloc(v->items, grown * sizeof(*items));
			char **keys = object ? realloc(v->keys, grown * sizeof(*keys)) : NULL;

			if (items != NULL)
				v->items = items;
			if (keys != NULL)
				v->keys = keys;
			if (items == NULL || (object && keys == NULL)) {
				free(key);
				return fail(ps, "out of memory");
			}
			cap = grown;
		}
		memset(&v->items[v->count], 0, sizeof(v->items[0]));
		if (object)
			v->keys[v->count] = key;
		v->count++;
		if (!read_value(ps, &v->items[v->count - 1], depth + 1))
			return false;
		if (!skip_space(ps))
			return false;
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			if (!skip_space(ps))
				return false;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return true;
		}
		return fail(ps, "expected ',' or '%c'", close);
	}
}

static bool read_value(struct parser *ps, struct sdpu_json *v, int depth)
{
	if (!skip_space(ps))
		return false;
	v->line = ps->line;
	if (ps->p >= ps->end)
		return fail(ps, "the file ends where a value belongs");
	switch (*ps->p) {
	case '{':
		return read_container(ps, v, depth, '}');
	case '[':
		return read_container(ps, v, depth, ']');
	case '"':
		v->type = SDPU_JSON_STRING;
		return read_string(ps, &v->text);
	default:
		break;
	}
	if (literal(ps, "true") || literal(ps, "false")) {
		v->type = SDPU_JSON_BOOL;
		v->boolean = ps->p[-4] == 't';
		return true;
	}
	if (literal(ps, "null")) {
		v->type = SDPU_JSON_NULL;
		return true;
	}
	if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
		return read_number(ps, v);
	return fail(ps, "unexpected '%c'", *ps->p);
}

static void free_inner(struct sdpu_json *v)
{
	free(v->text);
	for (size_t i = 0; i < v->count; i++) {
		free_inner(&v->items[i]);
		if (v->keys != NULL)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
}

void sdpu_json_free(struct sdpu_json *value)
{
	if (value == NULL)
		return;
	free_inner(value);
	free(value);
}

bool sdpu_json_parse(const char *text, size_t len, struct sdpu_json **out, char *error, size_t error_len)
{
	struct parser ps = {.p = text, .end = text + len, .line = 1, .error = error, .error_len = error_len};
	struct sdpu_json *root = calloc(1, sizeof(*root));

	if (root == NULL) {
		snprintf(error, error_len, "out of memory");
		return false;
	}
	if (memchr(text, '\0', len) != NULL)
		fail(&ps, "a NUL byte in the file");
	else if (read_value(&ps, root, 0) && skip_space(&ps) && ps.p < ps.end)
		fail(&ps, "more after the end of the value");
	if (ps.failed) {
		sdpu_json_free(root);
		return false;
	}
	*out = root;
	return true;
}

const char *sdpu_json_type_name(enum sdpu_json_type type)
{
	static const char *const names[] = {"null", "true or false", "a number", "a string", "an array", "an object"};

	return names[type];
}
