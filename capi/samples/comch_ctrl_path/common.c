/* SPDX-License-Identifier: Apache-2.0 */
/* common.h: flags, devices and the loop of softdpu's comch samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "common.h"

DOCA_LOG_REGISTER(COMCH_CTRL_PATH::COMMON);

static doca_error_t copy(const char *what, const char *value, char *out, size_t size)
{
	if (strlen(value) >= size) {
		DOCA_LOG_ERR("the %s is %zu bytes, more than %zu", what, strlen(value), size - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(out, value);
	return DOCA_SUCCESS;
}

static doca_error_t pci_cb(void *param, void *config)
{
	return copy("PCI address", param, ((struct sample_config *)config)->pci, DOCA_DEVINFO_PCI_ADDR_SIZE);
}

static doca_error_t rep_cb(void *param, void *config)
{
	return copy("representor PCI address", param, ((struct sample_config *)config)->rep_pci, DOCA_DEVINFO_PCI_ADDR_SIZE);
}

static doca_error_t text_cb(void *param, void *config)
{
	return copy("text", param, ((struct sample_config *)config)->text, MAX_TEXT + 1);
}

static doca_error_t flag(const char *short_name, const char *long_name, const char *description, doca_argp_param_cb_t cb)
{
	struct doca_argp_param *param;
	doca_error_t result = doca_argp_param_create(&param);

	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(param, short_name);
	doca_argp_param_set_long_name(param, long_name);
	doca_argp_param_set_description(param, description);
	doca_argp_param_set_callback(param, cb);
	doca_argp_param_set_type(param, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(param);
}

doca_error_t sample_flags(int argc, char **argv, const char *program, struct sample_config *cfg, bool server)
{
	doca_error_t result;

	strcpy(cfg->pci, server ? "03:00.0" : "b1:00.0");
	strcpy(cfg->rep_pci, "b1:00.0");
	strcpy(cfg->text, server ? "Message from the server" : "Message from the client");
	result = doca_argp_init(program, cfg);
	if (result != DOCA_SUCCESS)
		return result;
	result = flag("p", "pci-addr", "DOCA Comch device PCI address", pci_cb);
	if (result == DOCA_SUCCESS && server)
		result = flag("r", "rep-pci", "DOCA Comch device representor PCI address", rep_cb);
	if (result == DOCA_SUCCESS)
		result = flag("t", "text", "Text to send to the other side of the channel", text_cb);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	return result;
}

void progress_until(struct doca_pe *pe, const bool *finish)
{
	const struct timespec nap = {0, 10000};

	while (!*finish)
		if (doca_pe_progress(pe) == 0)
			nanosleep(&nap, NULL);
}

int sample_main(int argc, char **argv, const char *program, bool server, doca_error_t (*run)(const struct sample_config *cfg))
{
	struct sample_config cfg;
	struct doca_log_backend *sdk_log;
	doca_error_t result = doca_log_backend_create_standard();

	if (result == DOCA_SUCCESS)
		result = doca_log_backend_create_with_file_sdk(stderr, &sdk_log);
	if (result == DOCA_SUCCESS)
		result = doca_log_backend_set_sdk_level(sdk_log, DOCA_LOG_LEVEL_WARNING);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	DOCA_LOG_INFO("Starting the sample");
	result = sample_flags(argc, argv, program, &cfg, server);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = run(&cfg);
	doca_argp_destroy();
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample finished with errors: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}
