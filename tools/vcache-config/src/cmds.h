/* SPDX-License-Identifier: GPL-2.0 */
/* cmds.h - one handler per command (cmds.c); 0 or -1 with the error set. */
#ifndef VCC_CMDS_H
#define VCC_CMDS_H

#include "args.h"
#include "nl.h"

typedef int (*vcc_handler)(struct vcc_nl *nl, struct vcc_args *a);

int vcc_cmd_create(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_attach(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_detach(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_delete(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_flush(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_set(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_pid(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_list(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_show(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_hotplug(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_ident(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_reset_stats(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_cards(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_repair_table(struct vcc_nl *nl, struct vcc_args *a);
int vcc_cmd_salvage(struct vcc_nl *nl, struct vcc_args *a);

#endif
