/* SPDX-License-Identifier: Apache-2.0 */
/* common.h: flags, devices and the loop of softdpu's comch samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "common.h"
#include "sample_main.h"

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

doca_error_t sample_flags(int argc, char **argv, const char *program, struct sample_config *cfg, bool server)
{
	doca_error_t result;

	strcpy(cfg->pci, server ? "03:00.0" : "b1:00.0");
	strcpy(cfg->rep_pci, "b1:00.0");
	strcpy(cfg->text, server ? "Message from the server" : "Message from the client");
	result = doca_argp_init(program, cfg);
	if (result != DOCA_SUCCESS)
		return result;
	result = sample_flag("p", "pci-addr", "DOCA Comch device PCI address", DOCA_ARGP_TYPE_STRING, false, pci_cb);
	if (result == DOCA_SUCCESS && server)
		result = sample_flag("r", "rep-pci", "DOCA Comch device representor PCI address", DOCA_ARGP_TYPE_STRING, false, rep_cb);
	if (result == DOCA_SUCCESS)
		result = sample_flag("t", "text", "Text to send to the other side of the channel", DOCA_ARGP_TYPE_STRING, false, text_cb);
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
	doca_error_t result = sample_log_backends();

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
