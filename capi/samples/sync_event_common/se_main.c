/* SPDX-License-Identifier: Apache-2.0 */
/* se_common.h: the flags, main and the progress loop of softdpu's sync event samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_log.h>

#include "devices.h"
#include "sample_main.h"
#include "se_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT::COMMON);

static doca_error_t copy_pci(const char *what, const char *value, char *out)
{
	if (strlen(value) >= DOCA_DEVINFO_PCI_ADDR_SIZE) {
		DOCA_LOG_ERR("the %s \"%s\" is longer than %d characters", what, value, DOCA_DEVINFO_PCI_ADDR_SIZE - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(out, value);
	return DOCA_SUCCESS;
}

static doca_error_t pci_cb(void *param, void *config)
{
	return copy_pci("PCI address", param, ((struct se_config *)config)->pci);
}

static doca_error_t rep_cb(void *param, void *config)
{
	return copy_pci("representor PCI address", param, ((struct se_config *)config)->rep_pci);
}

static doca_error_t async_cb(void *param, void *config)
{
	((struct se_config *)config)->async = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t atomic_cb(void *param, void *config)
{
	((struct se_config *)config)->atomic = *(bool *)param;
	return DOCA_SUCCESS;
}

static doca_error_t num_tasks_cb(void *param, void *config)
{
	int n = *(int *)param;

	if (n < 1) {
		DOCA_LOG_ERR("--async-num-tasks %d: a task pool holds at least 1 task", n);
		return DOCA_ERROR_INVALID_VALUE;
	}
	((struct se_config *)config)->num_tasks = n;
	return DOCA_SUCCESS;
}

/* DOCA's flags: -d and (on the DPU) -r mandatory, --async, --async-num-tasks, --atomic. */
static doca_error_t parse_flags(int argc, char **argv, const char *program, struct se_config *cfg)
{
	doca_error_t result = doca_argp_init(program, cfg);

	if (result != DOCA_SUCCESS)
		return result;
	result = sample_flag("d", "pci-addr", "Device PCI address", DOCA_ARGP_TYPE_STRING, true, pci_cb);
#ifdef DOCA_ARCH_DPU
	if (result == DOCA_SUCCESS)
		result = sample_flag("r", "rep-pci", "DPU representor PCI address", DOCA_ARGP_TYPE_STRING, true, rep_cb);
#else
	(void)rep_cb;
#endif
	if (result == DOCA_SUCCESS)
		result = sample_flag(NULL, "async", "Start DOCA Sync Event in asynchronous mode (synchronous mode by default)",
			      DOCA_ARGP_TYPE_BOOLEAN, false, async_cb);
	if (result == DOCA_SUCCESS)
		result = sample_flag(NULL, "async-num-tasks", "Async num tasks for asynchronous mode (1 by default)", DOCA_ARGP_TYPE_INT,
			      false, num_tasks_cb);
	if (result == DOCA_SUCCESS)
		result = sample_flag(NULL, "atomic", "Update DOCA Sync Event using Add operation (Set operation by default)",
			      DOCA_ARGP_TYPE_BOOLEAN, false, atomic_cb);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	return result;
}

doca_error_t se_progress_until(struct se_sample *s, struct doca_pe *pe, bool (*done)(const struct se_sample *s),
			       const char *what)
{
	const struct timespec nap = {0, 10000};
	struct timespec now, deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += SE_TIMEOUT_SEC;
	while (!done(s)) {
		if (doca_pe_progress(pe) != 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec || (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec)) {
			DOCA_LOG_ERR("Timed out after %d s waiting for %s", SE_TIMEOUT_SEC, what);
			return DOCA_ERROR_TIME_OUT;
		}
		nanosleep(&nap, NULL);
	}
	return DOCA_SUCCESS;
}

int se_main(int argc, char **argv, const char *program, doca_error_t (*run)(struct se_sample *s))
{
	struct se_sample s = {.cfg = {.num_tasks = 1}, .comch_result = DOCA_SUCCESS};
	doca_error_t result = sample_log_backends();

	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	DOCA_LOG_INFO("Starting the sample");
	result = parse_flags(argc, argv, program, &s.cfg);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_error_get_descr(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = run(&s);
	se_comch_close(&s);
	se_event_close(&s);
	if (s.rep != NULL)
		doca_dev_rep_close(s.rep);
	if (s.dev != NULL)
		doca_dev_close(s.dev);
	doca_argp_destroy();
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Sample finished with errors: %s", doca_error_get_descr(result));
		return EXIT_FAILURE;
	}
	DOCA_LOG_INFO("Sample finished successfully");
	return EXIT_SUCCESS;
}

doca_error_t se_open(struct se_sample *s, doca_error_t (*check)(const struct doca_devinfo *))
{
	doca_error_t result = open_device(s->cfg.pci, check, &s->dev);

#ifdef DOCA_ARCH_DPU
	if (result == DOCA_SUCCESS)
		result = open_representor(s->dev, s->cfg.rep_pci, &s->rep);
#endif
	if (result == DOCA_SUCCESS && s->cfg.async) {
		result = doca_sync_event_cap_task_wait_eq_is_supported(doca_dev_as_devinfo(s->dev));
		if (result != DOCA_SUCCESS)
			DOCA_LOG_ERR("The device %s has no asynchronous wait (--async): %s", s->cfg.pci, doca_error_get_descr(result));
	}
	return result;
}
