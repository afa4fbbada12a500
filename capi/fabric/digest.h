/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SHA-256 and base64url, for the names the fabric derives from text: the fabric id (the first 8 bytes
 * of a digest of the directory) and a comch server's rendezvous key (docs/protocol.md).
 */
#ifndef SOFTDPU_CAPI_DIGEST_H_
#define SOFTDPU_CAPI_DIGEST_H_

#include <stddef.h>
#include <stdint.h>

void sdpu_sha256(const void *data, size_t len, uint8_t out[32]);

/* The first `chars` characters (at most 43) of the unpadded base64url text of `digest`, NUL-terminated. */
void sdpu_base64url(const uint8_t digest[32], size_t chars, char *out);

#endif /* SOFTDPU_CAPI_DIGEST_H_ */
