#!/bin/sh
# PID 1 of the udapl test VM (busybox, from the initramfs that vmtest.sh builds):
# mount the host's filesystems over 9p, then hand over to vm-guest.sh in a chroot.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules/order); do insmod "/modules/$m"; done

run=""
for arg in $(cat /proc/cmdline); do
	case "$arg" in udapl.run=*) run=${arg#udapl.run=} ;; esac
done

r=/mnt/root
opts=trans=virtio,version=9p2000.L,msize=512000
# The virtio devices may appear a moment after their driver loads.
i=0
until mount -t 9p -o "$opts,ro,cache=loose" hostroot $r 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 50 ] && { echo "vm-init: cannot mount the host root over 9p"; poweroff -f; }
	sleep 0.1
done
mount -t 9p -o "$opts,cache=mmap" hosttmp $r/tmp
mount -t proc proc $r/proc
mount -t sysfs sys $r/sys
mount -t devtmpfs dev $r/dev
# bash process substitution needs /dev/fd.
ln -sfn /proc/self/fd $r/dev/fd
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts devpts $r/dev/pts
mount -t tmpfs tmpfs $r/dev/shm
mount -t tmpfs tmpfs $r/run

chroot $r /bin/bash "$run/vm-guest.sh" "$run"
poweroff -f
