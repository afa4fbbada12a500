/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opened devices and representors (struct doca_dev, struct doca_dev_rep), and what the contexts made on
 * them keep: the fabric, the devinfo (topology entry) and a count of users, so that closing the last
 * reference of something still used is refused with IN_USE.
 */
#ifndef SOFTDPU_CAPI_DEV_H_
#define SOFTDPU_CAPI_DEV_H_

#include <doca_dev.h>

#include "fabric/fabric.h"
#include "fabric/introspect.h"

struct doca_dev {
	struct doca_devinfo *info;
	const struct sdpu_fabric *fabric;
	int refs;
	/* Contexts and open representors that use it. */
	int users;
	/* Its record for observers: "<pci> (<side>)". */
	struct sdpu_stat stat;
};

struct doca_dev_rep {
	struct doca_devinfo_rep *info;
	struct doca_dev *dev;
	int refs;
	int users;
};

/* A context starts or stops using a device or representor (under the devices' lock). */
void sdpu_dev_use(struct doca_dev *dev, int delta);
void sdpu_rep_use(struct doca_dev_rep *rep, int delta);

#endif /* SOFTDPU_CAPI_DEV_H_ */
