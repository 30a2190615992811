// SPDX-License-Identifier: GPL-2.0
/*
 * identity, state and health of a vcache card in sysfs.
 *
 * On the PCI device, so also under /sys/block/vflashN/device/:
 *   serial model firmware_rev interface_version  identify strings
 *   capacity        bytes
 *   lba_size        bytes per logical block
 *   num_queues      I/O queues in use
 *   queue_depth     commands in flight per I/O queue
 *   state           live, resetting, deleting, dead
 *   disk            vflashN
 *   io_timeouts aborts resets    counters since probe
 *   reset_controller  write 1: reset the controller (in-flight I/O is
 *                   retried), returns once the card is live again
 *   health/         the card's VC_LOG_HEALTH page, fetched at most once a
 *                   second (VCD_HEALTH_MAX_AGE) whoever reads
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "compat.h"
#include "vcache_pci.h"

static struct vcd_dev *to_vc(struct device *d)
{
	return dev_get_drvdata(d);
}

#define VCD_ID_STR_ATTR(_name, _field)					\
static ssize_t _name##_show(struct device *d,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%s\n", to_vc(d)->id._field);		\
}									\
static DEVICE_ATTR_RO(_name)

VCD_ID_STR_ATTR(serial, serial);
VCD_ID_STR_ATTR(model, model);
VCD_ID_STR_ATTR(firmware_rev, fw_rev);

static ssize_t interface_version_show(struct device *d,
				      struct device_attribute *attr, char *buf)
{
	struct vcd_dev *dev = to_vc(d);

	return sysfs_emit(buf, "%u.%u\n", VC_IF_MAJOR(dev->if_version),
			  VC_IF_MINOR(dev->if_version));
}
static DEVICE_ATTR_RO(interface_version);

static ssize_t capacity_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	struct vcd_dev *dev = to_vc(d);

	return sysfs_emit(buf, "%llu\n", dev->id.capacity << dev->lba_shift);
}
static DEVICE_ATTR_RO(capacity);

static ssize_t lba_size_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%u\n", to_vc(d)->id.lba_size);
}
static DEVICE_ATTR_RO(lba_size);

static ssize_t num_queues_show(struct device *d,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_vc(d)->nr_ioq);
}
static DEVICE_ATTR_RO(num_queues);

static ssize_t queue_depth_show(struct device *d,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", to_vc(d)->io_qsize - 1);
}
static DEVICE_ATTR_RO(queue_depth);

static ssize_t state_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", vcd_state_name(vcd_state(to_vc(d))));
}
static DEVICE_ATTR_RO(state);

static ssize_t disk_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", to_vc(d)->name);
}
static DEVICE_ATTR_RO(disk);

static ssize_t io_timeouts_show(struct device *d,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_vc(d)->nr_timeouts));
}
static DEVICE_ATTR_RO(io_timeouts);

static ssize_t aborts_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_vc(d)->nr_aborts));
}
static DEVICE_ATTR_RO(aborts);

static ssize_t resets_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&to_vc(d)->nr_resets));
}
static DEVICE_ATTR_RO(resets);

/* The card-space table: its state, each region, the raw disk's size. */
static ssize_t space_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	return vcd_space_show(to_vc(d), buf);
}
static DEVICE_ATTR_RO(space);

/* echo 1 > reset_controller: reset now and wait for the outcome. */
static ssize_t reset_controller_store(struct device *d,
				      struct device_attribute *attr,
				      const char *buf, size_t count)
{
	struct vcd_dev *dev = to_vc(d);
	bool val;
	int ret;

	ret = kstrtobool(buf, &val);
	if (ret)
		return ret;
	if (!val)
		return count;
	if (!vcd_schedule_reset(dev, "requested through sysfs"))
		return -EBUSY;
	flush_work(&dev->reset_work);
	return vcd_state(dev) == VCD_STATE_LIVE ? count : -EIO;
}
static DEVICE_ATTR_WO(reset_controller);

static struct attribute *vcd_attrs[] = {
	&dev_attr_serial.attr,
	&dev_attr_model.attr,
	&dev_attr_firmware_rev.attr,
	&dev_attr_interface_version.attr,
	&dev_attr_capacity.attr,
	&dev_attr_lba_size.attr,
	&dev_attr_num_queues.attr,
	&dev_attr_queue_depth.attr,
	&dev_attr_state.attr,
	&dev_attr_disk.attr,
	&dev_attr_io_timeouts.attr,
	&dev_attr_aborts.attr,
	&dev_attr_resets.attr,
	&dev_attr_reset_controller.attr,
	&dev_attr_space.attr,
	NULL,
};

static const struct attribute_group vcd_attr_group = {
	.attrs = vcd_attrs,
};

/* Fields of struct vc_health_log shown in health/, by file name. */
struct vcd_health_field {
	const char *name;
	unsigned short offset;
	unsigned short size;
};

static const struct vcd_health_field vcd_health_fields[] = {
	{ "media_errors", offsetof(struct vc_health_log, media_errors), 8 },
	{ "bytes_read", offsetof(struct vc_health_log, bytes_read), 8 },
	{ "bytes_written", offsetof(struct vc_health_log, bytes_written), 8 },
	{ "read_cmds", offsetof(struct vc_health_log, read_cmds), 8 },
	{ "write_cmds", offsetof(struct vc_health_log, write_cmds), 8 },
	{ "flush_cmds", offsetof(struct vc_health_log, flush_cmds), 8 },
	{ "power_cycles", offsetof(struct vc_health_log, power_cycles), 8 },
	{ "unsafe_shutdowns",
	  offsetof(struct vc_health_log, unsafe_shutdowns), 8 },
	{ "flash_bytes_programmed",
	  offsetof(struct vc_health_log, flash_bytes_programmed), 8 },
	{ "card_aborts", offsetof(struct vc_health_log, aborts), 8 },
	{ "percent_used", offsetof(struct vc_health_log, percent_used), 4 },
	{ "temperature_k", offsetof(struct vc_health_log, temperature_k), 4 },
	{ "wbuf_bytes", offsetof(struct vc_health_log, wbuf_bytes), 4 },
	{ "rmw_writes", offsetof(struct vc_health_log, rmw_writes), 8 },
};

/*
 * health/: the files are world-readable, so reads share one GET_LOG per
 * VCD_HEALTH_MAX_AGE: any number of readers cost the card at most one
 * admin command a second.  health_lock held: fetch if stale.
 */
static int vcd_health_refresh(struct vcd_dev *dev)
{
	int ret;

	if (dev->health_valid &&
	    time_before(jiffies, dev->health_stamp + VCD_HEALTH_MAX_AGE))
		return 0;
	ret = vcd_get_health(dev, &dev->health);
	dev->health_valid = !ret;
	dev->health_stamp = jiffies;
	return ret;
}

static ssize_t vcd_health_show(struct device *d, struct device_attribute *attr,
			       char *buf)
{
	const struct vcd_health_field *f = NULL;
	struct vcd_dev *dev = to_vc(d);
	const u8 *log = (const u8 *)&dev->health;
	unsigned int i;
	u64 val;
	int ret;

	for (i = 0; i < ARRAY_SIZE(vcd_health_fields); i++)
		if (!strcmp(attr->attr.name, vcd_health_fields[i].name))
			f = &vcd_health_fields[i];
	if (!f)
		return -EINVAL;
	if (vcd_state(dev) != VCD_STATE_LIVE)
		return -EAGAIN;
	ret = mutex_lock_interruptible(&dev->health_lock);
	if (ret)
		return ret;
	ret = vcd_health_refresh(dev);
	if (!ret && f->size == sizeof(u64))
		val = le64_to_cpup((const __le64 *)(log + f->offset));
	else if (!ret)
		val = le32_to_cpup((const __le32 *)(log + f->offset));
	mutex_unlock(&dev->health_lock);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%llu\n", val);
}

static struct device_attribute dev_attr_media_errors =
	__ATTR(media_errors, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_bytes_read =
	__ATTR(bytes_read, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_bytes_written =
	__ATTR(bytes_written, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_read_cmds =
	__ATTR(read_cmds, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_write_cmds =
	__ATTR(write_cmds, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_flush_cmds =
	__ATTR(flush_cmds, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_power_cycles =
	__ATTR(power_cycles, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_unsafe_shutdowns =
	__ATTR(unsafe_shutdowns, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_flash_bytes_programmed =
	__ATTR(flash_bytes_programmed, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_card_aborts =
	__ATTR(card_aborts, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_percent_used =
	__ATTR(percent_used, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_temperature_k =
	__ATTR(temperature_k, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_wbuf_bytes =
	__ATTR(wbuf_bytes, 0444, vcd_health_show, NULL);
static struct device_attribute dev_attr_rmw_writes =
	__ATTR(rmw_writes, 0444, vcd_health_show, NULL);

static struct attribute *vcd_health_attrs[] = {
	&dev_attr_media_errors.attr,
	&dev_attr_bytes_read.attr,
	&dev_attr_bytes_written.attr,
	&dev_attr_read_cmds.attr,
	&dev_attr_write_cmds.attr,
	&dev_attr_flush_cmds.attr,
	&dev_attr_power_cycles.attr,
	&dev_attr_unsafe_shutdowns.attr,
	&dev_attr_flash_bytes_programmed.attr,
	&dev_attr_card_aborts.attr,
	&dev_attr_percent_used.attr,
	&dev_attr_temperature_k.attr,
	&dev_attr_wbuf_bytes.attr,
	&dev_attr_rmw_writes.attr,
	NULL,
};

static const struct attribute_group vcd_health_group = {
	.name = "health",
	.attrs = vcd_health_attrs,
};

const struct attribute_group *vcd_dev_groups[] = {
	&vcd_attr_group,
	&vcd_health_group,
	NULL,
};
