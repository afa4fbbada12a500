/* SPDX-License-Identifier: Apache-2.0 */
/* sample_main.h: the log backends and the flags of softdpu's samples. */
#include <stdio.h>

#include <doca_log.h>

#include "sample_main.h"

doca_error_t sample_log_backends(void)
{
	struct doca_log_backend *sdk_log;
	doca_error_t result = doca_log_backend_create_standard();

	if (result == DOCA_SUCCESS)
		result = doca_log_backend_create_with_file_sdk(stderr, &sdk_log);
	if (result == DOCA_SUCCESS)
		result = doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
	return result;
}

doca_error_t sample_flag(const char *short_name, const char *long_name, const char *description, enum doca_argp_type type,
			 bool mandatory, doca_argp_param_cb_t cb)
{
	struct doca_argp_param *param;
	doca_error_t result = doca_argp_param_create(&param);

	if (result != DOCA_SUCCESS)
		return result;
	if (short_name != NULL)
		doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, cb);
	doca_argp_param_set_type(param, type);
	if (mandatory)
		doca_argp_param_set_mandatory(param);
	return doca_argp_register_param(param);
}
