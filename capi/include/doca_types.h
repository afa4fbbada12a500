/* SPDX-License-Identifier: Apache-2.0 */
/*
 * softdpu's doca_types.h: the plain types shared by every DOCA library (user data, handles, access
 * flags, PCI function types). Written for softdpu from DOCA's public API reference; no NVIDIA text.
 * The numbers are ABI: test/capi-abi.test.ts checks them against the reference.
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <stdint.h>
#include <linux/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A file descriptor on Linux: what a progress engine's notification handle is. */
typedef int doca_event_handle_t;
typedef doca_event_handle_t doca_notification_handle_t;
#define doca_event_invalid_handle -1

#define DOCA_GID_BYTE_LENGTH 16

/* The user-data slot of every DOCA object, task and callback: a pointer or a 64-bit number. */
union doca_data {
	void *ptr;
	uint64_t u64;
};

/* A list of memory pieces (address, length, next). */
struct doca_gather_list {
	void *addr;
	uint64_t len;
	struct doca_gather_list *next;
};

/* Who may access a memory map, a bitwise OR (doca_mmap_set_permissions). */
enum doca_access_flag {
	DOCA_ACCESS_FLAG_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_FLAG_LOCAL_READ_WRITE = 1 << 0,
	DOCA_ACCESS_FLAG_RDMA_READ = 1 << 1,
	DOCA_ACCESS_FLAG_RDMA_WRITE = 1 << 2,
	DOCA_ACCESS_FLAG_RDMA_ATOMIC = 1 << 3,
	DOCA_ACCESS_FLAG_PCI_READ_ONLY = 1 << 4,
	DOCA_ACCESS_FLAG_PCI_READ_WRITE = 1 << 5,
	DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING = 1 << 6,
};

enum doca_pci_func_type {
	DOCA_PCI_FUNC_TYPE_PF = 0,
	DOCA_PCI_FUNC_TYPE_VF = 1,
	DOCA_PCI_FUNC_TYPE_SF = 2,
};

/* Big-endian integers, as the kernel's headers spell them. */
typedef __be16 doca_be16_t;
typedef __be32 doca_be32_t;
typedef __be64 doca_be64_t;

enum doca_gpu_mem_type {
	DOCA_GPU_MEM_TYPE_GPU = 0,
	DOCA_GPU_MEM_TYPE_GPU_CPU = 1,
	DOCA_GPU_MEM_TYPE_CPU_GPU = 2,
};

enum doca_eth_wait_on_time_type {
	DOCA_ETH_WAIT_ON_TIME_TYPE_NONE = 0,
	DOCA_ETH_WAIT_ON_TIME_TYPE_NATIVE = 1,
	DOCA_ETH_WAIT_ON_TIME_TYPE_DPDK = 2,
};

enum doca_mtu_size {
	DOCA_MTU_SIZE_256_BYTES = 0,
	DOCA_MTU_SIZE_512_BYTES = 1,
	DOCA_MTU_SIZE_1K_BYTES = 2,
	DOCA_MTU_SIZE_2K_BYTES = 3,
	DOCA_MTU_SIZE_4K_BYTES = 4,
	DOCA_MTU_SIZE_RAW_ETHERNET = 5,
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
