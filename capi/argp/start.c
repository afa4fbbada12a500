/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_argp_start: reads the command line and the JSON flags file, then calls the flags' callbacks.
 *
 * Nothing is called until everything was read and checked: a wrong command line (an unknown flag, a
 * missing or unexpected value, a value of the wrong type, a flag given twice, a missing mandatory flag)
 * or a value a callback refuses from the command line is a usage error: one line naming it, the usage on
 * stderr, exit code 2, as DOCA's guide says argp exits and as every softdpu command does. -h/--help
 * (which wins over any error) prints the usage on stdout and -v/--version the version (the program's
 * callback, else softdpu's line), then the program exits with 0. A JSON file that cannot be read or
 * says something wrong, and a refusal of its values, is an error doca_argp_start returns (IO_FAILED,
 * INVALID_VALUE or the callback's), after one line that names the file, its line and the flag.
 *
 * The JSON file holds DOCA's sections "doca_general_flags" and "doca_program_flags" (or long names at
 * its top level, as the TypeScript samples accept); a flag on the command line wins over the file.
 * The general flags are applied first (-l sets the global lower limit of the application logs,
 * --sdk-log-level that of the SDK logs), then the program's callbacks run in the file's order and
 * then the command line's; last, the validation callback.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "core/json.h"
#include "argp/state.h"
#include "core/internal.h"

/* The largest JSON flags file read. */
#define MAX_JSON_BYTES (16u << 20)

/* One value of one flag, from the command line or the file. */
struct occurrence {
	struct doca_argp_param *param;
	/* As the user wrote it: "--pci-addr" or "file.json line 4: pci-addr". */
	char where[192];
	bool from_json;
	/* The value's text (NULL for a boolean given on the command line), or the JSON value. */
	const char *text;
	const struct sdpu_json *json;
	char *string;
	int integer;
	bool boolean;
};

struct run {
	struct occurrence *items;
	size_t count;
	size_t cap;
	struct sdpu_json *json;
	bool help;
	bool version;
};

static _Noreturn void usage_error(struct run *run, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void free_run(struct run *run)
{
	for (size_t i = 0; i < run->count; i++)
		free(run->items[i].string);
	free(run->items);
	sdpu_json_free(run->json);
}

static _Noreturn void finish(struct run *run, int code)
{
	free_run(run);
	argp_release();
	fflush(stdout);
	exit(code);
}

static _Noreturn void usage_error(struct run *run, const char *format, ...)
{
	char message[512];
	va_list args;

	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	argp_say(DOCA_LOG_LEVEL_ERROR, "%s", message);
	fputc('\n', stderr);
	argp_print_usage(stderr);
	finish(run, 2);
}

static struct occurrence *add(struct run *run, struct doca_argp_param *param)
{
	if (run->count == run->cap) {
		size_t cap = run->cap == 0 ? 16 : run->cap * 2;
		struct occurrence *items = realloc(run->items, cap * sizeof(*items));

		if (items == NULL)
			return NULL;
		run->items = items;
		run->cap = cap;
	}
	memset(&run->items[run->count], 0, sizeof(run->items[0]));
	run->items[run->count].param = param;
	return &run->items[run->count++];
}

static struct doca_argp_param *find(const char *name, size_t len, bool long_name)
{
	for (struct doca_argp_param *p = argp.registered; p != NULL; p = p->next_registered) {
		const char *n = long_name ? p->long_name : p->short_name;

		if (n != NULL && strlen(n) == len && strncmp(n, name, len) == 0)
			return p;
	}
	return NULL;
}

static size_t times_given(const struct run *run, const struct doca_argp_param *p, bool from_json)
{
	size_t n = 0;

	for (size_t i = 0; i < run->count; i++)
		n += run->items[i].param == p && run->items[i].from_json == from_json;
	return n;
}

static doca_error_t out_of_memory(void)
{
	argp_say(DOCA_LOG_LEVEL_ERROR, "doca_argp_start: out of memory");
	return DOCA_ERROR_NO_MEMORY;
}

/* The command line, into run->items; a usage error does not return. */
static doca_error_t read_command_line(struct run *run, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *token = argv[i];
		bool long_name = strncmp(token, "--", 2) == 0;
		const char *name = token + (long_name ? 2 : 1);
		const char *equals = strchr(name, '=');
		size_t len = equals != NULL ? (size_t)(equals - name) : strlen(name);
		struct doca_argp_param *p;
		struct occurrence *o;

		if (token[0] != '-' || token[1] == '\0' || (long_name && len == 0))
			usage_error(run, "unexpected argument \"%s\" (every value follows its flag)", token);
		p = find(name, len, long_name);
		if (p == NULL)
			usage_error(run, "unknown flag %.*s", (int)(name - token + len), token);
		if (!p->multiplicity && times_given(run, p, false) > 0)
			usage_error(run, "%.*s is given more than once", (int)(name - token + len), token);
		o = add(run, p);
		if (o == NULL)
			return out_of_memory();
		snprintf(o->where, sizeof(o->where), "%.*s", (int)(name - token + len), token);
		if (p->type == DOCA_ARGP_TYPE_BOOLEAN) {
			if (equals != NULL)
				usage_error(run, "%s takes no value (got \"%s\")", o->where, equals + 1);
		} else if (equals != NULL) {
			o->text = equals + 1;
		} else if (i + 1 < argc && !(argv[i + 1][0] == '-' && argv[i + 1][1] != '\0')) {
			o->text = argv[++i];
		} else if (i + 1 < argc) {
			usage_error(run, "%s needs a value (got \"%s\"? write %s=%s)", o->where, argv[i + 1], o->where,
				    argv[i + 1]);
		} else {
			usage_error(run, "%s needs a value", o->where);
		}
		run->help = run->help || p->general == GENERAL_HELP;
		run->version = run->version || p->general == GENERAL_VERSION;
	}
	return DOCA_SUCCESS;
}

static doca_error_t json_error(const char *path, int line, const char *format, ...) __attribute__((format(printf, 3, 4)));

static doca_error_t json_error(const char *path, int line, const char *format, ...)
{
	char message[512];
	va_list args;

	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	argp_say(DOCA_LOG_LEVEL_ERROR, "JSON flags file %s line %d: %s", path, line, message);
	return DOCA_ERROR_INVALID_VALUE;
}

/* One member of the file: the flag named `key` with `value` (an array for a repeatable flag). */
static doca_error_t json_flag(struct run *run, const char *path, const char *key, const struct sdpu_json *value)
{
	struct doca_argp_param *p = find(key, strlen(key), true);
	size_t n = value->type == SDPU_JSON_ARRAY ? value->count : 1;

	if (p == NULL)
		return json_error(path, value->line, "unknown flag \"%s\"", key);
	if (p->cli_only)
		return json_error(path, value->line, "\"%s\" is for the command line only", key);
	if (times_given(run, p, true) > 0)
		return json_error(path, value->line, "\"%s\" is given more than once", key);
	if (value->type == SDPU_JSON_ARRAY && !p->multiplicity)
		return json_error(path, value->line, "\"%s\" is an array, and the flag takes one value", key);
	/* The command line wins: its values replace the file's. */
	if (times_given(run, p, false) > 0)
		return DOCA_SUCCESS;
	for (size_t i = 0; i < n; i++) {
		const struct sdpu_json *v = value->type == SDPU_JSON_ARRAY ? &value->items[i] : value;
		struct occurrence *o = add(run, p);

		if (o == NULL)
			return out_of_memory();
		o->from_json = true;
		o->json = v;
		snprintf(o->where, sizeof(o->where), "JSON flags file %s line %d: \"%s\"", path, v->line, key);
	}
	return DOCA_SUCCESS;
}

static doca_error_t read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (f == NULL || buf == NULL) {
		if (f != NULL)
			fclose(f);
		free(buf);
		argp_say(DOCA_LOG_LEVEL_ERROR, "cannot read the JSON flags file %s: %s", path, strerror(errno));
		return DOCA_ERROR_IO_FAILED;
	}
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			char *grown = cap >= MAX_JSON_BYTES ? NULL : realloc(buf, cap * 2);

			if (grown == NULL) {
				fclose(f);
				free(buf);
				argp_say(DOCA_LOG_LEVEL_ERROR, "the JSON flags file %s is larger than %u bytes", path,
					 MAX_JSON_BYTES);
				return DOCA_ERROR_IO_FAILED;
			}
			buf = grown;
			cap *= 2;
		}
	}
	if (ferror(f)) {
		fclose(f);
		free(buf);
		argp_say(DOCA_LOG_LEVEL_ERROR, "cannot read the JSON flags file %s", path);
		return DOCA_ERROR_IO_FAILED;
	}
	fclose(f);
	*text = buf;
	*len = n;
	return DOCA_SUCCESS;
}

static doca_error_t read_json(struct run *run, const char *path)
{
	char error[256];
	char *text;
	size_t len;
	doca_error_t result = read_file(path, &text, &len);

	if (result != DOCA_SUCCESS)
		return result;
	if (!sdpu_json_parse(text, len, &run->json, error, sizeof(error))) {
		free(text);
		argp_say(DOCA_LOG_LEVEL_ERROR, "JSON flags file %s is not JSON: %s", path, error);
		return DOCA_ERROR_INVALID_VALUE;
	}
	free(text);
	if (run->json->type != SDPU_JSON_OBJECT)
		return json_error(path, run->json->line, "the file holds %s, not an object",
				  sdpu_json_type_name(run->json->type));
	for (size_t i = 0; i < run->json->count && result == DOCA_SUCCESS; i++) {
		const char *key = run->json->keys[i];
		const struct sdpu_json *value = &run->json->items[i];

		if (strncmp(key, "doca_", 5) != 0) {
			result = json_flag(run, path, key, value);
			continue;
		}
		if (strcmp(key, "doca_general_flags") != 0 && strcmp(key, "doca_program_flags") != 0)
			return json_error(path, value->line, "unknown section \"%s\" (doca_general_flags, doca_program_flags)",
					  key);
		if (value->type != SDPU_JSON_OBJECT)
			return json_error(path, value->line, "\"%s\" is %s, not an object", key,
					  sdpu_json_type_name(value->type));
		for (size_t j = 0; j < value->count && result == DOCA_SUCCESS; j++)
			result = json_flag(run, path, value->keys[j], &value->items[j]);
	}
	return result;
}

/* A problem with a value: a usage error on the command line, an error returned from the file. */
static doca_error_t bad_value(struct run *run, const struct occurrence *o, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static doca_error_t bad_value(struct run *run, const struct occurrence *o, const char *format, ...)
{
	char message[384];
	va_list args;

	va_start(args, format);
	vsnprintf(message, sizeof(message), format, args);
	va_end(args);
	if (!o->from_json)
		usage_error(run, "%s %s", o->where, message);
	argp_say(DOCA_LOG_LEVEL_ERROR, "%s %s", o->where, message);
	return DOCA_ERROR_INVALID_VALUE;
}

static bool parse_int(const char *text, int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(text, &end, 10);
	if (text[0] == '\0' || *end != '\0' || errno != 0 || n < INT_MIN || n > INT_MAX)
		return false;
	*out = (int)n;
	return true;
}

/* The occurrence's value as its flag's type wants it. */
static doca_error_t convert(struct run *run, struct occurrence *o)
{
	const struct sdpu_json *v = o->json;
	const char *text = o->text;

	if (v != NULL) {
		if (o->param->type == DOCA_ARGP_TYPE_BOOLEAN && v->type == SDPU_JSON_BOOL) {
			o->boolean = v->boolean;
			return DOCA_SUCCESS;
		}
		if (v->type != SDPU_JSON_STRING && v->type != SDPU_JSON_NUMBER)
			return bad_value(run, o, "is %s, not %s", sdpu_json_type_name(v->type),
					 o->param->type == DOCA_ARGP_TYPE_BOOLEAN ? "true or false" : "a string or a number");
		text = v->text;
	}
	switch (o->param->type) {
	case DOCA_ARGP_TYPE_BOOLEAN:
		if (text == NULL || strcmp(text, "true") == 0)
			o->boolean = true;
		else if (strcmp(text, "false") == 0)
			o->boolean = false;
		else
			return bad_value(run, o, "is \"%s\", not true or false", text);
		return DOCA_SUCCESS;
	case DOCA_ARGP_TYPE_INT:
		if (!parse_int(text, &o->integer))
			return bad_value(run, o, "\"%s\" is not an integer", text);
		return DOCA_SUCCESS;
	default:
		o->string = strdup(text);
		return o->string != NULL ? DOCA_SUCCESS : out_of_memory();
	}
}

static doca_error_t apply_general(struct run *run, struct occurrence *o)
{
	uint32_t level;
	doca_error_t result;

	if (sdpu_log_level_parse(o->string, &level) != DOCA_SUCCESS)
		return bad_value(run, o, "\"%s\" is not a log level (%s, or their names)", o->string,
				 sdpu_log_level_names);
	if (o->param->general == GENERAL_LOG_LEVEL) {
		argp.log_level = (int)level;
		result = doca_log_level_set_global_lower_limit(level);
	} else {
		argp.sdk_log_level = (int)level;
		result = doca_log_level_set_global_sdk_limit(level);
	}
	return result;
}

static doca_error_t call(struct run *run, struct occurrence *o)
{
	void *value = o->param->type == DOCA_ARGP_TYPE_INT ? (void *)&o->integer
		      : o->param->type == DOCA_ARGP_TYPE_BOOLEAN ? (void *)&o->boolean
								  : (void *)o->string;
	doca_error_t result = o->param->callback(value, argp.config);

	if (result == DOCA_SUCCESS)
		return DOCA_SUCCESS;
	if (!o->from_json)
		usage_error(run, "%s: the program refused the value (%s)", o->where, doca_error_get_name(result));
	argp_say(DOCA_LOG_LEVEL_ERROR, "%s: the program refused the value (%s)", o->where, doca_error_get_name(result));
	return result;
}

static _Noreturn void version(struct run *run)
{
	doca_error_t result = DOCA_SUCCESS;

	if (argp.version_cb != NULL)
		result = argp.version_cb(NULL, argp.config);
	else
		printf("softdpu %s (DOCA 3.0 API)\n", SOFTDPU_VERSION);
	finish(run, result == DOCA_SUCCESS ? 0 : 1);
}

static doca_error_t check_and_call(struct run *run)
{
	const struct doca_argp_param *singular = NULL;
	size_t program_flags = 0;
	doca_error_t result = DOCA_SUCCESS;
	char name[160];

	for (const struct doca_argp_param *p = argp.registered; p != NULL; p = p->next_registered) {
		if (p->mandatory && times_given(run, p, false) + times_given(run, p, true) == 0)
			usage_error(run, "missing the mandatory flag %s", argp_flag_name(p, name, sizeof(name)));
	}
	for (size_t i = 0; i < run->count; i++) {
		const struct doca_argp_param *p = run->items[i].param;

		if (p->general == GENERAL_NONE)
			program_flags++;
		if (p->singular)
			singular = p;
	}
	if (singular != NULL && program_flags > times_given(run, singular, false) + times_given(run, singular, true))
		usage_error(run, "%s goes alone, without other flags", argp_flag_name(singular, name, sizeof(name)));
	for (size_t i = 0; i < run->count && result == DOCA_SUCCESS; i++) {
		if (run->items[i].param->general == GENERAL_NONE || run->items[i].param->general == GENERAL_LOG_LEVEL ||
		    run->items[i].param->general == GENERAL_SDK_LOG_LEVEL)
			result = convert(run, &run->items[i]);
	}
	for (size_t i = 0; i < run->count && result == DOCA_SUCCESS; i++) {
		enum general g = run->items[i].param->general;

		if (g == GENERAL_LOG_LEVEL || g == GENERAL_SDK_LOG_LEVEL)
			result = apply_general(run, &run->items[i]);
	}
	/* The file's values first, then the command line's, each in the order given. */
	for (size_t i = 0; i < run->count && result == DOCA_SUCCESS; i++) {
		if (run->items[i].param->general == GENERAL_NONE && run->items[i].from_json)
			result = call(run, &run->items[i]);
	}
	for (size_t i = 0; i < run->count && result == DOCA_SUCCESS; i++) {
		if (run->items[i].param->general == GENERAL_NONE && !run->items[i].from_json)
			result = call(run, &run->items[i]);
	}
	if (result == DOCA_SUCCESS && argp.validation_cb != NULL)
		result = argp.validation_cb(argp.config);
	return result;
}

doca_error_t doca_argp_start(int argc, char **argv)
{
	struct run run = {0};
	doca_error_t result;
	const char *json_path = NULL;

	if (!argp.initialized || argp.started)
		return DOCA_ERROR_BAD_STATE;
	if (argc < 1 || argv == NULL || argv[0] == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	argp.started = true;
	if (argp.program_name == NULL) {
		const char *slash = strrchr(argv[0], '/');

		argp.program_name = strdup(slash != NULL ? slash + 1 : argv[0]);
		if (argp.program_name == NULL)
			return out_of_memory();
	}
	/* Help is always reachable, whatever else is wrong. */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			argp_print_usage(stdout);
			finish(&run, 0);
		}
	}
	result = read_command_line(&run, argc, argv);
	if (result == DOCA_SUCCESS && run.version)
		version(&run);
	for (size_t i = 0; i < run.count && result == DOCA_SUCCESS; i++) {
		if (run.items[i].param->general == GENERAL_JSON)
			json_path = run.items[i].text;
	}
	if (result == DOCA_SUCCESS && json_path != NULL)
		result = read_json(&run, json_path);
	if (result == DOCA_SUCCESS)
		result = check_and_call(&run);
	free_run(&run);
	return result;
}
