/* SPDX-License-Identifier: Apache-2.0 */
/* doca_version.h: the library is the DOCA release whose API it models. */
#include <doca_version.h>

const char *doca_version_runtime(void)
{
	return DOCA_VERSION_STRING;
}
