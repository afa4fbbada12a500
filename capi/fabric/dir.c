/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/dir.h: src/fabric/dir.ts's rules, in the same order and with the same answers. */
#define _GNU_SOURCE
#include "fabric/dir.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "fabric/digest.h"
#include "fabric/liveness.h"
#include "fabric/names.h"

#define SOURCE "fabric"

void sdpu_fabric_dir_resolve(char *out, size_t size)
{
	const char *explicit_dir = getenv("SOFTDPU_FABRIC");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (explicit_dir != NULL && *explicit_dir != '\0')
		snprintf(out, size, "%s", explicit_dir);
	else if (xdg != NULL && *xdg != '\0')
		snprintf(out, size, "%s/softdpu", xdg);
	else
		snprintf(out, size, "/tmp/softdpu-%u", (unsigned)getuid());
}

/* The kernel's pseudo filesystems (statfs magic), which cannot hold a fabric's files and sockets. */
static const struct {
	unsigned long magic;
	const char *name;
} PSEUDO[] = {
	{0x9fa0, "procfs"},	     {0x62656572, "sysfs"},	{0x1cd1, "devpts"},	  {0x27e0eb, "cgroup"},
	{0x63677270, "cgroup2"},     {0x64626720, "debugfs"},	{0x74726163, "tracefs"}, {0x73636673, "securityfs"},
	{0xcafe4a11, "bpf"},	     {0x62656570, "configfs"},	{0x6165676c, "pstore"},	  {0xde5e81e4, "efivarfs"},
	{0x65735543, "fusectl"},     {0x42494e4d, "binfmt_misc"}, {0x6e736673, "nsfs"},	  {0xf97cff8c, "selinuxfs"},
	{0x19800202, "mqueue"},
};

/* The nearest existing ancestor of `path` (itself if it exists), absolute. */
static doca_error_t existing_ancestor(const char *path, char *out, size_t size)
{
	struct stat st;
	char *slash;

	if (path[0] == '/')
		snprintf(out, size, "%s", path);
	else {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return sdpu_os_error(errno);
		snprintf(out, size, "%s/%s", cwd, path);
	}
	for (;;) {
		if (lstat(out, &st) == 0) {
			if (S_ISLNK(st.st_mode) && stat(out, &st) != 0) {
				sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
					     "fabric directory %s: %s is a symbolic link to something that does not exist", path, out);
				return DOCA_ERROR_NOT_FOUND;
			}
			return DOCA_SUCCESS;
		}
		slash = strrchr(out, '/');
		if (slash == NULL || slash == out) {
			snprintf(out, size, "/");
			return DOCA_SUCCESS;
		}
		*slash = '\0';
	}
}

static doca_error_t check_location(const char *path)
{
	char existing[PATH_MAX + 8];
	struct stat st;
	struct statfs fs;
	doca_error_t err = existing_ancestor(path, existing, sizeof(existing));

	if (err != DOCA_SUCCESS)
		return err;
	if (stat(existing, &st) != 0 || !S_ISDIR(st.st_mode)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "fabric directory %s: %s is not a directory", path, existing);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (statfs(existing, &fs) == 0)
		for (size_t i = 0; i < sizeof(PSEUDO) / sizeof(PSEUDO[0]); i++)
			if ((unsigned long)fs.f_type == PSEUDO[i].magic) {
				sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE,
					     "fabric directory %s is on %s, which cannot hold a fabric's files and sockets; choose a directory under /tmp or $XDG_RUNTIME_DIR",
					     path, PSEUDO[i].name);
				return DOCA_ERROR_NOT_SUPPORTED;
			}
	if (access(existing, W_OK | X_OK) != 0) {
		int e = errno;

		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "fabric directory %s: cannot create entries in %s: %s", path, existing,
			     strerror(e));
		return sdpu_os_error(e);
	}
	return DOCA_SUCCESS;
}

/* mkdir -p with mode 0700 for every directory it creates. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

doca_error_t sdpu_fabric_dir_ensure(const char *path)
{
	struct stat st;
	doca_error_t err = check_location(path);

	if (err != DOCA_SUCCESS)
		return err;
	if (make_dirs(path) != 0) {
		int e = errno;

		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "cannot create fabric directory %s: %s", path, strerror(e));
		return sdpu_os_error(e);
	}
	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "fabric directory %s is not a directory", path);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (st.st_uid != getuid()) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "fabric directory %s is owned by uid %u, not by this user (%u)", path,
			     (unsigned)st.st_uid, (unsigned)getuid());
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if ((st.st_mode & 077) != 0) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, SOURCE, "fabric directory %s has mode 0%o; it must be private (0700)", path,
			     (unsigned)(st.st_mode & 0777));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

void sdpu_fabric_dir_sweep(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	struct sdpu_entry entry;

	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		if (!sdpu_entry_parse(e->d_name, &entry) || strcmp(entry.kind, "faults") == 0)
			continue;
		if (!entry.overflow && entry.pid <= UINT32_MAX && sdpu_alive((uint32_t)entry.pid, entry.start))
			continue;
		if (unlinkat(dirfd(dir), e->d_name, 0) == 0)
			sdpu_log_sdk(DOCA_LOG_LEVEL_INFO, SOURCE, "removed %s: owner pid %llu is gone", e->d_name,
				     (unsigned long long)entry.pid);
		else if (errno != ENOENT)
			sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, SOURCE, "cannot remove %s: %s", e->d_name, strerror(errno));
	}
	closedir(dir);
}

doca_error_t sdpu_fabric_dir_id(const char *path, char *real, size_t size, uint8_t id[8])
{
	char resolved[PATH_MAX], text[PATH_MAX + 64];
	uint8_t digest[32];
	struct stat st;
	int n;

	if (realpath(path, resolved) == NULL || stat(resolved, &st) != 0)
		return sdpu_os_error(errno);
	snprintf(real, size, "%s", resolved);
	n = snprintf(text, sizeof(text), "%s%c%llu%c%llu", resolved, '\0', (unsigned long long)st.st_dev, '\0',
		     (unsigned long long)st.st_ino);
	sdpu_sha256(text, (size_t)n, digest);
	memcpy(id, digest, 8);
	return DOCA_SUCCESS;
}
