// SPDX-License-Identifier: GPL-2.0
/*
 * module init/exit of vcache.ko.
 *
 * The module is several subsystems linked together: the cache engine
 * (cache/, its kernel environment: workqueue, bio pool) and the card
 * driver.  They start in table order and stop in reverse order; a failing
 * init unwinds the ones before it.  A subsystem that uses cards (the
 * stacking API, vcache_stack.h) goes after the card driver, so that it
 * stops, releasing its cards, before the card driver does: the cached
 * devices (cached/) come last, the netlink family before them so that
 * the events of caches brought back at load have a family to go out on
 * (a command arriving before the cached devices started finds no cache).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>

#include "vcache_pci.h"
#include "vc_release.h"
#include "vc_engine.h"
#include "cached/vcc.h"
#include "netlink/vc_nl.h"

struct vcd_subsys {
	const char *name;
	int (*init)(void);
	void (*exit)(void);
};

static const struct vcd_subsys vcd_subsystems[] = {
	{ "cache engine", vc_engine_init, vc_engine_exit },
	{ "card driver", vcd_pci_init, vcd_pci_exit },
	{ "netlink family", vcnl_init, vcnl_exit },
	{ "cached devices", vcc_init, vcc_exit },
};

static void vcd_exit_from(int n)
{
	while (--n >= 0)
		vcd_subsystems[n].exit();
	/* releases of our disks and kobjects: none may come after unload */
	vcd_wait_releases();
}

static int __init vcd_init(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(vcd_subsystems); i++) {
		ret = vcd_subsystems[i].init();
		if (ret) {
			pr_err("%s failed to start: %d\n",
			       vcd_subsystems[i].name, ret);
			vcd_exit_from(i);
			return ret;
		}
	}
	return 0;
}

static void __exit vcd_exit(void)
{
	vcd_exit_from(ARRAY_SIZE(vcd_subsystems));
}

module_init(vcd_init);
module_exit(vcd_exit);

MODULE_DESCRIPTION("vcache flash card driver and cached block devices");
MODULE_ALIAS_GENL_FAMILY(VCACHE_GENL_NAME);
MODULE_AUTHOR("vcache developers");
MODULE_LICENSE("GPL");
