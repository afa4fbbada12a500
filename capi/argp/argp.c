/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_argp.h, the parser object: init and destroy, flags and their registration, the callbacks a
 * program may add, and the usage text (doca_argp_start is in start.c).
 *
 * Registration checks what DOCA says a flag needs (a name, a description, a callback, a type:
 * INITIALIZATION otherwise) and refuses a name already taken, argp's own included (-h, -v, -l, -j and
 * their long names, --sdk-log-level: INVALID_VALUE). argp owns a flag once it is given to register,
 * whatever the answer. Commands (doca_argp_cmd_*) and DPDK programs are not modelled: those calls are
 * generated stubs. Every public function is written out (no macro defines one): the stub generator
 * reads these files to know which functions are real.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "argp/state.h"
#include "core/internal.h"

struct argp_state argp;

void argp_say(enum doca_log_level level, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	if (argp.logger_cb != NULL) {
		argp.logger_cb(level, format, args);
	} else {
		fprintf(stderr, "%s: ", argp.program_name != NULL ? argp.program_name : "doca_argp");
		vfprintf(stderr, format, args);
		fputc('\n', stderr);
	}
	va_end(args);
}

static void free_param(struct doca_argp_param *p)
{
	free(p->short_name);
	free(p->long_name);
	free(p->arguments);
	free(p->description);
	free(p);
}

/* Unlinks `p` from the created list and frees it. */
static void destroy_param(struct doca_argp_param *p)
{
	for (struct doca_argp_param **link = &argp.created; *link != NULL; link = &(*link)->next_created) {
		if (*link == p) {
			*link = p->next_created;
			break;
		}
	}
	free_param(p);
}

static bool is_created(const struct doca_argp_param *p)
{
	for (const struct doca_argp_param *q = argp.created; q != NULL; q = q->next_created) {
		if (q == p)
			return true;
	}
	return false;
}

void argp_release(void)
{
	struct doca_argp_param *p = argp.created;

	while (p != NULL) {
		struct doca_argp_param *next = p->next_created;

		free_param(p);
		p = next;
	}
	free(argp.program_name);
	memset(&argp, 0, sizeof(argp));
}

static struct doca_argp_param *new_param(void)
{
	struct doca_argp_param *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	p->next_created = argp.created;
	argp.created = p;
	return p;
}

/* A copy of `text` (NULL stays NULL), or NULL and p->no_memory. */
static char *copy(struct doca_argp_param *p, const char *text)
{
	char *c;

	if (text == NULL)
		return NULL;
	c = strdup(text);
	if (c == NULL)
		p->no_memory = true;
	return c;
}

static void set_text(struct doca_argp_param *p, char **field, const char *text)
{
	if (p == NULL)
		return;
	free(*field);
	*field = copy(p, text);
}

static void append_registered(struct doca_argp_param *p)
{
	p->registered = true;
	p->next_registered = NULL;
	*argp.registered_tail = p;
	argp.registered_tail = &p->next_registered;
}

static doca_error_t add_general(enum general general, const char *short_name, const char *long_name,
				const char *arguments, enum doca_argp_type type, const char *description)
{
	struct doca_argp_param *p = new_param();

	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	p->general = general;
	p->type = type;
	p->short_name = copy(p, short_name);
	p->long_name = copy(p, long_name);
	p->arguments = copy(p, arguments);
	p->description = copy(p, description);
	p->cli_only = general == GENERAL_HELP || general == GENERAL_VERSION || general == GENERAL_JSON;
	if (p->no_memory)
		return DOCA_ERROR_NO_MEMORY;
	append_registered(p);
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_init(const char *program_name, void *program_config)
{
	static char log_levels[128];
	doca_error_t result;

	if (argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	memset(&argp, 0, sizeof(argp));
	argp.registered_tail = &argp.registered;
	argp.config = program_config;
	argp.log_level = -1;
	argp.sdk_log_level = -1;
	if (program_name != NULL && (argp.program_name = strdup(program_name)) == NULL)
		return DOCA_ERROR_NO_MEMORY;
	snprintf(log_levels, sizeof(log_levels), "application log level: %s", sdpu_log_level_names);
	result = add_general(GENERAL_HELP, "h", "help", NULL, DOCA_ARGP_TYPE_BOOLEAN, "print this help");
	if (result == DOCA_SUCCESS)
		result = add_general(GENERAL_VERSION, "v", "version", NULL, DOCA_ARGP_TYPE_BOOLEAN,
				     "print the program version");
	if (result == DOCA_SUCCESS)
		result = add_general(GENERAL_LOG_LEVEL, "l", "log-level", "<level>", DOCA_ARGP_TYPE_STRING, log_levels);
	if (result == DOCA_SUCCESS)
		result = add_general(GENERAL_SDK_LOG_LEVEL, NULL, "sdk-log-level", "<level>", DOCA_ARGP_TYPE_STRING,
				     "log level of the library itself (same numbers)");
	if (result == DOCA_SUCCESS)
		result = add_general(GENERAL_JSON, "j", "json", "<path>", DOCA_ARGP_TYPE_STRING,
				     "read the flags from a JSON file");
	if (result != DOCA_SUCCESS) {
		argp_release();
		return result;
	}
	argp.initialized = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_destroy(void)
{
	if (!argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	argp_release();
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_param_create(struct doca_argp_param **param)
{
	struct doca_argp_param *p;

	if (param == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	p = new_param();
	if (p == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*param = p;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_param_destroy(struct doca_argp_param *param)
{
	if (param == NULL || !is_created(param))
		return DOCA_ERROR_INVALID_VALUE;
	if (param->registered)
		return DOCA_ERROR_BAD_STATE;
	destroy_param(param);
	return DOCA_SUCCESS;
}

void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name)
{
	set_text(param, param != NULL ? &param->short_name : NULL, name);
}

void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name)
{
	set_text(param, param != NULL ? &param->long_name : NULL, name);
}

void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments)
{
	set_text(param, param != NULL ? &param->arguments : NULL, arguments);
}

void doca_argp_param_set_description(struct doca_argp_param *param, const char *description)
{
	set_text(param, param != NULL ? &param->description : NULL, description);
}

void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback)
{
	if (param != NULL)
		param->callback = callback;
}

void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type)
{
	if (param != NULL)
		param->type = type;
}

void doca_argp_param_set_mandatory(struct doca_argp_param *param)
{
	if (param != NULL)
		param->mandatory = true;
}

void doca_argp_param_set_cli_only(struct doca_argp_param *param)
{
	if (param != NULL)
		param->cli_only = true;
}

void doca_argp_param_set_multiplicity(struct doca_argp_param *param)
{
	if (param != NULL)
		param->multiplicity = true;
}

void doca_argp_param_set_singular(struct doca_argp_param *param)
{
	if (param != NULL)
		param->singular = true;
}

void doca_argp_param_set_inherited(struct doca_argp_param *param)
{
	if (param != NULL)
		param->inherited = true;
}

void doca_argp_param_set_hidden(struct doca_argp_param *param)
{
	if (param != NULL)
		param->hidden = true;
}

const char *argp_flag_name(const struct doca_argp_param *param, char *buf, size_t len)
{
	if (param->short_name != NULL && param->long_name != NULL)
		snprintf(buf, len, "-%s, --%s", param->short_name, param->long_name);
	else if (param->long_name != NULL)
		snprintf(buf, len, "--%s", param->long_name);
	else
		snprintf(buf, len, "-%s", param->short_name != NULL ? param->short_name : "?");
	return buf;
}

/* A name a flag may have: not empty, no leading '-', no '=' or white space. */
static bool good_name(const char *name)
{
	if (name == NULL)
		return true;
	return name[0] != '\0' && name[0] != '-' && strpbrk(name, "= \t\n") == NULL;
}

static const struct doca_argp_param *taken_by(const struct doca_argp_param *p)
{
	for (const struct doca_argp_param *q = argp.registered; q != NULL; q = q->next_registered) {
		if ((p->short_name != NULL && q->short_name != NULL && strcmp(p->short_name, q->short_name) == 0) ||
		    (p->long_name != NULL && q->long_name != NULL && strcmp(p->long_name, q->long_name) == 0))
			return q;
	}
	return NULL;
}

/* Why `p` cannot be registered (argp owns it and frees it), or DOCA_SUCCESS. */
static doca_error_t refusal(const struct doca_argp_param *p)
{
	char name[160], other[160];
	const char *missing = NULL;
	const struct doca_argp_param *clash;

	if (p->no_memory)
		return DOCA_ERROR_NO_MEMORY;
	if (p->short_name == NULL && p->long_name == NULL)
		missing = "a short or a long name";
	else if (p->description == NULL)
		missing = "a description";
	else if (p->callback == NULL)
		missing = "a callback";
	else if (p->type == DOCA_ARGP_TYPE_UNKNOWN)
		missing = "a type";
	if (missing != NULL) {
		argp_say(DOCA_LOG_LEVEL_ERROR, "doca_argp_register_param: flag %s has no %s",
			 argp_flag_name(p, name, sizeof(name)), missing);
		return DOCA_ERROR_INITIALIZATION;
	}
	if (p->type == DOCA_ARGP_TYPE_JSON_OBJ) {
		argp_say(DOCA_LOG_LEVEL_ERROR, "doca_argp_register_param: flag %s: JSON object flags (DPDK's) are not supported",
			 argp_flag_name(p, name, sizeof(name)));
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (p->type < DOCA_ARGP_TYPE_STRING || p->type > DOCA_ARGP_TYPE_BOOLEAN) {
		argp_say(DOCA_LOG_LEVEL_ERROR, "doca_argp_register_param: flag %s has type %d, not one of enum doca_argp_type",
			 argp_flag_name(p, name, sizeof(name)), (int)p->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!good_name(p->short_name) || !good_name(p->long_name)) {
		argp_say(DOCA_LOG_LEVEL_ERROR,
			 "doca_argp_register_param: flag %s: a name is not empty and has no leading '-', no '=', no space",
			 argp_flag_name(p, name, sizeof(name)));
		return DOCA_ERROR_INVALID_VALUE;
	}
	clash = taken_by(p);
	if (clash != NULL) {
		argp_say(DOCA_LOG_LEVEL_ERROR, "doca_argp_register_param: flag %s: the name is taken by %s%s",
			 argp_flag_name(p, name, sizeof(name)), argp_flag_name(clash, other, sizeof(other)),
			 clash->general != GENERAL_NONE ? " (one of DOCA's general flags)" : "");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_param(struct doca_argp_param *input_param)
{
	doca_error_t result;

	if (!argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	if (input_param == NULL || !is_created(input_param))
		return DOCA_ERROR_INVALID_VALUE;
	if (input_param->registered)
		return DOCA_ERROR_BAD_STATE;
	result = refusal(input_param);
	if (result != DOCA_SUCCESS) {
		destroy_param(input_param);
		return result;
	}
	/* JSON keys are long names: a flag without one is for the command line only. */
	if (input_param->long_name == NULL)
		input_param->cli_only = true;
	append_registered(input_param);
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback)
{
	if (!argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	argp.version_cb = callback;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback)
{
	if (!argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	argp.validation_cb = callback;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_register_logger_callback(doca_argp_logger_cb_t callback)
{
	if (!argp.initialized)
		return DOCA_ERROR_BAD_STATE;
	if (callback == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (argp.logger_cb != NULL)
		return DOCA_ERROR_ALREADY_EXIST;
	argp.logger_cb = callback;
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_disable_logger_callback(void)
{
	if (!argp.initialized || argp.logger_cb == NULL)
		return DOCA_ERROR_BAD_STATE;
	argp.logger_cb = NULL;
	return DOCA_SUCCESS;
}

static doca_error_t get_level(int *log_level, int given, uint32_t (*global)(void))
{
	if (log_level == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*log_level = given >= 0 ? given : (int)global();
	return DOCA_SUCCESS;
}

doca_error_t doca_argp_get_log_level(int *log_level)
{
	return get_level(log_level, argp.log_level, doca_log_level_get_global_lower_limit);
}

doca_error_t doca_argp_get_sdk_log_level(int *log_level)
{
	return get_level(log_level, argp.sdk_log_level, doca_log_level_get_global_sdk_limit);
}

/* One row: "  -d, --pci-addr <value>          Device PCI address (required)". */
static void print_row(FILE *out, const struct doca_argp_param *p)
{
	char name[160], column[224];
	const char *arguments = p->arguments;

	if (arguments == NULL && p->type == DOCA_ARGP_TYPE_STRING)
		arguments = "<value>";
	if (arguments == NULL && p->type == DOCA_ARGP_TYPE_INT)
		arguments = "<number>";
	argp_flag_name(p, name, sizeof(name));
	snprintf(column, sizeof(column), "%s%s%s%s", p->short_name == NULL ? "    " : "", name,
		 arguments != NULL ? " " : "", arguments != NULL ? arguments : "");
	fprintf(out, "  %-34s %s%s\n", column, p->description, p->mandatory ? " (required)" : "");
}

void argp_print_usage(FILE *out)
{
	bool program_flags = false;

	for (const struct doca_argp_param *p = argp.registered; p != NULL; p = p->next_registered)
		program_flags = program_flags || (p->general == GENERAL_NONE && !p->hidden);
	fprintf(out, "Usage: %s [DOCA Flags]%s\n\nDOCA Flags:\n", argp.program_name != NULL ? argp.program_name : "program",
		program_flags ? " [Program Flags]" : "");
	for (const struct doca_argp_param *p = argp.registered; p != NULL; p = p->next_registered) {
		if (p->general != GENERAL_NONE)
			print_row(out, p);
	}
	if (!program_flags)
		return;
	fprintf(out, "\nProgram Flags:\n");
	for (const struct doca_argp_param *p = argp.registered; p != NULL; p = p->next_registered) {
		if (p->general == GENERAL_NONE && !p->hidden)
			print_row(out, p);
	}
}

void doca_argp_usage(void)
{
	if (argp.initialized)
		argp_print_usage(stdout);
}
