/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every softdpu sample does first: open the device named by a PCI address (-p or -d), and, on the
 * DPU's Arm side, the representor of a host function (-r). DOCA's samples keep these in samples/common.c;
 * this is softdpu's own code.
 */
#ifndef SAMPLES_COMMON_DEVICES_H_
#define SAMPLES_COMMON_DEVICES_H_

#include <doca_dev.h>
#include <doca_error.h>

/* The device at `pci` that passes `check` (a capability; NULL for none), opened. */
doca_error_t open_device(const char *pci, doca_error_t (*check)(const struct doca_devinfo *), struct doca_dev **dev);

/* The representor (a network one, DOCA_DEVINFO_REP_FILTER_NET) of host function `pci` seen from `dev`, opened. */
doca_error_t open_representor(struct doca_dev *dev, const char *pci, struct doca_dev_rep **rep);

#endif /* SAMPLES_COMMON_DEVICES_H_ */
