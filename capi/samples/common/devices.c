/* SPDX-License-Identifier: Apache-2.0 */
/* devices.h: a device and a representor by PCI address, for every softdpu sample. */
#include <doca_log.h>

#include "devices.h"

DOCA_LOG_REGISTER(SAMPLES::DEVICES);

doca_error_t open_device(const char *pci, doca_error_t (*check)(const struct doca_devinfo *), struct doca_dev **dev)
{
	struct doca_devinfo **list;
	uint32_t n;
	uint8_t equal = 0;
	doca_error_t result = doca_devinfo_create_list(&list, &n);

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list the devices: %s", doca_error_get_descr(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n; i++) {
		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &equal) != DOCA_SUCCESS || !equal)
			continue;
		if (check != NULL && check(list[i]) != DOCA_SUCCESS) {
			result = DOCA_ERROR_NOT_SUPPORTED;
			break;
		}
		result = doca_dev_open(list[i], dev);
		break;
	}
	doca_devinfo_destroy_list(list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to open the device %s: %s", pci, doca_error_get_descr(result));
	return result;
}

doca_error_t open_representor(struct doca_dev *dev, const char *pci, struct doca_dev_rep **rep)
{
	struct doca_devinfo_rep **list;
	uint32_t n;
	uint8_t equal = 0;
	doca_error_t result = doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &list, &n);

	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list the representors (they are only available on the DPU): %s", doca_error_get_descr(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n; i++)
		if (doca_devinfo_rep_is_equal_pci_addr(list[i], pci, &equal) == DOCA_SUCCESS && equal) {
			result = doca_dev_rep_open(list[i], rep);
			break;
		}
	doca_devinfo_rep_destroy_list(list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Failed to open the representor %s: %s", pci, doca_error_get_descr(result));
	return result;
}
