/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_argp.h: DOCA's argument parser (command-line flags and a JSON flags file). Written for
 * softdpu from DOCA's public API reference; no NVIDIA text. docs/c.md describes the flags every program
 * gets (-h, -v, -l/--log-level, --sdk-log-level, -j/--json), the usage text and the exit codes.
 *
 * A program calls doca_argp_init, creates and registers its flags (argp owns a registered flag), calls
 * doca_argp_start(argc, argv), which calls each flag's callback with its value and the program's
 * configuration, and doca_argp_destroy at the end.
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include <stdarg.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_log.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A flag's callback: its value (char *, int * or bool *) and the program's configuration. */
typedef doca_error_t (*doca_argp_param_cb_t)(void *param, void *config);
/* A command's callback: the program's configuration. */
typedef doca_error_t (*doca_argp_cmd_cb_t)(void *config);
/* Hands the DPDK flags on to a DPDK program. */
typedef doca_error_t (*doca_argp_dpdk_cb_t)(int argc, char **argv);
/* Checks the whole configuration once every flag is in. */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *config);
/* Takes argp's own messages instead of stderr. */
typedef doca_error_t (*doca_argp_logger_cb_t)(enum doca_log_level level, const char *format, va_list args);

enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING = 1,
	DOCA_ARGP_TYPE_INT = 2,
	DOCA_ARGP_TYPE_BOOLEAN = 3,
	DOCA_ARGP_TYPE_JSON_OBJ = 4,
};

struct doca_argp_param;
struct doca_argp_cmd;

/* The parser itself. */
DOCA_EXPERIMENTAL void doca_argp_usage(void);
DOCA_EXPERIMENTAL doca_error_t doca_argp_init(const char *program_name, void *program_config);
DOCA_EXPERIMENTAL doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);
DOCA_EXPERIMENTAL doca_error_t doca_argp_register_cmd(struct doca_argp_cmd *input_cmd);
DOCA_EXPERIMENTAL doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);
DOCA_EXPERIMENTAL doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);
DOCA_EXPERIMENTAL doca_error_t doca_argp_register_logger_callback(doca_argp_logger_cb_t callback);
DOCA_EXPERIMENTAL doca_error_t doca_argp_disable_logger_callback(void);
DOCA_EXPERIMENTAL doca_error_t doca_argp_start(int argc, char **argv);
DOCA_EXPERIMENTAL doca_error_t doca_argp_destroy(void);
DOCA_EXPERIMENTAL void doca_argp_set_dpdk_program(doca_argp_dpdk_cb_t callback);

/* A flag. */
DOCA_EXPERIMENTAL doca_error_t doca_argp_param_create(struct doca_argp_param **param);
DOCA_EXPERIMENTAL void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);
DOCA_EXPERIMENTAL void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);
DOCA_EXPERIMENTAL void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);
DOCA_EXPERIMENTAL void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);
DOCA_EXPERIMENTAL void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);
DOCA_EXPERIMENTAL void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);
DOCA_EXPERIMENTAL void doca_argp_param_set_mandatory(struct doca_argp_param *param);
DOCA_EXPERIMENTAL void doca_argp_param_set_cli_only(struct doca_argp_param *param);
DOCA_EXPERIMENTAL void doca_argp_param_set_multiplicity(struct doca_argp_param *param);
DOCA_EXPERIMENTAL void doca_argp_param_set_singular(struct doca_argp_param *param);
DOCA_EXPERIMENTAL void doca_argp_param_set_inherited(struct doca_argp_param *param);
DOCA_EXPERIMENTAL void doca_argp_param_set_hidden(struct doca_argp_param *param);
DOCA_EXPERIMENTAL doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/* A command (a subcommand word with flags of its own). */
DOCA_EXPERIMENTAL doca_error_t doca_argp_cmd_create(struct doca_argp_cmd **cmd);
DOCA_EXPERIMENTAL void doca_argp_cmd_set_name(struct doca_argp_cmd *cmd, const char *name);
DOCA_EXPERIMENTAL void doca_argp_cmd_set_description(struct doca_argp_cmd *cmd, const char *description);
DOCA_EXPERIMENTAL void doca_argp_cmd_set_callback(struct doca_argp_cmd *cmd, doca_argp_cmd_cb_t callback);
DOCA_EXPERIMENTAL void doca_argp_cmd_set_hidden(struct doca_argp_cmd *cmd);
DOCA_EXPERIMENTAL doca_error_t doca_argp_cmd_register_param(struct doca_argp_cmd *cmd, struct doca_argp_param *input_param);
DOCA_EXPERIMENTAL doca_error_t doca_argp_cmd_register_cmd(struct doca_argp_cmd *cmd, struct doca_argp_cmd *input_cmd);
DOCA_EXPERIMENTAL doca_error_t doca_argp_cmd_destroy(struct doca_argp_cmd *cmd);

/* The levels the user asked for (or the global ones). */
DOCA_EXPERIMENTAL doca_error_t doca_argp_get_log_level(int *log_level);
DOCA_EXPERIMENTAL doca_error_t doca_argp_get_sdk_log_level(int *log_level);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ARGP_H_ */
