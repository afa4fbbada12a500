/* SPDX-License-Identifier: Apache-2.0 */
/* fabric/exports.h. The slot of index i is the i32 pair at 64 + 8 i: generation, then state (LIVE 1, free 0). */
#include "fabric/exports.h"

#include <pthread.h>
#include <string.h>

#include <doca_log.h>

#include "core/internal.h"
#include "core/io.h"
#include "core/shm.h"
#include "fabric/liveness.h"

#define LIVE 1
#define ANSWER_TTL_MS 20

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sdpu_segment *local;
static uint32_t local_pid;
static uint32_t next_free;

static uint8_t *generation_of(const struct sdpu_segment *table, uint32_t index)
{
	return table->base + SDPU_SEGMENT_HEADER + 8 * index;
}

doca_error_t sdpu_export_claim(struct sdpu_export_slot *slot)
{
	doca_error_t err = DOCA_SUCCESS;
	uint32_t pid = sdpu_self().pid;

	pthread_mutex_lock(&lock);
	if (local != NULL && local_pid != pid)
		local = NULL; /* a forked child: the parent's table is not its own */
	if (local == NULL) {
		err = sdpu_segment_create("exports", SDPU_EXPORT_SLOTS * 8, &local);
		local_pid = pid;
	}
	if (err == DOCA_SUCCESS) {
		err = DOCA_ERROR_NO_MEMORY;
		for (uint32_t i = 0; i < SDPU_EXPORT_SLOTS; i++) {
			uint32_t index = (next_free + i) % SDPU_EXPORT_SLOTS;
			uint8_t *g = generation_of(local, index);

			if (sdpu_load(g + 4) == LIVE)
				continue;
			slot->generation = (int32_t)((uint32_t)sdpu_add(g, 1) + 1);
			sdpu_store(g + 4, LIVE);
			slot->index = index;
			slot->table = local->descriptor;
			next_free = (index + 1) % SDPU_EXPORT_SLOTS;
			err = DOCA_SUCCESS;
			break;
		}
		if (err != DOCA_SUCCESS)
			sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, "exports", "all %d export slots of this process are in use", SDPU_EXPORT_SLOTS);
	}
	pthread_mutex_unlock(&lock);
	return err;
}

void sdpu_export_revoke(const struct sdpu_export_slot *slot)
{
	pthread_mutex_lock(&lock);
	if (local != NULL && sdpu_descriptor_equal(&local->descriptor, &slot->table) && slot->index < SDPU_EXPORT_SLOTS) {
		uint8_t *g = generation_of(local, slot->index);

		if (sdpu_load(g) == slot->generation) {
			sdpu_add(g, 1);
			sdpu_store(g + 4, 0);
		}
	}
	pthread_mutex_unlock(&lock);
}

static bool slot_live(const struct sdpu_segment *table, const struct sdpu_export_slot *slot)
{
	uint8_t *g = generation_of(table, slot->index);

	return sdpu_load(g) == slot->generation && sdpu_load(g + 4) == LIVE;
}

doca_error_t sdpu_export_view_open(const struct sdpu_export_slot *slot, const char *call, struct sdpu_export_view *view)
{
	doca_error_t err;

	memset(view, 0, sizeof(*view));
	view->slot = *slot;
	if (slot->index >= SDPU_EXPORT_SLOTS) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "export slot %u is outside the table [0, %d)", slot->index, SDPU_EXPORT_SLOTS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	err = sdpu_segment_open(&slot->table, "exports", call, &view->table);
	if (err == DOCA_ERROR_NOT_FOUND) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "the export is stale: its object was destroyed or its process (pid %u) exited",
			     slot->table.pid);
		return err;
	}
	if (err != DOCA_SUCCESS)
		return err;
	if (view->table->size != SDPU_EXPORT_TABLE_SIZE) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "the export table named is %zu bytes, not %d", view->table->size,
			     SDPU_EXPORT_TABLE_SIZE);
		sdpu_export_view_close(view);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!sdpu_export_view_valid(view, true)) {
		sdpu_log_sdk(DOCA_LOG_LEVEL_ERROR, call, "the export is stale: its object was destroyed or its process (pid %u) exited",
			     slot->table.pid);
		sdpu_export_view_close(view);
		return DOCA_ERROR_NOT_FOUND;
	}
	return DOCA_SUCCESS;
}

bool sdpu_export_view_valid(struct sdpu_export_view *view, bool syscalls)
{
	if (view->dead || view->table == NULL)
		return false;
	if (syscalls) {
		int64_t now = sdpu_now_ms();

		if (view->checked_ms == 0 || now - view->checked_ms > ANSWER_TTL_MS) {
			view->checked_ms = now;
			if (!sdpu_alive(view->slot.table.pid, (uint64_t)view->slot.table.start))
				view->dead = true;
		}
		if (view->dead)
			return false;
	}
	return slot_live(view->table, &view->slot);
}

void sdpu_export_view_close(struct sdpu_export_view *view)
{
	sdpu_segment_close(view->table);
	view->table = NULL;
}
