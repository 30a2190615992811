#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of tests/vm/run --root-image: started by the image's
# vcache-vmtest.service (scripts/pkgvm.sh) once systemd has brought the
# system up, with the run directory and the source tree mounted at their
# host paths.  Runs the command like guest/init.sh does, but loads and
# unloads nothing: on an installed system that is vcache.service's job.
# The command's output goes to the virtio port vcache.out (the host's
# output.log); then the status, dmesg and taint are left in the run
# directory and the system is powered off through systemd (a clean
# shutdown: file systems unmounted, vcache.service stopped).

RUN=$1
OUT=/dev/virtio-ports/vcache.out
for _ in $(seq 100); do [ -e "$OUT" ] && break; sleep 0.1; done
exec >"$OUT" 2>&1
# shellcheck source=/dev/null
. "$RUN/guest.env" || { echo 125 > "$RUN/rc"; systemctl poweroff; exit 125; }
export PATH="$VC_TOP/tests/vm/guest/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"
export VC_ROOT_IMAGE=1

VC_HDD=
for d in /sys/block/vd*; do
	[ -e "$d/serial" ] || continue
	[ "$(cat "$d/serial")" = vcache-hdd ] && VC_HDD=/dev/${d##*/}
done
export VC_HDD VC_BENCH_DISK=
VC_CARD_DISKS=$(ls -d /sys/block/vflash* 2>/dev/null | sed 's,.*/,/dev/,' | tr '\n' ' ')
export VC_CARD_DISKS

mapfile -d '' -t cmd < "$RUN/cmd"
cd "$VC_CWD" 2>/dev/null || cd /
"${cmd[@]}"
rc=$?
cd /
dmesg > "$RUN/dmesg.txt"
cat /proc/sys/kernel/tainted > "$RUN/tainted"
echo "$rc" > "$RUN/rc"
sync
systemctl --no-block poweroff 2>/dev/null
exit 0
