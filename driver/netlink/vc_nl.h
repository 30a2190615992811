/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink family "vcache" (vc_nl.c, vc_nl_pid.c).
 */
#ifndef VC_NL_H
#define VC_NL_H

#include <net/genetlink.h>

int vcnl_init(void);
void vcnl_exit(void);

/* Engine parameter id of ABI parameter attribute @attr, or -ENOENT. */
int vcnl_param_id(int attr);

struct vcc_cache;
/* The cache named in @info (vcc_lock held), or NULL with an extack. */
struct vcc_cache *vcnl_cache(struct genl_info *info);
bool vcnl_admin(struct sk_buff *skb, struct genl_info *info);
extern struct genl_family vcnl_family;

int vcnl_pid_set(struct sk_buff *skb, struct genl_info *info);
int vcnl_pid_get(struct sk_buff *skb, struct genl_info *info);

#endif /* VC_NL_H */
