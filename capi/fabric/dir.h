/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The fabric directory (docs/protocol.md, "Fabric directory and names"): where it is, the checks that
 * refuse a location that cannot work or a directory others could reach, the sweep of what dead
 * processes left, and the fabric id.
 */
#ifndef SOFTDPU_CAPI_DIR_H_
#define SOFTDPU_CAPI_DIR_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_error.h>

/* $SOFTDPU_FABRIC, else $XDG_RUNTIME_DIR/softdpu, else /tmp/softdpu-<uid>. */
void sdpu_fabric_dir_resolve(char *out, size_t size);

/*
 * Creates the directory if needed (mode 0700) and refuses, logging why: a location through a dangling
 * symlink (NOT_FOUND), not a directory (NOT_PERMITTED), on a pseudo filesystem such as procfs
 * (NOT_SUPPORTED), one this process cannot create entries in (the errno's code), and a directory that is
 * a symlink, is another user's or has any group or other permission bit (NOT_PERMITTED).
 */
doca_error_t sdpu_fabric_dir_ensure(const char *path);

/* Unlinks every entry whose owner is not alive (entries of the "faults" kind are left to a TypeScript sweep). */
void sdpu_fabric_dir_sweep(const char *path);

/* The real path of the directory, and its 8-byte id: SHA-256("<realpath>\0<st_dev>\0<st_ino>"). */
doca_error_t sdpu_fabric_dir_id(const char *path, char *real, size_t size, uint8_t id[8]);

#endif /* SOFTDPU_CAPI_DIR_H_ */
