/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every softdpu sample's main does before its own work, as NVIDIA's samples do: DOCA's log backends
 * (the program's lines on stdout, the SDK's warnings and worse on stderr), and its flags registered with
 * doca_argp. This is softdpu's own code.
 */
#ifndef SAMPLES_COMMON_SAMPLE_MAIN_H_
#define SAMPLES_COMMON_SAMPLE_MAIN_H_

#include <stdbool.h>

#include <doca_argp.h>
#include <doca_error.h>

/* The standard log backend, and one on stderr for the SDK's lines of level WARNING and worse. */
doca_error_t sample_log_backends(void);

/* Registers a flag (`short_name` NULL for none) whose value `cb` takes; `mandatory`: doca_argp_start refuses its absence. */
doca_error_t sample_flag(const char *short_name, const char *long_name, const char *description, enum doca_argp_type type,
			 bool mandatory, doca_argp_param_cb_t cb);

#endif /* SAMPLES_COMMON_SAMPLE_MAIN_H_ */
