/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one line of a function softdpu's C library does not implement (the stubs softdpu sdk generates
 * from the headers call it): a WARNING on the SDK log, once per function and process, so that a program
 * sees which call failed without a line per call in its loops.
 */
#include <doca_log.h>

#include "core/internal.h"

void sdpu_unsupported(atomic_flag *once, const char *source, const char *function, const char *answer)
{
	if (atomic_flag_test_and_set_explicit(once, memory_order_relaxed))
		return;
	sdpu_log_sdk(DOCA_LOG_LEVEL_WARNING, source, "%s is not implemented by softdpu's C library: it %s (docs/c.md)",
		     function, answer);
}
