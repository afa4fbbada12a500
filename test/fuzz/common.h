/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the fuzz targets that run the library's DOCA objects (blob, client, server) share: a failure of
 * the harness itself ends the program with exit code 2 (not a finding), the fabric directory they need,
 * the library's log kept quiet, devices opened by PCI address, and the comch callbacks that only read
 * what they are given. Included once per program (static definitions); seeds.h comes with it.
 */
#ifndef SOFTDPU_FUZZ_COMMON_H_
#define SOFTDPU_FUZZ_COMMON_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <doca_comch.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>

#include "seeds.h"

static __attribute__((noreturn)) void die(const char *what, doca_error_t err)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, doca_error_get_name(err));
	exit(2);
}

/* Ends the program when the fabric directory is not set (run.sh makes a private one). */
static void require_fabric(void)
{
	if (getenv("SOFTDPU_FABRIC") == NULL) {
		fprintf(stderr, "fuzz: set $SOFTDPU_FABRIC to a private directory (test/fuzz/run.sh makes one)\n");
		exit(2);
	}
}

/* Every refusal is one ERROR line: not millions of them. */
static void quiet_log(void)
{
	if (getenv("SOFTDPU_FUZZ_LOG") == NULL) /* set it to see why an input is refused (replaying one) */
		doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
}

static void check(const char *what, doca_error_t err)
{
	if (err != DOCA_SUCCESS)
		die(what, err);
}

/* The device of PCI address `pci`, opened; ends the program when there is none or it does not open. */
static struct doca_dev *open_dev(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;
	uint8_t eq = 0;

	check("doca_devinfo_create_list", doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			check("doca_dev_open", doca_dev_open(list[i], &dev));
	doca_devinfo_destroy_list(list);
	if (dev == NULL)
		die(pci, DOCA_ERROR_NOT_FOUND);
	return dev;
}

/* A comch endpoint's message callback: it reads all of the message, as is the callback's right. */
static inline void received(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *conn)
{
	uint8_t sum = 0;

	(void)event;
	(void)conn;
	for (uint32_t i = 0; i < len; i++)
		sum ^= buf[i]; /* the message is the callback's to read, all of it */
	if (getenv("SOFTDPU_FUZZ_LOG") != NULL)
		fprintf(stderr, "fuzz: received %u bytes (xor %02x)\n", len, sum);
}

/* A comch endpoint's send completion (success and error alike): nothing to do. */
static inline void sent(struct doca_comch_task_send *task, union doca_data task_data, union doca_data ctx_data)
{
	(void)task;
	(void)task_data;
	(void)ctx_data;
}

#endif /* SOFTDPU_FUZZ_COMMON_H_ */
