/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Releases that run module code or read module data and may come later
 * than the put that starts them (vc_release.c): every disk vcache.ko adds
 * (.free_disk = vcd_free_disk) and every kobject of its own type (its
 * release ends in vcd_release_done()).  vcd_release_hold() comes before
 * the object can be released; the module's exit waits in
 * vcd_wait_releases() until each hold has been released.
 */
#ifndef VC_RELEASE_H
#define VC_RELEASE_H

struct gendisk;

void vcd_release_hold(void);
void vcd_release_done(void);
void vcd_free_disk(struct gendisk *disk);
void vcd_wait_releases(void);

#endif
