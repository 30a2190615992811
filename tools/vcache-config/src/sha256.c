// SPDX-License-Identifier: GPL-2.0
/*
 * sha256.c - SHA-256 of an identity too long to keep whole: OpenSSL's
 * libcrypto (EVP), not an implementation of our own.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

#include "sha256.h"

void vcc_sha256(const void *data, size_t len, uint8_t out[32])
{
	unsigned int n = 32;

	/* fails only when libcrypto cannot allocate or has no SHA-256 */
	if (!EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) || n != 32) {
		fprintf(stderr, "vcache-config: libcrypto: SHA-256 failed\n");
		abort();
	}
}
