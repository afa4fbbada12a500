/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/fault_files.h: planStamp, readPlanFile, writeStats of src/fabric/faults/files.ts; readEnvPlan of sources.ts. */
#define _GNU_SOURCE
#include "fabric/fault_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fabric/liveness.h"

#define MAX_PLAN (1 << 20)

void sdpu_fault_plan_stamp(const char *dir, char *out, size_t size)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/faults.json", dir);
	if (stat(path, &st) != 0) {
		snprintf(out, size, "none");
		return;
	}
	snprintf(out, size, "%llu:%lld%09ld:%lld", (unsigned long long)st.st_ino, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_size);
}

/* The whole file, NUL-terminated (NULL with errno when it cannot be read). */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(MAX_PLAN + 1);
	while (buf != NULL && n < MAX_PLAN) {
		ssize_t r = read(fd, buf + n, MAX_PLAN - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (buf != NULL)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static const struct sdpu_json *member(const struct sdpu_json *o, const char *key)
{
	for (size_t i = 0; o->type == SDPU_JSON_OBJECT && i < o->count; i++)
		if (strcmp(o->keys[i], key) == 0)
			return &o->items[i];
	return NULL;
}

static bool parse_text(const char *text, size_t len, const char *where, bool file, struct sdpu_fault_plan *plan, uint32_t *seed,
		       char *error, size_t size)
{
	struct sdpu_json *root = NULL, sub = {.type = SDPU_JSON_OBJECT};
	struct sdpu_json items[2];
	char *keys[2], why[400];
	const struct sdpu_json *input;
	bool ok;

	if (!sdpu_json_parse(text, len, &root, why, sizeof(why))) {
		snprintf(error, size, "%s is not JSON: %s", where, why);
		return false;
	}
	input = root;
	if (file) {
		const struct sdpu_json *version = member(root, "version");

		if (version == NULL || version->type != SDPU_JSON_NUMBER || strcmp(version->text, "1") != 0) {
			snprintf(error, size, "%s has version %s, not 1", where, version == NULL ? "missing" : version->text);
			sdpu_json_free(root);
			return false;
		}
		/* The file's plan is its seed and faults (the other fields are the writers'). */
		for (const char *const *k = (const char *const[]){"seed", "faults", NULL}; *k; k++) {
			const struct sdpu_json *v = member(root, *k);

			if (v != NULL) {
				items[sub.count] = *v;
				keys[sub.count++] = (char *)*k;
			}
		}
		sub.items = items;
		sub.keys = keys;
		input = &sub;
	}
	ok = sdpu_fault_plan_parse(input, plan, why, sizeof(why));
	if (!ok)
		snprintf(error, size, "%s: %s", where, why);
	for (size_t i = 0; ok && i < plan->count; i++) {
		if (plan->faults[i].id[0] != '\0')
			continue;
		if (file) {
			snprintf(error, size, "%s: faults[%zu] has no id", where, i);
			sdpu_fault_plan_free(plan);
			ok = false;
		} else {
			snprintf(plan->faults[i].id, sizeof(plan->faults[i].id), "env-%zu", i + 1);
			memmove(plan->faults[i].key + strlen(plan->faults[i].id), plan->faults[i].key, sizeof(plan->faults[i].key) - 8 - 1);
			memcpy(plan->faults[i].key, plan->faults[i].id, strlen(plan->faults[i].id));
		}
	}
	*seed = ok && plan->has_seed ? plan->seed : 1;
	sdpu_json_free(root);
	return ok;
}

bool sdpu_fault_plan_read(const char *dir, struct sdpu_fault_plan *plan, uint32_t *seed, char *error, size_t size)
{
	char path[4200];
	size_t len = 0;
	char *text;
	bool ok;

	memset(plan, 0, sizeof(*plan));
	*seed = 1;
	snprintf(path, sizeof(path), "%s/faults.json", dir);
	text = slurp(path, &len);
	if (text == NULL) {
		if (errno == ENOENT)
			return true;
		snprintf(error, size, "cannot read %s: %s", path, strerror(errno));
		return false;
	}
	ok = parse_text(text, len, path, true, plan, seed, error, size);
	free(text);
	return ok;
}

bool sdpu_fault_env_read(struct sdpu_fault_plan *plan, uint32_t *seed, char *error, size_t size)
{
	const char *value = getenv("SOFTDPU_FAULTS");
	size_t len;
	char *text;
	bool ok;

	memset(plan, 0, sizeof(*plan));
	*seed = 1;
	while (value != NULL && (*value == ' ' || *value == '\t' || *value == '\n'))
		value++;
	if (value == NULL || *value == '\0')
		return true;
	if (*value == '{' || *value == '[')
		return parse_text(value, strlen(value), "$SOFTDPU_FAULTS", false, plan, seed, error, size);
	text = slurp(value, &len);
	if (text == NULL) {
		snprintf(error, size, "$SOFTDPU_FAULTS names \"%.200s\", which is neither a JSON plan nor a readable file: %s", value, strerror(errno));
		return false;
	}
	ok = parse_text(text, len, "$SOFTDPU_FAULTS", false, plan, seed, error, size);
	free(text);
	return ok;
}

bool sdpu_fault_counts_write(const char *dir, const struct sdpu_fault_count *counts, size_t n)
{
	struct sdpu_identity self = sdpu_self();
	char path[4200], tmp[4200];
	uint8_t rnd[6];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/faults.%u-%llu.t%u", dir, self.pid, (unsigned long long)self.start, self.pid);
	if (n == 0) {
		unlink(path);
		return false;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return false;
	snprintf(tmp, sizeof(tmp), "%s/tmp.%u-%llu.%02x%02x%02x%02x%02x%02x", dir, self.pid, (unsigned long long)self.start, rnd[0], rnd[1],
		 rnd[2], rnd[3], rnd[4], rnd[5]);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	fprintf(f, "{\"pid\":%u,\"tid\":%u,\"faults\":[", self.pid, self.pid);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s{\"id\":\"%s\",\"source\":\"%s\",\"kind\":\"%s\",\"injections\":%llu}", i ? "," : "", counts[i].id, counts[i].source,
			counts[i].kind, (unsigned long long)counts[i].injections);
	fprintf(f, "]}\n");
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return false;
	}
	return true;
}
