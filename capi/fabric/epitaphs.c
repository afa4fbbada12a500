/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/epitaphs.h: sweepEpitaphs of src/fabric/epitaphs.ts with the retention in force. */
#define _GNU_SOURCE
#include "fabric/epitaphs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "fabric/names.h"

#define KEEP_COUNT 64
#define KEEP_MS 60000.0
#define SUFFIX ".exited"

struct epitaph {
	char name[256];
	double mtime;
};

/* Newest first; equal times by name. */
static int newest_first(const void *a, const void *b)
{
	const struct epitaph *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* $SOFTDPU_EPITAPH_MS, an integer of milliseconds (0 or more), else 60 s. */
static double retention_ms(void)
{
	const char *text = getenv("SOFTDPU_EPITAPH_MS");
	char *end;
	double ms;

	if (text == NULL || *text == '\0')
		return KEEP_MS;
	ms = strtod(text, &end);
	if (*end != '\0' || ms < 0 || ms != (double)(long long)ms) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, "fabric", "SOFTDPU_EPITAPH_MS=\"%s\" is not a number of milliseconds (0 or more): keeping epitaphs 60000 ms", text);
		return KEEP_MS;
	}
	return ms;
}

void sdpu_epitaphs_sweep(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	struct epitaph *all = NULL;
	size_t n = 0, cap = 0;
	struct timeval tv;
	double now, keep = retention_ms();

	if (dir == NULL)
		return;
	gettimeofday(&tv, NULL);
	now = (double)tv.tv_sec * 1000 + (double)tv.tv_usec / 1000;
	while ((e = readdir(dir)) != NULL) {
		size_t len = strlen(e->d_name);
		struct sdpu_entry entry;
		char owner[256];
		struct stat st;

		if (len <= strlen(SUFFIX) || len >= sizeof(owner) || strcmp(e->d_name + len - strlen(SUFFIX), SUFFIX) != 0)
			continue;
		memcpy(owner, e->d_name, len - strlen(SUFFIX));
		owner[len - strlen(SUFFIX)] = '\0';
		if (!sdpu_entry_parse(owner, &entry) || fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			struct epitaph *more = realloc(all, (cap = cap ? cap * 2 : 64) * sizeof(*more));

			if (more == NULL)
				break;
			all = more;
		}
		memcpy(all[n].name, e->d_name, len + 1);
		all[n++].mtime = (double)st.st_mtim.tv_sec * 1000 + (double)st.st_mtim.tv_nsec / 1e6;
	}
	if (n > 0)
		qsort(all, n, sizeof(*all), newest_first);
	for (size_t i = 0, kept = 0; i < n; i++) {
		if (kept < KEEP_COUNT && now - all[i].mtime < keep) {
			kept++;
			continue;
		}
		if (unlinkat(dirfd(dir), all[i].name, 0) != 0 && errno != ENOENT)
			sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, "fabric", "cannot remove the epitaph %s: %s", all[i].name, strerror(errno));
	}
	free(all);
	closedir(dir);
}
