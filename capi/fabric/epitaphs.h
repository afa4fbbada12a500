/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Epitaphs (docs/protocol.md, "Epitaphs"; src/fabric/epitaphs.ts): joining a fabric removes every
 * `<entry>.exited` that is not among the newest 64 (by mtime) or is 60 s old or more
 * ($SOFTDPU_EPITAPH_MS sets the 60 s; 0 removes them all). Writing one is fabric/introspect.c's.
 */
#ifndef SOFTDPU_CAPI_EPITAPHS_H_
#define SOFTDPU_CAPI_EPITAPHS_H_

void sdpu_epitaphs_sweep(const char *dir);

#endif /* SOFTDPU_CAPI_EPITAPHS_H_ */
