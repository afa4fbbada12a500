/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small JSON reader for doca_argp's flags files (-j/--json) and topology files ($SOFTDPU_TOPOLOGY).
 * DOCA's own flags files carry C comments (a licence block, a line naming each flag), so // and block
 * comments are skipped like whitespace. Nesting is bounded and every error names its line.
 */
#ifndef SOFTDPU_CAPI_JSON_H_
#define SOFTDPU_CAPI_JSON_H_

#include <stdbool.h>
#include <stddef.h>

enum sdpu_json_type { SDPU_JSON_NULL, SDPU_JSON_BOOL, SDPU_JSON_NUMBER, SDPU_JSON_STRING, SDPU_JSON_ARRAY, SDPU_JSON_OBJECT };

struct sdpu_json {
	enum sdpu_json_type type;
	int line;
	bool boolean;
	/* A string's value (UTF-8, NUL-terminated, without embedded NULs) or a number's text as written. */
	char *text;
	/* An array's items, or an object's members (keys[i] names items[i]), in the file's order. */
	size_t count;
	struct sdpu_json *items;
	char **keys;
};

/*
 * Parses `len` bytes of `text` into *out (freed with sdpu_json_free). On failure returns false and
 * writes what is wrong, with its line, to `error`.
 */
bool sdpu_json_parse(const char *text, size_t len, struct sdpu_json **out, char *error, size_t error_len);

void sdpu_json_free(struct sdpu_json *value);

/* "a string", "a number", ... for messages. */
const char *sdpu_json_type_name(enum sdpu_json_type type);

/* The value of one hex digit (either case), or -1: what JSON's \u escapes and PCI addresses are written in. */
int sdpu_hex_digit(char c);

#endif /* SOFTDPU_CAPI_JSON_H_ */
