// SPDX-License-Identifier: GPL-2.0
/* replay.c - placeholder until the engine API lands. */
#include <stdio.h>

#include "replay.h"

const char *vs_replay_backend(void)
{
	return "none";
}

int vs_replay(const struct vs_trace *t, const struct vs_cfg *c,
	      struct vs_result *r, char *err, size_t errlen)
{
	(void)t; (void)c; (void)r;
	snprintf(err, errlen, "engine replay not available yet");
	return -1;
}
