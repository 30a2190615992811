/* SPDX-License-Identifier: GPL-2.0 */
/* sha256.h - SHA-256 (libcrypto), for identities too long to keep whole. */
#ifndef VCC_SHA256_H
#define VCC_SHA256_H

#include <stddef.h>
#include <stdint.h>

void vcc_sha256(const void *data, size_t len, uint8_t out[32]);

#endif
