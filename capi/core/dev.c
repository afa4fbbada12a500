/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_dev.h's lists, opening and closing. A list holds pointers into the process's topology, so its
 * entries stay valid after doca_devinfo_destroy_list (DOCA says not to use them; here that is harmless).
 * Opening a device again adds a reference (one object per device); each open needs its close.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <doca_log.h>

#include "core/dev.h"
#include "core/internal.h"
#include "fabric/faults.h"
#include "fabric/pci.h"

#define SOURCE "doca_dev"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The open device of each topology entry (by index), and of each representor. */
static struct doca_dev **devs;
static struct doca_dev_rep **reps;
static size_t nreps_open;

doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs)
{
	const struct sdpu_fabric *fabric;
	struct doca_devinfo **list;
	doca_error_t err;

	if (dev_list == NULL || nb_devs == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_fabric_join(&fabric);
	if (err != DOCA_SUCCESS)
		return err;
	if (fabric->topology->ndevices == 0)
		return DOCA_ERROR_NOT_FOUND;
	list = calloc(fabric->topology->ndevices + 1, sizeof(*list));
	if (list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (size_t i = 0; i < fabric->topology->ndevices; i++)
		list[i] = &fabric->topology->devices[i];
	*dev_list = list;
	*nb_devs = (uint32_t)fabric->topology->ndevices;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list)
{
	if (dev_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	free(dev_list);
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev)
{
	const struct sdpu_fabric *fabric;
	size_t index;
	doca_error_t err;

	if (devinfo == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = sdpu_fabric_join(&fabric);
	if (err == DOCA_SUCCESS)
		err = sdpu_faults_follow(fabric->dir);
	if (err != DOCA_SUCCESS)
		return err;
	if (devinfo < fabric->topology->devices || devinfo >= fabric->topology->devices + fabric->topology->ndevices)
		return DOCA_ERROR_INVALID_VALUE;
	index = (size_t)(devinfo - fabric->topology->devices);
	pthread_mutex_lock(&lock);
	if (devs == NULL)
		devs = calloc(fabric->topology->ndevices, sizeof(*devs));
	if (devs != NULL && devs[index] == NULL) {
		devs[index] = calloc(1, sizeof(**devs));
		if (devs[index] != NULL) {
			char pci[13], name[32];

			devs[index]->info = devinfo;
			devs[index]->fabric = fabric;
			sdpu_pci_format(&devinfo->pci, pci);
			snprintf(name, sizeof(name), "%s (%s)", pci, devinfo->dpu_side ? "dpu" : "host");
			sdpu_stat_open(&devs[index]->stat, SDPU_STAT_DEVICE, name, NULL, 0);
			sdpu_faults_device(pci, devinfo->dpu_side);
		}
	}
	if (devs == NULL || devs[index] == NULL) {
		pthread_mutex_unlock(&lock);
		return DOCA_ERROR_NO_MEMORY;
	}
	devs[index]->refs++;
	*dev = devs[index];
	pthread_mutex_unlock(&lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_close(struct doca_dev *dev)
{
	doca_error_t err = DOCA_SUCCESS;

	if (dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (dev->refs == 1 && dev->users > 0) {
		char pci[13];

		sdpu_pci_format(&dev->info->pci, pci);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "device %s is still used by %d context(s) or representor(s)", pci,
			     dev->users);
		err = DOCA_ERROR_IN_USE;
	} else if (--dev->refs == 0) {
		devs[dev->info - dev->fabric->topology->devices] = NULL;
		sdpu_stat_close(&dev->stat);
		free(dev);
	}
	pthread_mutex_unlock(&lock);
	return err;
}

struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev)
{
	return dev == NULL ? NULL : dev->info;
}

void sdpu_dev_use(struct doca_dev *dev, int delta)
{
	pthread_mutex_lock(&lock);
	dev->users += delta;
	pthread_mutex_unlock(&lock);
}

void sdpu_rep_use(struct doca_dev_rep *rep, int delta)
{
	pthread_mutex_lock(&lock);
	rep->users += delta;
	pthread_mutex_unlock(&lock);
}

doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter, struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep)
{
	struct doca_devinfo_rep **list;
	bool net, emulated;
	uint32_t n = 0;

	if (dev == NULL || dev_list_rep == NULL || nb_devs_rep == NULL ||
	    (filter & ~(DOCA_DEVINFO_REP_FILTER_NET | DOCA_DEVINFO_REP_FILTER_EMULATED)) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dev->info->dpu_side) {
		char pci[13];

		sdpu_pci_format(&dev->info->pci, pci);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "%s is a host function; representors are only available on the DPU", pci);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	net = filter == DOCA_DEVINFO_REP_FILTER_ALL || (filter & DOCA_DEVINFO_REP_FILTER_NET) != 0;
	emulated = filter == DOCA_DEVINFO_REP_FILTER_ALL || (filter & DOCA_DEVINFO_REP_FILTER_EMULATED) != 0;
	list = calloc(dev->info->nreps + 1, sizeof(*list));
	if (list == NULL)
		return DOCA_ERROR_NO_MEMORY;
	for (size_t i = 0; i < dev->info->nreps; i++)
		if (dev->info->reps[i].emulated ? emulated : net)
			list[n++] = &dev->info->reps[i];
	*dev_list_rep = list;
	*nb_devs_rep = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep)
{
	if (dev_list_rep == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	free(dev_list_rep);
	return DOCA_SUCCESS;
}

/* The open Arm device a representor is reached through, or NULL. */
static struct doca_dev *arm_of(const struct doca_devinfo_rep *info)
{
	const struct sdpu_fabric *fabric;

	if (devs == NULL || sdpu_fabric_join(&fabric) != DOCA_SUCCESS)
		return NULL;
	for (size_t i = 0; i < fabric->topology->ndevices; i++)
		if (devs[i] != NULL && sdpu_pci_equal(&devs[i]->info->pci, &info->arm))
			return devs[i];
	return NULL;
}

doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep)
{
	struct doca_dev_rep *rep = NULL;
	struct doca_dev *arm;

	if (devinfo == NULL || dev_rep == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nreps_open && rep == NULL; i++)
		if (reps[i]->info == devinfo)
			rep = reps[i];
	if (rep == NULL) {
		struct doca_dev_rep **grown;

		arm = arm_of(devinfo);
		if (arm == NULL) {
			pthread_mutex_unlock(&lock);
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the Arm device of the representor is not open");
			return DOCA_ERROR_BAD_STATE;
		}
		grown = realloc(reps, (nreps_open + 1) * sizeof(*reps));
		rep = grown != NULL ? calloc(1, sizeof(*rep)) : NULL;
		if (grown != NULL)
			reps = grown;
		if (rep == NULL) {
			pthread_mutex_unlock(&lock);
			return DOCA_ERROR_NO_MEMORY;
		}
		rep->info = devinfo;
		rep->dev = arm;
		arm->users++;
		reps[nreps_open++] = rep;
	}
	rep->refs++;
	*dev_rep = rep;
	pthread_mutex_unlock(&lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev)
{
	doca_error_t err = DOCA_SUCCESS;

	if (dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (dev->refs == 1 && dev->users > 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "the representor is still used by %d context(s)", dev->users);
		err = DOCA_ERROR_IN_USE;
	} else if (--dev->refs == 0) {
		for (size_t i = 0; i < nreps_open; i++)
			if (reps[i] == dev)
				reps[i] = reps[--nreps_open];
		dev->dev->users--;
		free(dev);
		if (nreps_open == 0) {
			free(reps);
			reps = NULL;
		}
	}
	pthread_mutex_unlock(&lock);
	return err;
}

struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep)
{
	return dev_rep == NULL ? NULL : dev_rep->info;
}
