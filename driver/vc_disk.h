/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lifetime of every disk vcache.ko adds (vc_disk.c): each one's
 * block_device_operations has .free_disk = vcd_free_disk, vcd_disk_added()
 * follows each successful add_disk(), and the module's exit waits in
 * vcd_wait_disks_released() until the block layer has released them all.
 */
#ifndef VC_DISK_H
#define VC_DISK_H

struct gendisk;

void vcd_disk_added(struct gendisk *disk);
void vcd_free_disk(struct gendisk *disk);
void vcd_wait_disks_released(void);

#endif
