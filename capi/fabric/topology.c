/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fabric/topology.h: src/fabric/topology.ts's rules, field by field, so that a file one side accepts the
 * other accepts too and both derive the same devices (names, interfaces, MACs, VHCA ids, representors)
 * and capabilities from it. (This reader also skips C comments, which JSON.parse would refuse.)
 */
#include "fabric/topology.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/json.h"

static const char DEFAULT_JSON[] = "{\"dpus\": [{\"name\": \"bf0\", \"arm\": [{\"pci\": \"03:00.0\"}], \"host\": ["
				   "{\"pci\": \"b1:00.0\", \"type\": \"PF\"}, {\"pci\": \"b1:00.2\", \"type\": \"VF\"},"
				   " {\"pci\": \"b1:00.3\", \"type\": \"VF\"}]}]}";

/* DEFAULT_CAPS and CAP_LIMITS, in enum sdpu_cap's order. */
static const struct {
	const char *group;
	const char *name;
	bool boolean;
	/* A boolean that cannot be true here (no GPU). */
	bool unavailable;
	uint64_t fallback;
	uint64_t limit;
} CAPS[SDPU_CAP_COUNT] = {
	{"comch", "maxNameLen", false, false, 128, 4096},
	{"comch", "maxMsgSize", false, false, 4080, 1 << 20},
	{"comch", "maxRecvQueueSize", false, false, 4096, 1 << 16},
	{"comch", "maxClients", false, false, 512, 1 << 16},
	{"comch", "maxSendTasks", false, false, 8192, 1 << 20},
	{"consumer", "maxNumTasks", false, false, 8192, 1 << 20},
	{"consumer", "maxBufSize", false, false, 1 << 30, 4294967296ULL - 4096},
	{"consumer", "maxBufListLen", false, false, 1, 1},
	{"consumer", "maxConsumers", false, false, 64, 1 << 16},
	{"consumer", "maxImmDataLen", false, false, 32, 32},
	{"producer", "maxNumTasks", false, false, 8192, 1 << 20},
	{"producer", "maxBufSize", false, false, 1 << 30, 4294967296ULL - 4096},
	{"producer", "maxBufListLen", false, false, 1, 1},
	{"producer", "maxProducers", false, false, 64, 1 << 16},
	{"syncEvent", "createFromExport", true, false, 1, 1},
	{"syncEvent", "remoteNetCreateFromExport", true, false, 1, 1},
	{"syncEvent", "exportToRemotePci", true, false, 1, 1},
	{"syncEvent", "exportToRemoteNet", true, false, 1, 1},
	{"syncEvent", "exportToDpa", true, false, 1, 1},
	{"syncEvent", "exportToGpu", true, true, 0, 1},
	{"syncEvent", "remoteNetExportToDpa", true, false, 1, 1},
	{"syncEvent", "remoteNetExportToGpu", true, true, 0, 1},
	{"syncEvent", "taskGet", true, false, 1, 1},
	{"syncEvent", "taskNotifySet", true, false, 1, 1},
	{"syncEvent", "taskNotifyAdd", true, false, 1, 1},
	{"syncEvent", "taskWaitEq", true, false, 1, 1},
	{"syncEvent", "taskWaitNeq", true, false, 1, 1},
	{"mmap", "exportPci", true, false, 1, 1},
	{"mmap", "createFromExportPci", true, false, 1, 1},
	{"dpa", "numEus", false, false, 4, 32},
	{"dpa", "maxDpas", false, false, 28, 1024},
	{"dpa", "maxThreadsPerKernel", false, false, 256, 1 << 16},
	{"dpa", "kernelMaxRunTimeMs", false, false, 5000, 3600000},
	{"dpa", "heapSize", false, false, 64 << 20, 1 << 30},
	{"dpa", "maxObjects", false, false, 4096, 1 << 15},
};

static const char *const GROUPS[] = {"comch", "consumer", "producer", "syncEvent", "mmap", "dpa", NULL};

struct parse {
	char error[512];
	struct doca_devinfo *devices;
	size_t ndevices;
	/* Every PCI address claimed so far, with the path that claimed it. */
	struct {
		struct sdpu_pci pci;
		char path[64];
	} *claims;
	size_t nclaims;
	char (*names)[65];
	size_t nnames;
	unsigned vhca;
};

static bool fail(struct parse *ps, const char *path, const char *format, ...) __attribute__((format(printf, 3, 4)));

static bool fail(struct parse *ps, const char *path, const char *format, ...)
{
	va_list args;
	int n = snprintf(ps->error, sizeof(ps->error), "%s: ", path);

	va_start(args, format);
	if (n > 0 && (size_t)n < sizeof(ps->error))
		vsnprintf(ps->error + n, sizeof(ps->error) - (size_t)n, format, args);
	va_end(args);
	return false;
}

/* The last member named `key` (JSON.parse keeps the last of duplicates), or NULL. */
static const struct sdpu_json *member(const struct sdpu_json *obj, const char *key)
{
	for (size_t i = obj->count; i > 0; i--)
		if (strcmp(obj->keys[i - 1], key) == 0)
			return &obj->items[i - 1];
	return NULL;
}

static bool object(struct parse *ps, const struct sdpu_json *v, const char *path, const char *const *keys)
{
	if (v == NULL || v->type != SDPU_JSON_OBJECT)
		return fail(ps, path, "must be an object");
	for (size_t i = 0; i < v->count; i++) {
		bool known = false;

		for (size_t k = 0; keys[k] != NULL; k++)
			known |= strcmp(v->keys[i], keys[k]) == 0;
		if (!known) {
			char allowed[256] = "", field[192];

			for (size_t k = 0; keys[k] != NULL; k++)
				snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s", k ? ", " : "", keys[k]);
			snprintf(field, sizeof(field), "%s.%s", path, v->keys[i]);
			return fail(ps, field, "unknown field (allowed: %s)", allowed);
		}
	}
	return true;
}

static bool array(struct parse *ps, const struct sdpu_json *v, const char *path, size_t min)
{
	if (v == NULL || v->type != SDPU_JSON_ARRAY)
		return fail(ps, path, "must be an array");
	if (v->count < min)
		return fail(ps, path, "must have at least %zu entr%s", min, min == 1 ? "y" : "ies");
	return true;
}

/* The length JavaScript gives a UTF-8 string (UTF-16 code units). */
static size_t js_length(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) != 0x80 ? ((*p & 0xf8) == 0xf0 ? 2 : 1) : 0;
	return n;
}

/* An optional string field (1 to 255 characters), or `fallback` when absent. */
static bool string(struct parse *ps, const struct sdpu_json *obj, const char *key, const char *path, const char *fallback,
		   char *out, size_t size)
{
	const struct sdpu_json *v = member(obj, key);

	if (v == NULL) {
		snprintf(out, size, "%s", fallback);
		return true;
	}
	if (v->type != SDPU_JSON_STRING || js_length(v->text) == 0 || js_length(v->text) > 255 || strlen(v->text) >= size) {
		char field[192];

		snprintf(field, sizeof(field), "%s.%s", path, key);
		return fail(ps, field, "must be a non-empty string of at most 255 characters");
	}
	snprintf(out, size, "%s", v->text);
	return true;
}

static bool pci_field(struct parse *ps, const struct sdpu_json *obj, const char *key, const char *path, struct sdpu_pci *out)
{
	const struct sdpu_json *v = member(obj, key);
	char field[192];

	snprintf(field, sizeof(field), "%s.%s", path, key);
	if (v == NULL || v->type != SDPU_JSON_STRING)
		return fail(ps, field, "is required and must be a PCI address string");
	if (!sdpu_pci_parse(v->text, strlen(v->text), out))
		return fail(ps, field, "\"%s\" is not a PCI address (BB:DD.F or DDDD:BB:DD.F)", v->text);
	return true;
}

static bool claim(struct parse *ps, const struct sdpu_pci *pci, const char *path)
{
	void *grown;

	for (size_t i = 0; i < ps->nclaims; i++)
		if (sdpu_pci_equal(&ps->claims[i].pci, pci)) {
			char text[13];

			sdpu_pci_format(pci, text);
			return fail(ps, path, "PCI address %s is already used by %s", text, ps->claims[i].path);
		}
	grown = realloc(ps->claims, (ps->nclaims + 1) * sizeof(*ps->claims));
	if (grown == NULL)
		return fail(ps, path, "out of memory");
	ps->claims = grown;
	ps->claims[ps->nclaims].pci = *pci;
	snprintf(ps->claims[ps->nclaims].path, sizeof(ps->claims[0].path), "%s", path);
	ps->nclaims++;
	return true;
}

/* A JSON number that is an integer (Number.isInteger of JSON.parse's value). */
static bool integer(const struct sdpu_json *v, double *out)
{
	if (v == NULL || v->type != SDPU_JSON_NUMBER)
		return false;
	*out = strtod(v->text, NULL);
	return isfinite(*out) && *out == floor(*out);
}

static bool merge_caps(struct parse *ps, struct sdpu_caps *caps, const struct sdpu_json *override, const char *path)
{
	if (override == NULL)
		return true;
	if (!object(ps, override, path, GROUPS))
		return false;
	for (size_t g = 0; g < override->count; g++) {
		const char *group = override->keys[g];
		const struct sdpu_json *values = &override->items[g];
		const char *fields[16];
		size_t n = 0;
		char gpath[192];

		for (size_t c = 0; c < SDPU_CAP_COUNT; c++)
			if (strcmp(CAPS[c].group, group) == 0)
				fields[n++] = CAPS[c].name;
		fields[n] = NULL;
		snprintf(gpath, sizeof(gpath), "%s.%s", path, group);
		if (!object(ps, values, gpath, fields))
			return false;
		for (size_t f = 0; f < values->count; f++) {
			const struct sdpu_json *v = &values->items[f];
			char fpath[256];
			size_t c = 0;
			double number;

			while (strcmp(CAPS[c].group, group) != 0 || strcmp(CAPS[c].name, values->keys[f]) != 0)
				c++;
			snprintf(fpath, sizeof(fpath), "%s.%s", gpath, values->keys[f]);
			if (CAPS[c].boolean) {
				if (v->type != SDPU_JSON_BOOL)
					return fail(ps, fpath, "must be true or false");
				if (v->boolean && CAPS[c].unavailable)
					return fail(ps, fpath, "cannot be true: softdpu has no GPU");
				caps->value[c] = v->boolean;
			} else {
				if (!integer(v, &number) || number < 1 || number > (double)CAPS[c].limit)
					return fail(ps, fpath, "must be an integer in [1, %llu], got %s", (unsigned long long)CAPS[c].limit,
						    v->type == SDPU_JSON_NUMBER || v->type == SDPU_JSON_STRING ? v->text : sdpu_json_type_name(v->type));
				caps->value[c] = (uint64_t)number;
			}
		}
	}
	if (caps->value[SDPU_CAP_COMCH_MAX_NAME_LEN] < 2) {
		char field[192];

		snprintf(field, sizeof(field), "%s.comch.maxNameLen", path);
		return fail(ps, field, "must leave room for one character and the NUL");
	}
	return true;
}

static bool parse_mac(const char *text, uint8_t mac[6])
{
	if (strlen(text) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		unsigned value;
		char digits[3] = {text[3 * i], text[3 * i + 1], 0};

		if ((i < 5 && text[3 * i + 2] != ':') || !strchr("0123456789abcdefABCDEF", digits[0]) || !digits[0] ||
		    !strchr("0123456789abcdefABCDEF", digits[1]) || !digits[1] || sscanf(digits, "%x", &value) != 1)
			return false;
		mac[i] = (uint8_t)value;
	}
	return true;
}

static struct doca_devinfo *new_device(struct parse *ps)
{
	void *grown = realloc(ps->devices, (ps->ndevices + 1) * sizeof(*ps->devices));

	if (grown == NULL)
		return NULL;
	ps->devices = grown;
	memset(&ps->devices[ps->ndevices], 0, sizeof(ps->devices[0]));
	return &ps->devices[ps->ndevices++];
}

/* The fields every device has: ibdev, iface and mac (defaults given), VHCA id, caps. */
static bool device_fields(struct parse *ps, struct doca_devinfo *dev, const struct sdpu_json *raw, const char *path,
			  const char *ibdev, const char *iface, unsigned dpu_index, const struct sdpu_caps *caps)
{
	char mac[256], fallback[32];

	snprintf(fallback, sizeof(fallback), "02:%02x:%s:%02x:%02x:%02x", dpu_index, dev->dpu_side ? "0d" : "0a", dev->pci.bus,
		 dev->pci.device, dev->pci.function);
	if (!string(ps, raw, "mac", path, fallback, mac, sizeof(mac)))
		return false;
	if (!parse_mac(mac, dev->mac)) {
		char field[192];

		snprintf(field, sizeof(field), "%s.mac", path);
		return fail(ps, field, "\"%s\" is not a MAC address", mac);
	}
	dev->vhca_id = (uint16_t)++ps->vhca;
	dev->caps = *caps;
	return string(ps, raw, "ibdev", path, ibdev, dev->ibdev, sizeof(dev->ibdev)) &&
	       string(ps, raw, "iface", path, iface, dev->iface, sizeof(dev->iface));
}

struct host_fn {
	const struct sdpu_json *raw;
	struct sdpu_pci pci;
	enum doca_pci_func_type type;
	char iface[64];
};

static const char *const DPU_KEYS[] = {"name", "arm", "host", "caps", NULL};
static const char *const ARM_KEYS[] = {"pci", "ibdev", "iface", "mac", NULL};
static const char *const HOST_KEYS[] = {"pci", "type", "ibdev", "iface", "mac", "arm", "emulated", "hotplug", "sfnum", NULL};

/* One host function: checked, its representor added to its Arm device's list. */
static bool host_function(struct parse *ps, const struct sdpu_json *raw, const char *hp, unsigned d, const char *name,
			  struct doca_devinfo *arms, size_t narms, unsigned counters[3], struct host_fn *fn)
{
	const struct sdpu_json *type = member(raw, "type"), *sfnum = member(raw, "sfnum"), *arm = member(raw, "arm");
	static const char *const TYPES[] = {"PF", "VF", "SF"};
	struct doca_devinfo *owner = NULL;
	struct doca_devinfo_rep *rep;
	struct sdpu_pci arm_pci;
	char field[192], rep_iface[64];
	double sf = 0;
	unsigned n;

	if (!object(ps, raw, hp, HOST_KEYS) || !pci_field(ps, raw, "pci", hp, &fn->pci) || !claim(ps, &fn->pci, hp))
		return false;
	fn->raw = raw;
	fn->type = DOCA_PCI_FUNC_TYPE_PF;
	if (type != NULL && type->type != SDPU_JSON_NULL) {
		int t = -1;

		for (int i = 0; i < 3; i++)
			if (type->type == SDPU_JSON_STRING && strcmp(type->text, TYPES[i]) == 0)
				t = i;
		if (t < 0) {
			snprintf(field, sizeof(field), "%s.type", hp);
			return fail(ps, field, "%s is not PF, VF or SF", type->type == SDPU_JSON_STRING ? type->text : sdpu_json_type_name(type->type));
		}
		fn->type = (enum doca_pci_func_type)t;
	}
	for (int i = 0; i < 2; i++) {
		const char *key = i ? "hotplug" : "emulated";
		const struct sdpu_json *v = member(raw, key);

		if (v != NULL && v->type != SDPU_JSON_BOOL) {
			snprintf(field, sizeof(field), "%s.%s", hp, key);
			return fail(ps, field, "must be true or false");
		}
	}
	/* At most 2^53 - 1: both sides name the SF's interfaces after it, so it must be a number both hold exactly. */
	if (sfnum != NULL && (fn->type != DOCA_PCI_FUNC_TYPE_SF || !integer(sfnum, &sf) || sf < 0 || sf > 9007199254740991.0)) {
		snprintf(field, sizeof(field), "%s.sfnum", hp);
		return fail(ps, field, "is only for SF functions and must be an integer in [0, 2^53 - 1]");
	}
	if (arm == NULL)
		arm_pci = arms[0].pci;
	else if (!pci_field(ps, raw, "arm", hp, &arm_pci))
		return false;
	for (size_t a = 0; a < narms && owner == NULL; a++)
		if (sdpu_pci_equal(&arms[a].pci, &arm_pci))
			owner = &arms[a];
	if (owner == NULL) {
		char text[13];

		sdpu_pci_format(&arm_pci, text);
		snprintf(field, sizeof(field), "%s.arm", hp);
		return fail(ps, field, "%s is not an Arm device of %s", text, name);
	}
	n = counters[fn->type]++;
	unsigned long long sfn = sfnum != NULL ? (unsigned long long)sf : n;

	if (fn->type == DOCA_PCI_FUNC_TYPE_PF) {
		snprintf(fn->iface, sizeof(fn->iface), "ens%uf%unp%u", d + 1, n, n);
		snprintf(rep_iface, sizeof(rep_iface), "pf%uhpf", n);
	} else if (fn->type == DOCA_PCI_FUNC_TYPE_VF) {
		snprintf(fn->iface, sizeof(fn->iface), "ens%uf0v%u", d + 1, n);
		snprintf(rep_iface, sizeof(rep_iface), "pf0vf%u", n);
	} else {
		snprintf(fn->iface, sizeof(fn->iface), "en%uf0pf0sf%llu", d + 1, sfn);
		snprintf(rep_iface, sizeof(rep_iface), "en3f0pf0sf%llu", sfn);
	}
	rep = realloc(owner->reps, (owner->nreps + 1) * sizeof(*rep));
	if (rep == NULL)
		return fail(ps, hp, "out of memory");
	owner->reps = rep;
	rep = &owner->reps[owner->nreps++];
	memset(rep, 0, sizeof(*rep));
	rep->pci = fn->pci;
	rep->type = fn->type;
	snprintf(rep->iface, sizeof(rep->iface), "%s", rep_iface);
	for (size_t i = 0; name[i] && i < sizeof(rep->vuid) - 1; i++)
		rep->vuid[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 32) : name[i];
	snprintf(rep->vuid + strlen(rep->vuid), sizeof(rep->vuid) - strlen(rep->vuid), "%s", rep_iface);
	rep->vhca_id = (uint16_t)++ps->vhca;
	rep->hotplug = member(raw, "hotplug") != NULL && member(raw, "hotplug")->boolean;
	rep->emulated = member(raw, "emulated") != NULL && member(raw, "emulated")->boolean;
	rep->arm = owner->pci;
	return true;
}

static bool parse_dpu(struct parse *ps, const struct sdpu_json *raw, unsigned d, const struct sdpu_caps *fabric_caps)
{
	char dp[64], path[128], name[256], fallback[16], ibdev[32], iface[32];
	const struct sdpu_json *arm = NULL, *host;
	struct sdpu_caps caps = *fabric_caps;
	struct doca_devinfo *arms = NULL;
	struct host_fn *fns = NULL;
	size_t narms = 0, nfns = 0;
	unsigned counters[3] = {0, 0, 0};
	bool ok = false;

	snprintf(dp, sizeof(dp), "$.dpus[%u]", d);
	snprintf(fallback, sizeof(fallback), "bf%u", d);
	if (!object(ps, raw, dp, DPU_KEYS) || !string(ps, raw, "name", dp, fallback, name, sizeof(name)))
		return false;
	snprintf(path, sizeof(path), "%s.name", dp);
	if (strlen(name) > 64)
		return fail(ps, path, "\"%s\" is %zu bytes of UTF-8; at most 64", name, strlen(name));
	for (size_t i = 0; i < ps->nnames; i++)
		if (strcmp(ps->names[i], name) == 0)
			return fail(ps, path, "DPU name \"%s\" is used twice", name);
	void *grown = realloc(ps->names, (ps->nnames + 1) * sizeof(*ps->names));

	if (grown == NULL)
		return fail(ps, dp, "out of memory");
	ps->names = grown;
	snprintf(ps->names[ps->nnames++], sizeof(ps->names[0]), "%s", name);
	snprintf(path, sizeof(path), "%s.caps", dp);
	if (!merge_caps(ps, &caps, member(raw, "caps"), path))
		return false;
	snprintf(path, sizeof(path), "%s.arm", dp);
	arm = member(raw, "arm");
	if (!array(ps, arm, path, 1))
		return false;
	arms = calloc(arm->count, sizeof(*arms));
	host = member(raw, "host");
	if (host != NULL && host->type == SDPU_JSON_NULL)
		host = NULL;
	snprintf(path, sizeof(path), "%s.host", dp);
	if (arms == NULL || (host != NULL && !array(ps, host, path, 0)))
		goto out;
	for (size_t a = 0; a < arm->count; a++) {
		snprintf(path, sizeof(path), "%s.arm[%zu]", dp, a);
		if (!object(ps, &arm->items[a], path, ARM_KEYS) || !pci_field(ps, &arm->items[a], "pci", path, &arms[a].pci) ||
		    !claim(ps, &arms[a].pci, path))
			goto out;
		narms++;
	}
	fns = calloc(host != NULL && host->count ? host->count : 1, sizeof(*fns));
	if (fns == NULL)
		goto out;
	for (size_t h = 0; host != NULL && h < host->count; h++) {
		snprintf(path, sizeof(path), "%s.host[%zu]", dp, h);
		if (!host_function(ps, &host->items[h], path, d, name, arms, narms, counters, &fns[h]))
			goto out;
		nfns++;
	}
	for (size_t a = 0; a < narms; a++) {
		struct doca_devinfo *dev = new_device(ps);

		snprintf(path, sizeof(path), "%s.arm[%zu]", dp, a);
		snprintf(ibdev, sizeof(ibdev), "mlx5_%zu", a);
		snprintf(iface, sizeof(iface), "p%zu", a);
		if (dev == NULL)
			goto out;
		*dev = arms[a];
		arms[a].reps = NULL;
		dev->dpu_side = true;
		snprintf(dev->dpu, sizeof(dev->dpu), "%s", name);
		if (!device_fields(ps, dev, &arm->items[a], path, ibdev, iface, d, &caps))
			goto out;
	}
	for (size_t h = 0; h < nfns; h++) {
		struct doca_devinfo *dev = new_device(ps);

		snprintf(path, sizeof(path), "%s.host[%zu]", dp, h);
		snprintf(ibdev, sizeof(ibdev), "mlx5_%zu", h);
		if (dev == NULL)
			goto out;
		dev->pci = fns[h].pci;
		dev->type = fns[h].type;
		snprintf(dev->dpu, sizeof(dev->dpu), "%s", name);
		if (!device_fields(ps, dev, fns[h].raw, path, ibdev, fns[h].iface, d, &caps))
			goto out;
	}
	ok = true;
out:
	if (!ok && ps->error[0] == '\0')
		fail(ps, dp, "out of memory");
	for (size_t a = 0; arms != NULL && a < arm->count; a++)
		free(arms[a].reps);
	free(arms);
	free(fns);
	return ok;
}

static bool parse_topology(struct parse *ps, const struct sdpu_json *root)
{
	static const char *const ROOT_KEYS[] = {"dpus", "caps", NULL};
	struct sdpu_caps caps;
	const struct sdpu_json *dpus;

	for (size_t c = 0; c < SDPU_CAP_COUNT; c++)
		caps.value[c] = CAPS[c].fallback;
	if (!object(ps, root, "$", ROOT_KEYS) || !merge_caps(ps, &caps, member(root, "caps"), "$.caps"))
		return false;
	dpus = member(root, "dpus");
	if (!array(ps, dpus, "$.dpus", 1))
		return false;
	for (size_t d = 0; d < dpus->count; d++)
		if (!parse_dpu(ps, &dpus->items[d], (unsigned)d, &caps))
			return false;
	return true;
}

static void free_devices(struct doca_devinfo *devices, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(devices[i].reps);
	free(devices);
}

/* Reads a file whole (NUL-terminated); NULL with errno set. */
static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t cap = 0, n = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *grown = realloc(text, cap = cap * 2 + 8192);

			if (grown == NULL) {
				free(text);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			text = grown;
		}
		size_t got = fread(text + n, 1, 4096, f);

		n += got;
		if (got < 4096)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(text);
		fclose(f);
		errno = e ? e : EIO;
		return NULL;
	}
	fclose(f);
	text[n] = '\0';
	*len = n;
	return text;
}

doca_error_t sdpu_topology_parse(const char *text, size_t len, const char *source, struct sdpu_topology **out)
{
	struct parse ps = {0};
	struct sdpu_json *root = NULL;
	struct sdpu_topology *t;
	bool ok;

	ok = sdpu_json_parse(text, len, &root, ps.error, sizeof(ps.error));
	if (!ok) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "topology", "%s is not JSON: %s", source, ps.error);
		return DOCA_ERROR_BAD_CONFIG;
	}
	ok = parse_topology(&ps, root);
	sdpu_json_free(root);
	free(ps.claims);
	free(ps.names);
	t = ok ? calloc(1, sizeof(*t)) : NULL;
	if (t != NULL)
		t->source = strdup(source);
	if (t == NULL || t->source == NULL) {
		if (ok)
			snprintf(ps.error, sizeof(ps.error), "out of memory");
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "topology", "topology %s: %s", source, ps.error);
		free_devices(ps.devices, ps.ndevices);
		free(t);
		return DOCA_ERROR_BAD_CONFIG;
	}
	t->devices = ps.devices;
	t->ndevices = ps.ndevices;
	*out = t;
	return DOCA_SUCCESS;
}

doca_error_t sdpu_topology_load(struct sdpu_topology **out)
{
	const char *file = getenv("SOFTDPU_TOPOLOGY");
	const char *source = file != NULL && *file != '\0' ? file : "default";
	char *text = (char *)DEFAULT_JSON;
	size_t len = sizeof(DEFAULT_JSON) - 1;
	doca_error_t err;

	if (strcmp(source, "default") != 0 || (file != NULL && *file != '\0')) {
		text = read_file(file, &len);
		if (text == NULL) {
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "topology", "cannot read %s: %s", file, strerror(errno));
			return DOCA_ERROR_BAD_CONFIG;
		}
	}
	err = sdpu_topology_parse(text, len, source, out);
	if (text != DEFAULT_JSON)
		free(text);
	return err;
}

const struct doca_devinfo_rep *sdpu_topology_rep_of(const struct sdpu_topology *topology, const struct sdpu_pci *pci)
{
	for (size_t d = 0; d < topology->ndevices; d++)
		for (size_t r = 0; r < topology->devices[d].nreps; r++)
			if (sdpu_pci_equal(&topology->devices[d].reps[r].pci, pci))
				return &topology->devices[d].reps[r];
	return NULL;
}

const struct doca_devinfo *sdpu_topology_find(const struct sdpu_topology *topology, const struct sdpu_pci *pci)
{
	for (size_t d = 0; d < topology->ndevices; d++)
		if (sdpu_pci_equal(&topology->devices[d].pci, pci))
			return &topology->devices[d];
	return NULL;
}

void sdpu_topology_free(struct sdpu_topology *topology)
{
	if (topology == NULL)
		return;
	free_devices(topology->devices, topology->ndevices);
	free(topology->source);
	free(topology);
}
