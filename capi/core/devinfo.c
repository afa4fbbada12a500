/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_dev.h's queries of a device and of a representor, answered from the topology as the TypeScript
 * side's src/core/devinfo.ts answers them. A buffer smaller than DOCA's size for the property is
 * INVALID_VALUE, as DOCA's reference says.
 */
#include <stdio.h>
#include <string.h>

#include <doca_dev.h>

#include "fabric/topology.h"

static doca_error_t copy_text(const char *text, char *out, uint32_t size, uint32_t minimum)
{
	if (out == NULL || size < minimum || strlen(text) >= size)
		return DOCA_ERROR_INVALID_VALUE;
	snprintf(out, size, "%s", text);
	return DOCA_SUCCESS;
}

static doca_error_t pci_text(const struct sdpu_pci *pci, char *out)
{
	if (out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sdpu_pci_format(pci, out);
	return DOCA_SUCCESS;
}

static doca_error_t pci_equal(const struct sdpu_pci *pci, const char *text, uint8_t *is_equal)
{
	struct sdpu_pci other;

	if (text == NULL || is_equal == NULL || !sdpu_pci_parse(text, strlen(text), &other))
		return DOCA_ERROR_INVALID_VALUE;
	*is_equal = sdpu_pci_equal(pci, &other);
	return DOCA_SUCCESS;
}

static doca_error_t flag(const void *info, uint8_t *out, uint8_t value)
{
	if (info == NULL || out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*out = value;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : pci_text(&devinfo->pci, pci_addr_str);
}

doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str, uint8_t *is_equal)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : pci_equal(&devinfo->pci, pci_addr_str, is_equal);
}

doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size)
{
	if (devinfo == NULL || ipv4_addr == NULL || size < DOCA_DEVINFO_IPV4_ADDR_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	memset(ipv4_addr, 0, DOCA_DEVINFO_IPV4_ADDR_SIZE); /* 0.0.0.0 */
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size)
{
	if (devinfo == NULL || ipv6_addr == NULL || size < DOCA_DEVINFO_IPV6_ADDR_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	memset(ipv6_addr, 0, DOCA_DEVINFO_IPV6_ADDR_SIZE); /* :: */
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size)
{
	if (devinfo == NULL || mac_addr == NULL || size < DOCA_DEVINFO_MAC_ADDR_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	memcpy(mac_addr, devinfo->mac, DOCA_DEVINFO_MAC_ADDR_SIZE);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : copy_text(devinfo->iface, iface_name, size, DOCA_DEVINFO_IFACE_NAME_SIZE);
}

doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : copy_text(devinfo->ibdev, ibdev_name, size, DOCA_DEVINFO_IBDEV_NAME_SIZE);
}

doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid)
{
	if (devinfo == NULL || lid == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*lid = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_active_rate(const struct doca_devinfo *devinfo, uint64_t *active_rate)
{
	if (devinfo == NULL || active_rate == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*active_rate = 200000000000ULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_vhca_id(const struct doca_devinfo *devinfo, uint16_t *vhca_id)
{
	if (devinfo == NULL || vhca_id == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*vhca_id = devinfo->vhca_id;
	return DOCA_SUCCESS;
}

/* Only the DPU's Arm side manages hot-plug and has representors. */
doca_error_t doca_devinfo_cap_is_hotplug_manager_supported(const struct doca_devinfo *devinfo, uint8_t *is_hotplug_manager)
{
	return flag(devinfo, is_hotplug_manager, devinfo != NULL && devinfo->dpu_side);
}

doca_error_t doca_devinfo_cap_is_notification_moderation_supported(const struct doca_devinfo *devinfo, uint8_t *is_supported)
{
	return flag(devinfo, is_supported, 1);
}

doca_error_t doca_devinfo_cap_is_accelerate_resource_reclaim_supported(const struct doca_devinfo *devinfo,
								       uint8_t *is_supported)
{
	return flag(devinfo, is_supported, 0);
}

doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const struct doca_devinfo *devinfo, uint8_t *filter_all_supported)
{
	return flag(devinfo, filter_all_supported, devinfo != NULL && devinfo->dpu_side);
}

doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const struct doca_devinfo *devinfo, uint8_t *filter_net_supported)
{
	return flag(devinfo, filter_net_supported, devinfo != NULL && devinfo->dpu_side);
}

doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const struct doca_devinfo *devinfo,
							       uint8_t *filter_emulated_supported)
{
	return flag(devinfo, filter_emulated_supported, devinfo != NULL && devinfo->dpu_side);
}

doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size)
{
	return devinfo_rep == NULL ? DOCA_ERROR_INVALID_VALUE : copy_text(devinfo_rep->vuid, rep_vuid, size, DOCA_DEVINFO_REP_VUID_SIZE);
}

doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str)
{
	return devinfo_rep == NULL ? DOCA_ERROR_INVALID_VALUE : pci_text(&devinfo_rep->pci, pci_addr_str);
}

doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type)
{
	if (devinfo_rep == NULL || pci_func_type == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*pci_func_type = devinfo_rep->type;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug)
{
	return flag(devinfo_rep, is_hotplug, devinfo_rep != NULL && devinfo_rep->hotplug);
}

doca_error_t doca_devinfo_rep_get_iface_name(const struct doca_devinfo_rep *devinfo_rep, char *iface_name, uint32_t size)
{
	return devinfo_rep == NULL ? DOCA_ERROR_INVALID_VALUE : copy_text(devinfo_rep->iface, iface_name, size, DOCA_DEVINFO_IFACE_NAME_SIZE);
}

doca_error_t doca_devinfo_rep_get_vhca_id(const struct doca_devinfo_rep *devinfo_rep, uint16_t *vhca_id)
{
	if (devinfo_rep == NULL || vhca_id == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*vhca_id = devinfo_rep->vhca_id;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep, const char *pci_addr_str,
						uint8_t *is_equal)
{
	return devinfo_rep == NULL ? DOCA_ERROR_INVALID_VALUE : pci_equal(&devinfo_rep->pci, pci_addr_str, is_equal);
}
