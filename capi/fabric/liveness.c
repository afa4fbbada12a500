/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/liveness.h: /proc/<pid>/stat, parsed after its last ')' (the command name may hold anything). */
#include "fabric/liveness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The state (field 3) and the start time (field 22) of a /proc stat file; false if it does not read. */
static bool read_stat(const char *path, char *state, uint64_t *start)
{
	char text[1024];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	do {
		n = read(fd, text, sizeof(text) - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	char *p = strrchr(text, ')');

	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		return false;
	p += 2;
	*state = *p;
	/* After ") " the fields are separated by single spaces: field 3 is the state, field 22 the 20th. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (p == NULL)
			return false;
		p++;
	}
	char *end;

	errno = 0;
	*start = strtoull(p, &end, 10);
	return errno == 0 && end != p && (*end == ' ' || *end == '\n' || *end == '\0');
}

static bool stat_alive(const char *path, uint64_t start)
{
	char state;
	uint64_t now;

	return read_stat(path, &state, &now) && state != 'Z' && state != 'X' && now == start;
}

struct sdpu_identity sdpu_self(void)
{
	static __thread struct sdpu_identity cached;
	uint32_t pid = (uint32_t)getpid();

	if (cached.pid != pid) {
		char path[64], state;
		uint64_t start = 0;

		snprintf(path, sizeof(path), "/proc/%u/stat", pid);
		if (!read_stat(path, &state, &start))
			start = 0;
		cached.pid = pid;
		cached.start = start;
	}
	return cached;
}

void sdpu_self_thread(uint32_t *tid, uint64_t *tstart)
{
	struct sdpu_identity self = sdpu_self();
	char path[96], state;

	*tid = (uint32_t)syscall(SYS_gettid);
	*tstart = self.start;
	if (*tid == self.pid)
		return;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", self.pid, *tid);
	if (!read_stat(path, &state, tstart))
		*tstart = self.start;
}

bool sdpu_alive(uint32_t pid, uint64_t start)
{
	char path[64];

	if (pid == 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	return stat_alive(path, start);
}

bool sdpu_thread_alive(uint32_t pid, uint64_t start, uint32_t tid, uint64_t tstart)
{
	char path[96];

	if (!sdpu_alive(pid, start))
		return false;
	if (tid == pid)
		return true;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
	return stat_alive(path, tstart);
}
