/* SPDX-License-Identifier: Apache-2.0 */
/*
 * doca_error.h: the codes' names and descriptions, the same table as src/core/error.ts; and the code an
 * errno becomes (its ERRNO_CODES).
 */
#include <errno.h>
#include <stddef.h>

#include <doca_error.h>

#include "core/internal.h"

static const char *const NAMES[][2] = {
	{"DOCA_SUCCESS", "Success"},
	{"DOCA_ERROR_UNKNOWN", "Unknown error"},
	{"DOCA_ERROR_NOT_PERMITTED", "Operation not permitted"},
	{"DOCA_ERROR_IN_USE", "Resource already in use"},
	{"DOCA_ERROR_NOT_SUPPORTED", "Operation not supported"},
	{"DOCA_ERROR_AGAIN", "Resource temporarily unavailable, try again"},
	{"DOCA_ERROR_INVALID_VALUE", "Invalid input"},
	{"DOCA_ERROR_NO_MEMORY", "Memory allocation failure"},
	{"DOCA_ERROR_INITIALIZATION", "Resource initialization failure"},
	{"DOCA_ERROR_TIME_OUT", "Timer expired waiting for resource"},
	{"DOCA_ERROR_SHUTDOWN", "Shut down in process or completed"},
	{"DOCA_ERROR_CONNECTION_RESET", "Connection reset by peer"},
	{"DOCA_ERROR_CONNECTION_ABORTED", "Connection aborted"},
	{"DOCA_ERROR_CONNECTION_INPROGRESS", "Connection in progress"},
	{"DOCA_ERROR_NOT_CONNECTED", "Not connected"},
	{"DOCA_ERROR_NO_LOCK", "Unable to acquire required lock"},
	{"DOCA_ERROR_NOT_FOUND", "Resource not found"},
	{"DOCA_ERROR_IO_FAILED", "Input/output operation failed"},
	{"DOCA_ERROR_BAD_STATE", "Bad state"},
	{"DOCA_ERROR_UNSUPPORTED_VERSION", "Unsupported version"},
	{"DOCA_ERROR_OPERATING_SYSTEM", "Operating system call failure"},
	{"DOCA_ERROR_DRIVER", "DOCA driver call failure"},
	{"DOCA_ERROR_UNEXPECTED", "An unexpected scenario was detected"},
	{"DOCA_ERROR_ALREADY_EXIST", "Resource already exists"},
	{"DOCA_ERROR_FULL", "No more space in resource"},
	{"DOCA_ERROR_EMPTY", "No entry is available in resource"},
	{"DOCA_ERROR_IN_PROGRESS", "Operation is in progress"},
	{"DOCA_ERROR_TOO_BIG", "Requested operation too big to be contained"},
	{"DOCA_ERROR_AUTHENTICATION", "Authentication failure"},
	{"DOCA_ERROR_BAD_CONFIG", "Configuration is not valid"},
	{"DOCA_ERROR_SKIPPED", "Result is valid, but some previous output data was dropped"},
};

static const char UNRECOGNIZED[] = "unrecognized error code";

static const char *entry(doca_error_t error, int column)
{
	/* Through unsigned: an enum holding a value outside the table (negative too) is not an index. */
	unsigned int index = (unsigned int)error;

	return index < sizeof(NAMES) / sizeof(NAMES[0]) ? NAMES[index][column] : UNRECOGNIZED;
}

const char *doca_error_get_name(doca_error_t error)
{
	return entry(error, 0);
}

const char *doca_error_get_descr(doca_error_t error)
{
	return entry(error, 1);
}

doca_error_t sdpu_os_error(int errno_value)
{
	switch (errno_value) {
	case EACCES:
	case EPERM:
	case EROFS:
		return DOCA_ERROR_NOT_PERMITTED;
	case ENOSPC:
	case EDQUOT:
	case EMFILE:
	case ENFILE:
		return DOCA_ERROR_FULL;
	case EEXIST:
	case EADDRINUSE:
		return DOCA_ERROR_ALREADY_EXIST;
	case ENOENT:
	case ENOTDIR:
		return DOCA_ERROR_NOT_FOUND;
	case ENAMETOOLONG:
		return DOCA_ERROR_INVALID_VALUE;
	case ENOMEM:
		return DOCA_ERROR_NO_MEMORY;
	case EAGAIN:
		return DOCA_ERROR_AGAIN;
	default:
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
}
