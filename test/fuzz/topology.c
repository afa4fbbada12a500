/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A $SOFTDPU_TOPOLOGY file (docs/topology.md): the input is the file's bytes, not NUL-terminated, read by
 * the JSON reader (capi/core/json.c) and the topology's checks (capi/fabric/topology.c,
 * sdpu_topology_parse) as sdpu_topology_load reads them; a topology that passes is then looked up the
 * way devices and clients do.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <doca_error.h>
#include <doca_log.h>

#include "fabric/topology.h"
#include "seeds.h"

static const char DOCS_EXAMPLE[] =
	"/* docs/topology.md's example, and every field */\n"
	"{\"caps\": {\"comch\": {\"maxMsgSize\": 256}, \"dpa\": {\"numEus\": 2}},\n"
	" \"dpus\": [\n"
	"  {\"name\": \"left\", \"arm\": [{\"pci\": \"03:00.0\", \"ibdev\": \"mlx5_0\", \"iface\": \"p0\", \"mac\": \"02:00:00:00:00:01\"}],\n"
	"   \"host\": [{\"pci\": \"b1:00.0\"}, {\"pci\": \"b1:00.2\", \"type\": \"VF\", \"hotplug\": true},\n"
	"            {\"pci\": \"0000:b1:00.5\", \"type\": \"SF\", \"sfnum\": 7, \"ibdev\": \"mlx5_\\u0033\"}]},\n"
	"  {\"name\": \"right\", \"arm\": [{\"pci\": \"04:00.0\"}, {\"pci\": \"04:00.1\"}], // two Arm devices\n"
	"   \"host\": [{\"pci\": \"c1:00.0\", \"mac\": \"02:00:00:00:00:0a\"}, {\"pci\": \"c1:00.1\", \"arm\": \"04:00.1\", \"emulated\": true}],\n"
	"   \"caps\": {\"comch\": {\"maxClients\": 2}, \"syncEvent\": {\"exportToRemoteNet\": false}}}\n"
	" ]}\n";
static const char SMALL[] = "{\"dpus\": [{\"name\": \"bf0\", \"arm\": [{\"pci\": \"03:00.0\"}], \"host\": [{\"pci\": \"b1:00.0\", \"type\": \"PF\"}]}]}";
static const char VALUES[] = "[null, true, false, -0.5e+3, 1E2, \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\ud83d\\ude00\", {}, [[]]]";

static void write_seeds(void)
{
	seed("docs-example.json", DOCS_EXAMPLE, sizeof(DOCS_EXAMPLE) - 1);
	seed("small.json", SMALL, sizeof(SMALL) - 1);
	seed("values.json", VALUES, sizeof(VALUES) - 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	seed_mode();
	/* Every refusal is one ERROR line: not millions of them. */
	if (getenv("SOFTDPU_FUZZ_LOG") == NULL) /* set it to see why an input is refused (replaying one) */
		doca_log_level_set_global_sdk_limit(DOCA_LOG_LEVEL_DISABLE);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly `size` bytes: a read past the text is AddressSanitizer's to see. */
	char *text = malloc(size > 0 ? size : 1);
	struct sdpu_topology *t;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	if (sdpu_topology_parse(text, size, "fuzz", &t) == DOCA_SUCCESS) {
		for (size_t d = 0; d < t->ndevices; d++) {
			const struct doca_devinfo *dev = &t->devices[d];

			if (sdpu_topology_find(t, &dev->pci) != dev)
				abort(); /* two devices of one address: the checks let a duplicate through */
			for (size_t r = 0; r < dev->nreps; r++)
				if (sdpu_topology_rep_of(t, &dev->reps[r].pci) == NULL)
					abort();
		}
		sdpu_topology_free(t);
	}
	free(text);
	return 0;
}
