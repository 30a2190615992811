// SPDX-License-Identifier: GPL-2.0
/* libFuzzer entry point for the metadata loader target. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size);
}
