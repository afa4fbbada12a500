/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/rendezvous.h: src/fabric/rendezvous.ts's claimName, listenService and findService. */
#define _GNU_SOURCE
#include "fabric/rendezvous.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <doca_log.h>

#include "core/internal.h"
#include "fabric/liveness.h"
#include "fabric/names.h"

doca_error_t sdpu_claim_name(const struct sdpu_fabric *fabric, const char *kind, const char *key, int *fd)
{
	struct sockaddr_un addr;
	int s;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	/* Node binds abstract names with the whole NUL-padded sun_path: so must we, or the two never collide. */
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "softdpu.%s.%s.%s", fabric->id_hex, kind, key);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return sdpu_os_error(errno);
	if (bind(s, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(s, 1) != 0) {
		int e = errno;

		close(s);
		return e == EADDRINUSE ? DOCA_ERROR_ALREADY_EXIST : sdpu_os_error(e);
	}
	*fd = s;
	return DOCA_SUCCESS;
}

doca_error_t sdpu_listen_service(const struct sdpu_fabric *fabric, const char *kind, const char *key, int *fd, char *path,
				 size_t size)
{
	struct sockaddr_un addr;
	doca_error_t err = sdpu_socket_path(fabric->dir, kind, key, path, size);
	int s;

	if (err != DOCA_SUCCESS)
		return err;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return sdpu_os_error(errno);
	if (bind(s, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(s, SOMAXCONN) != 0) {
		int e = errno;

		close(s);
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "fabric", "cannot listen on %s: %s", path, strerror(e));
		return e == EADDRINUSE ? DOCA_ERROR_ALREADY_EXIST : sdpu_os_error(e);
	}
	*fd = s;
	return DOCA_SUCCESS;
}

bool sdpu_find_service(const struct sdpu_fabric *fabric, const char *kind, const char *key, char *path, size_t size)
{
	DIR *dir = opendir(fabric->dir);
	struct dirent *e;
	struct sdpu_entry entry;
	uint64_t best = UINT64_MAX;
	bool found = false;

	if (dir == NULL)
		return false;
	while ((e = readdir(dir)) != NULL) {
		if (!sdpu_entry_parse(e->d_name, &entry) || !entry.socket || entry.overflow || entry.pid > UINT32_MAX ||
		    strcmp(entry.kind, kind) != 0 || strcmp(entry.tag, key) != 0)
			continue;
		if ((found && entry.start >= best) || !sdpu_alive((uint32_t)entry.pid, entry.start))
			continue;
		best = entry.start;
		found = true;
		snprintf(path, size, "%s/%s", fabric->dir, e->d_name);
	}
	closedir(dir);
	return found;
}
