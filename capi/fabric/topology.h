/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology (docs/topology.md): which PCI functions exist, on which side, which Arm device represents
 * each host function, and the capabilities every device reports. The same embedded default and the same
 * validation of a $SOFTDPU_TOPOLOGY file as the TypeScript side's src/fabric/topology.ts, so that every
 * process of a fabric agrees on server keys and capabilities.
 */
#ifndef SOFTDPU_CAPI_TOPOLOGY_H_
#define SOFTDPU_CAPI_TOPOLOGY_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>
#include <doca_types.h>

#include "fabric/pci.h"

/* Every capability a topology may set, in DEFAULT_CAPS's order (docs/topology.md's table). */
enum sdpu_cap {
	SDPU_CAP_COMCH_MAX_NAME_LEN,
	SDPU_CAP_COMCH_MAX_MSG_SIZE,
	SDPU_CAP_COMCH_MAX_RECV_QUEUE_SIZE,
	SDPU_CAP_COMCH_MAX_CLIENTS,
	SDPU_CAP_COMCH_MAX_SEND_TASKS,
	SDPU_CAP_CONSUMER_MAX_NUM_TASKS,
	SDPU_CAP_CONSUMER_MAX_BUF_SIZE,
	SDPU_CAP_CONSUMER_MAX_BUF_LIST_LEN,
	SDPU_CAP_CONSUMER_MAX_CONSUMERS,
	SDPU_CAP_CONSUMER_MAX_IMM_DATA_LEN,
	SDPU_CAP_PRODUCER_MAX_NUM_TASKS,
	SDPU_CAP_PRODUCER_MAX_BUF_SIZE,
	SDPU_CAP_PRODUCER_MAX_BUF_LIST_LEN,
	SDPU_CAP_PRODUCER_MAX_PRODUCERS,
	SDPU_CAP_SE_CREATE_FROM_EXPORT,
	SDPU_CAP_SE_REMOTE_NET_CREATE_FROM_EXPORT,
	SDPU_CAP_SE_EXPORT_TO_REMOTE_PCI,
	SDPU_CAP_SE_EXPORT_TO_REMOTE_NET,
	SDPU_CAP_SE_EXPORT_TO_DPA,
	SDPU_CAP_SE_EXPORT_TO_GPU,
	SDPU_CAP_SE_REMOTE_NET_EXPORT_TO_DPA,
	SDPU_CAP_SE_REMOTE_NET_EXPORT_TO_GPU,
	SDPU_CAP_SE_TASK_GET,
	SDPU_CAP_SE_TASK_NOTIFY_SET,
	SDPU_CAP_SE_TASK_NOTIFY_ADD,
	SDPU_CAP_SE_TASK_WAIT_EQ,
	SDPU_CAP_SE_TASK_WAIT_NEQ,
	SDPU_CAP_MMAP_EXPORT_PCI,
	SDPU_CAP_MMAP_CREATE_FROM_EXPORT_PCI,
	SDPU_CAP_DPA_NUM_EUS,
	SDPU_CAP_DPA_MAX_DPAS,
	SDPU_CAP_DPA_MAX_THREADS_PER_KERNEL,
	SDPU_CAP_DPA_KERNEL_MAX_RUN_TIME_MS,
	SDPU_CAP_DPA_HEAP_SIZE,
	SDPU_CAP_DPA_MAX_OBJECTS,
	SDPU_CAP_COUNT,
};

struct sdpu_caps {
	uint64_t value[SDPU_CAP_COUNT];
};

/* A representor of a host function, as its Arm device sees it (doca_devinfo_rep). */
struct doca_devinfo_rep {
	struct sdpu_pci pci;
	enum doca_pci_func_type type;
	char iface[64];
	char vuid[128];
	uint16_t vhca_id;
	bool hotplug;
	bool emulated;
	/* The Arm device it is reached through. */
	struct sdpu_pci arm;
};

/* A device a process can open (doca_devinfo): a DPU Arm device or a host function. */
struct doca_devinfo {
	struct sdpu_pci pci;
	bool dpu_side;
	char dpu[65];
	char ibdev[256];
	char iface[256];
	uint8_t mac[6];
	uint16_t vhca_id;
	/* Host functions only. */
	enum doca_pci_func_type type;
	/* Arm devices only. */
	struct doca_devinfo_rep *reps;
	size_t nreps;
	struct sdpu_caps caps;
};

struct sdpu_topology {
	/* "default" or the file's path. */
	char *source;
	struct doca_devinfo *devices;
	size_t ndevices;
};

/*
 * The topology $SOFTDPU_TOPOLOGY names, else the embedded default. BAD_CONFIG (with one log line naming
 * the field, as `$.dpus[0].host[1].pci: ...`) for a file that cannot be read or says something wrong.
 */
doca_error_t sdpu_topology_load(struct sdpu_topology **out);

/* sdpu_topology_load's parse and checks of `len` bytes of JSON `text` (no NUL needed), named `source` in messages. */
doca_error_t sdpu_topology_parse(const char *text, size_t len, const char *source, struct sdpu_topology **out);

void sdpu_topology_free(struct sdpu_topology *topology);

/* The representor (on some Arm device) of host function `pci`, or NULL. */
const struct doca_devinfo_rep *sdpu_topology_rep_of(const struct sdpu_topology *topology, const struct sdpu_pci *pci);

/* The device at `pci`, or NULL. */
const struct doca_devinfo *sdpu_topology_find(const struct sdpu_topology *topology, const struct sdpu_pci *pci);

#endif /* SOFTDPU_CAPI_TOPOLOGY_H_ */
