/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCI addresses as DOCA writes them: DDDD:BB:DD.F, or BB:DD.F with domain 0000 (hex, any case; the
 * device at most 1f, the function 0 to 7). Written back in DOCA's 12-character lower-case form;
 * compared whichever form each side was written in.
 */
#ifndef SOFTDPU_CAPI_PCI_H_
#define SOFTDPU_CAPI_PCI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sdpu_pci {
	uint16_t domain;
	uint8_t bus;
	uint8_t device;
	uint8_t function;
};

/* Parses `len` bytes of `text` (no NUL needed); false when they are not an address. */
bool sdpu_pci_parse(const char *text, size_t len, struct sdpu_pci *out);

/* DDDD:BB:DD.F and its NUL (DOCA_DEVINFO_PCI_ADDR_SIZE, 13 bytes). */
void sdpu_pci_format(const struct sdpu_pci *pci, char out[13]);

bool sdpu_pci_equal(const struct sdpu_pci *a, const struct sdpu_pci *b);

/* Whether NUL-terminated `text` is an address equal to `pci` (false for one that is not an address). */
bool sdpu_pci_matches(const struct sdpu_pci *pci, const char *text);

#endif /* SOFTDPU_CAPI_PCI_H_ */
