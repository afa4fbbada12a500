/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_argp's state, shared by argp.c (the parser object: flags, registration, usage) and start.c
 * (doca_argp_start: the command line, the JSON file, the callbacks). One parser per process, as in DOCA.
 */
#ifndef SOFTDPU_CAPI_ARGP_STATE_H_
#define SOFTDPU_CAPI_ARGP_STATE_H_

#include <stdbool.h>
#include <stdio.h>

#include <doca_argp.h>

/* The flags argp itself answers: DOCA's general flags. */
enum general { GENERAL_NONE, GENERAL_HELP, GENERAL_VERSION, GENERAL_LOG_LEVEL, GENERAL_SDK_LOG_LEVEL, GENERAL_JSON };

struct doca_argp_param {
	struct doca_argp_param *next_created;
	struct doca_argp_param *next_registered;
	char *short_name;
	char *long_name;
	char *arguments;
	char *description;
	doca_argp_param_cb_t callback;
	enum doca_argp_type type;
	enum general general;
	bool mandatory;
	bool cli_only;
	bool multiplicity;
	bool singular;
	bool inherited;
	bool hidden;
	bool registered;
	/* A setter could not copy its string: registration fails with NO_MEMORY. */
	bool no_memory;
};

struct argp_state {
	bool initialized;
	bool started;
	char *program_name;
	void *config;
	/* Every flag created and not destroyed (argp frees them all), and the registered ones in order. */
	struct doca_argp_param *created;
	struct doca_argp_param *registered;
	struct doca_argp_param **registered_tail;
	doca_argp_param_cb_t version_cb;
	doca_argp_validation_cb_t validation_cb;
	doca_argp_logger_cb_t logger_cb;
	/* The levels the user gave (-l, --sdk-log-level), or -1. */
	int log_level;
	int sdk_log_level;
};

extern struct argp_state argp;

/* One of argp's own messages: to the logger callback, or to stderr after the program's name. */
void argp_say(enum doca_log_level level, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* The usage text. */
void argp_print_usage(FILE *out);

/* How a flag is written in messages: "-d, --pci-addr", "--async" or "-pf_dev". */
const char *argp_flag_name(const struct doca_argp_param *param, char *buf, size_t len);

/* Frees everything and forgets the parser (doca_argp_destroy without its check). */
void argp_release(void);

#endif /* SOFTDPU_CAPI_ARGP_STATE_H_ */
