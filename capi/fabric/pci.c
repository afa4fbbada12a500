/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/pci.h: the two written forms of a PCI address (the TypeScript side's src/fabric/pci.ts). */
#include "fabric/pci.h"

#include <stdio.h>
#include <string.h>

#include "core/json.h"

/* `digits` hex digits at text[0..]; -1 if one is not a hex digit. */
static long field(const char *text, int digits)
{
	long value = 0;

	for (int i = 0; i < digits; i++) {
		int d = sdpu_hex_digit(text[i]);

		if (d < 0)
			return -1;
		value = value * 16 + d;
	}
	return value;
}

bool sdpu_pci_parse(const char *text, size_t len, struct sdpu_pci *out)
{
	long domain = 0, bus, device, function;

	if (len == 12) {
		if (text[4] != ':')
			return false;
		domain = field(text, 4);
		text += 5;
	} else if (len != 7) {
		return false;
	}
	if (text[2] != ':' || text[5] != '.' || text[6] < '0' || text[6] > '7')
		return false;
	bus = field(text, 2);
	device = field(text + 3, 2);
	function = text[6] - '0';
	if (domain < 0 || bus < 0 || device < 0 || device > 0x1f)
		return false;
	out->domain = (uint16_t)domain;
	out->bus = (uint8_t)bus;
	out->device = (uint8_t)device;
	out->function = (uint8_t)function;
	return true;
}

void sdpu_pci_format(const struct sdpu_pci *pci, char out[13])
{
	snprintf(out, 13, "%04x:%02x:%02x.%c", pci->domain, pci->bus, pci->device, (char)('0' + (pci->function & 7)));
}

bool sdpu_pci_equal(const struct sdpu_pci *a, const struct sdpu_pci *b)
{
	return a->domain == b->domain && a->bus == b->bus && a->device == b->device && a->function == b->function;
}

bool sdpu_pci_matches(const struct sdpu_pci *pci, const char *text)
{
	struct sdpu_pci other;

	return text != NULL && sdpu_pci_parse(text, strlen(text), &other) && sdpu_pci_equal(pci, &other);
}
