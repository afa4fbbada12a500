/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/fault_plan.h: parsePlan, faultSeed and mulberry32 of src/fabric/faults/plan.ts. */
#include "fabric/fault_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/pci.h"

const char *const sdpu_fault_kind_names[SDPU_FAULT_KINDS] = {
	"crash", "stall", "again", "lose-event", "delay-event", "corrupt-blob", "truncate-blob", "caps", "driver",
};

#define COMMON "id kind match seed "
#define TRIGGER "after afterMs probability count "
#define WHO "pid side device thread "

/* The fields and selectors each kind understands (plan.ts KINDS); anything else is refused, naming it. */
static const struct {
	const char *fields, *match;
} KINDS[SDPU_FAULT_KINDS] = {
	[SDPU_FAULT_CRASH] = {COMMON TRIGGER "scope", WHO "ctx task"},
	[SDPU_FAULT_STALL] = {COMMON TRIGGER, WHO "ctx"},
	[SDPU_FAULT_AGAIN] = {COMMON TRIGGER, WHO "ctx task"},
	[SDPU_FAULT_LOSE_EVENT] = {COMMON TRIGGER, WHO "ctx event"},
	[SDPU_FAULT_DELAY_EVENT] = {COMMON TRIGGER "delayMs", WHO "ctx event"},
	[SDPU_FAULT_CORRUPT_BLOB] = {COMMON TRIGGER, WHO "blob"},
	[SDPU_FAULT_TRUNCATE_BLOB] = {COMMON TRIGGER, WHO "blob"},
	[SDPU_FAULT_CAPS] = {COMMON "caps", WHO},
	[SDPU_FAULT_DRIVER] = {COMMON TRIGGER, WHO "ctx"},
};
static const char EVENTS[] = "consumer_new consumer_expired connection_status connection_established connection_disconnected dpa_activation";
static const char BLOBS[] = "mmap_pci sync_event_pci sync_event_net";
#define MAX_FAULTS 256

struct ctx {
	char *error;
	size_t size;
	bool failed;
};

static bool fail(struct ctx *c, const char *path, const char *format, ...) __attribute__((format(printf, 3, 4)));

static bool fail(struct ctx *c, const char *path, const char *format, ...)
{
	va_list ap;
	int n;

	if (c->failed)
		return false;
	c->failed = true;
	n = snprintf(c->error, c->size, "%s ", path);
	va_start(ap, format);
	if (n >= 0 && (size_t)n < c->size)
		vsnprintf(c->error + n, c->size - (size_t)n, format, ap);
	va_end(ap);
	return false;
}

/* Whether `word` is one of the space-separated words of `list`. */
static bool listed(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p;) {
		const char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

/* A short rendering of a value for messages (plan.ts describe). */
static const char *describe(const struct sdpu_json *v, char *buf, size_t size)
{
	if (v == NULL)
		return "missing";
	switch (v->type) {
	case SDPU_JSON_STRING:
		snprintf(buf, size, "\"%.36s\"", v->text);
		return buf;
	case SDPU_JSON_NUMBER:
		snprintf(buf, size, "%.38s", v->text);
		return buf;
	case SDPU_JSON_BOOL:
		return v->boolean ? "true" : "false";
	case SDPU_JSON_NULL:
		return "null";
	default:
		return sdpu_json_type_name(v->type);
	}
}

static bool number(const struct sdpu_json *v, double *out)
{
	char *end;

	if (v == NULL || v->type != SDPU_JSON_NUMBER)
		return false;
	*out = strtod(v->text, &end);
	return *end == '\0' && isfinite(*out);
}

static bool integer(struct ctx *c, const struct sdpu_json *v, const char *path, double min, uint64_t *out)
{
	char buf[48];
	double d;

	if (!number(v, &d) || d != floor(d) || d < min || d > 9007199254740991.0)
		return fail(c, path, "is %s, not an integer >= %.0f", describe(v, buf, sizeof(buf)), min);
	*out = (uint64_t)d;
	return true;
}

static bool uint32_of(struct ctx *c, const struct sdpu_json *v, const char *path, uint32_t *out)
{
	char buf[48];
	double d;

	if (!number(v, &d) || d != floor(d) || d < 0 || d >= 4294967296.0)
		return fail(c, path, "is %s, not an integer in [0, 2^32)", describe(v, buf, sizeof(buf)));
	*out = (uint32_t)d;
	return true;
}

static bool text_of(struct ctx *c, const struct sdpu_json *v, const char *path, char *out, size_t size)
{
	char buf[48];

	if (v->type != SDPU_JSON_STRING || v->text[0] == '\0' || strlen(v->text) > 64 || strlen(v->text) >= size)
		return fail(c, path, "is %s, not a string of 1 to 64 characters", describe(v, buf, sizeof(buf)));
	snprintf(out, size, "%s", v->text);
	return true;
}

static bool one_of(struct ctx *c, const struct sdpu_json *v, const char *path, const char *list, char *out, size_t size)
{
	char buf[48];

	if (v->type != SDPU_JSON_STRING || !listed(list, v->text) || strlen(v->text) >= size)
		return fail(c, path, "is %s, not one of %s", describe(v, buf, sizeof(buf)), list);
	snprintf(out, size, "%s", v->text);
	return true;
}

static bool parse_match(struct ctx *c, const struct sdpu_json *m, const char *path, struct sdpu_fault *f)
{
	char at[192], buf[48];
	const char *allowed = KINDS[f->kind].match;

	if (m->type != SDPU_JSON_OBJECT)
		return fail(c, path, "is %s, not an object", describe(m, buf, sizeof(buf)));
	for (size_t i = 0; i < m->count && !c->failed; i++) {
		const char *key = m->keys[i];
		const struct sdpu_json *v = &m->items[i];
		uint64_t pid;

		snprintf(at, sizeof(at), "%.90s.%.90s", path, key);
		if (!listed(allowed, key)) {
			fail(c, at, "does not apply to kind %s (selectors: %s)", sdpu_fault_kind_names[f->kind], allowed);
		} else if (strcmp(key, "pid") == 0) {
			if (integer(c, v, at, 1, &pid))
				f->pid = pid > UINT32_MAX ? UINT32_MAX : (uint32_t)pid;
		} else if (strcmp(key, "side") == 0 || strcmp(key, "thread") == 0) {
			bool side = key[0] == 's';
			const char *a = side ? "dpu" : "main", *b = side ? "host" : "worker";

			if (v->type == SDPU_JSON_STRING && (strcmp(v->text, a) == 0 || strcmp(v->text, b) == 0))
				*(side ? &f->side : &f->thread) = strcmp(v->text, a) == 0 ? 1 : 2;
			else
				fail(c, at, "is %s, not \"%s\" or \"%s\"", describe(v, buf, sizeof(buf)), a, b);
		} else if (strcmp(key, "device") == 0) {
			struct sdpu_pci pci;

			if (text_of(c, v, at, buf, sizeof(buf)) && !sdpu_pci_parse(v->text, strlen(v->text), &pci))
				fail(c, at, "is \"%.36s\", not a PCI address (BB:DD.F or DDDD:BB:DD.F)", v->text);
			else if (!c->failed)
				sdpu_pci_format(&pci, f->device);
		} else if (strcmp(key, "event") == 0) {
			one_of(c, v, at, EVENTS, f->event, sizeof(f->event));
		} else if (strcmp(key, "blob") == 0) {
			one_of(c, v, at, BLOBS, f->blob, sizeof(f->blob));
		} else if (strcmp(key, "ctx") == 0) {
			text_of(c, v, at, f->ctx, sizeof(f->ctx));
		} else {
			text_of(c, v, at, f->task, sizeof(f->task));
		}
	}
	return !c->failed;
}

static const struct sdpu_json *member(const struct sdpu_json *o, const char *key)
{
	for (size_t i = 0; i < o->count; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->items[i];
	return NULL;
}

static bool parse_fault(struct ctx *c, const struct sdpu_json *raw, const char *path, struct sdpu_fault *f)
{
	char at[96], buf[48];
	const struct sdpu_json *kind, *v;
	int k;

	if (raw->type != SDPU_JSON_OBJECT)
		return fail(c, path, "is %s, not an object", describe(raw, buf, sizeof(buf)));
	kind = member(raw, "kind");
	for (k = 0; k < SDPU_FAULT_KINDS; k++)
		if (kind != NULL && kind->type == SDPU_JSON_STRING && strcmp(kind->text, sdpu_fault_kind_names[k]) == 0)
			break;
	snprintf(at, sizeof(at), "%.40s.kind", path);
	if (k == SDPU_FAULT_KINDS)
		return fail(c, at, "is %s, not one of crash, stall, again, lose-event, delay-event, corrupt-blob, truncate-blob, caps, driver",
			    describe(kind, buf, sizeof(buf)));
	f->kind = (enum sdpu_fault_kind)k;
	f->probability = 1;
	for (size_t i = 0; i < raw->count; i++) {
		snprintf(at, sizeof(at), "%.40s.%.50s", path, raw->keys[i]);
		if (!listed(KINDS[k].fields, raw->keys[i]))
			return fail(c, at, "does not apply to kind %s (fields: %s)", sdpu_fault_kind_names[k], KINDS[k].fields);
	}
#define FIELD(name) (snprintf(at, sizeof(at), "%.40s.%s", path, name), v = member(raw, name))
	if (FIELD("id") != NULL) {
		size_t n = v->type == SDPU_JSON_STRING ? strlen(v->text) : 0;
		bool ok = n >= 1 && n <= 32;

		for (size_t i = 0; ok && i < n; i++)
			ok = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-", v->text[i]) != NULL;
		if (!ok)
			return fail(c, at, "is %s, not [A-Za-z0-9_.-]{1,32}", describe(v, buf, sizeof(buf)));
		memcpy(f->id, v->text, n + 1);
	}
	if (FIELD("match") != NULL && !parse_match(c, v, at, f))
		return false;
	if (FIELD("seed") != NULL && !(f->has_seed = uint32_of(c, v, at, &f->seed)))
		return false;
	if (FIELD("after") != NULL && !integer(c, v, at, 0, &f->after))
		return false;
	if (FIELD("afterMs") != NULL && !integer(c, v, at, 0, &f->after_ms))
		return false;
	if (FIELD("count") != NULL && !(f->has_count = integer(c, v, at, 1, &f->count)))
		return false;
	if (FIELD("probability") != NULL && !(number(v, &f->probability) && f->probability >= 0 && f->probability <= 1))
		return fail(c, at, "is %s, not a number in [0, 1]", describe(v, buf, sizeof(buf)));
	if (k == SDPU_FAULT_DELAY_EVENT && !integer(c, FIELD("delayMs"), at, 1, &f->delay_ms))
		return false;
	if (FIELD("scope") != NULL) {
		if (v->type != SDPU_JSON_STRING || (strcmp(v->text, "process") != 0 && strcmp(v->text, "thread") != 0))
			return fail(c, at, "is %s, not \"process\" or \"thread\"", describe(v, buf, sizeof(buf)));
		f->scope_thread = v->text[0] == 't';
	}
	if (k == SDPU_FAULT_CAPS && (FIELD("caps") == NULL || v->type != SDPU_JSON_OBJECT || v->count == 0))
		return fail(c, at, "is %s, not an object of capability sections", describe(v, buf, sizeof(buf)));
#undef FIELD
	return true;
}

/* What identifies a fault across re-reads (hooks.ts keys it by its text). */
static void key_of(struct sdpu_fault *f)
{
	snprintf(f->key, sizeof(f->key), "%s|%d|%u|%d|%d|%s|%s|%s|%s|%s|%llu|%llu|%d:%llu|%.17g|%d:%u|%d|%llu", f->id, f->kind, f->pid,
		 f->thread, f->side, f->device, f->ctx, f->task, f->event, f->blob, (unsigned long long)f->after,
		 (unsigned long long)f->after_ms, f->has_count, (unsigned long long)f->count, f->probability, f->has_seed, f->seed,
		 f->scope_thread, (unsigned long long)f->delay_ms);
}

bool sdpu_fault_plan_parse(const struct sdpu_json *input, struct sdpu_fault_plan *out, char *error, size_t size)
{
	struct ctx c = {.error = error, .size = size};
	const struct sdpu_json *faults = input, *seed;
	char path[32], buf[48];

	memset(out, 0, sizeof(*out));
	if (input->type == SDPU_JSON_OBJECT) {
		for (size_t i = 0; i < input->count; i++)
			if (strcmp(input->keys[i], "seed") != 0 && strcmp(input->keys[i], "faults") != 0)
				return fail(&c, input->keys[i], "is not a plan field (seed, faults)");
		seed = member(input, "seed");
		if (seed != NULL && !(out->has_seed = uint32_of(&c, seed, "seed", &out->seed)))
			return false;
		faults = member(input, "faults");
		if (faults == NULL || faults->type != SDPU_JSON_ARRAY)
			return fail(&c, "faults", "is %s, not an array", describe(faults, buf, sizeof(buf)));
	} else if (input->type != SDPU_JSON_ARRAY) {
		return fail(&c, "the plan", "is %s, not an object or an array of faults", describe(input, buf, sizeof(buf)));
	}
	if (faults->count > MAX_FAULTS)
		return fail(&c, "faults", "has %zu entries, more than %d", faults->count, MAX_FAULTS);
	out->faults = calloc(faults->count ? faults->count : 1, sizeof(*out->faults));
	if (out->faults == NULL)
		return fail(&c, "the plan", "does not fit in memory");
	for (size_t i = 0; i < faults->count; i++) {
		snprintf(path, sizeof(path), "faults[%zu]", i);
		if (!parse_fault(&c, &faults->items[i], path, &out->faults[i]))
			break;
		out->count++;
		for (size_t j = 0; j < i; j++)
			if (out->faults[i].id[0] && strcmp(out->faults[i].id, out->faults[j].id) == 0) {
				snprintf(path, sizeof(path), "faults[%zu].id", i);
				fail(&c, path, "\"%s\" is used twice", out->faults[i].id);
			}
		if (c.failed)
			break;
		key_of(&out->faults[i]);
	}
	if (c.failed) {
		sdpu_fault_plan_free(out);
		return false;
	}
	return true;
}

void sdpu_fault_plan_free(struct sdpu_fault_plan *plan)
{
	free(plan->faults);
	plan->faults = NULL;
	plan->count = 0;
}

uint32_t sdpu_fault_seed(const struct sdpu_fault *fault, uint32_t plan_seed)
{
	uint32_t h = 0x811c9dc5u ^ plan_seed;

	if (fault->has_seed)
		return fault->seed;
	for (const char *p = fault->id; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x01000193u;
	return h;
}

double sdpu_mulberry32(uint32_t *state)
{
	uint32_t t;

	*state += 0x6d2b79f5u;
	t = *state;
	t = (t ^ (t >> 15)) * (t | 1);
	t ^= t + (t ^ (t >> 7)) * (t | 61);
	return (double)(t ^ (t >> 14)) / 4294967296.0;
}
