#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Minimal ivshmem-doorbell server used only by the bench's self-tests.

It speaks the ivshmem client-server protocol (QEMU's ivshmem-spec.txt) so
that QEMU can attach an ivshmem-doorbell device without the real card
firmware, which lets tests/vm/selftest prove the runner's hot-unplug and
power-cut plumbing on its own.  BAR2 is an all-zero shared memory file, so
the vcache driver sees a bad signature and must refuse it.

Usage: fakecard.py SOCKET SHM_SIZE VECTORS
"""
import os
import signal
import socket
import struct
import sys


def send(conn, value, fd=None):
    data = struct.pack("<q", value)
    if fd is None:
        conn.sendall(data)
    else:
        socket.send_fds(conn, [data], [fd])


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: fakecard.py SOCKET SHM_SIZE VECTORS")
    path, size, vectors = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    shm = os.memfd_create("fakecard")
    os.ftruncate(shm, size)
    # Peer 0 is us (the "firmware"), the guest is peer 1.
    own = [os.eventfd(0) for _ in range(vectors)]
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    print(f"fakecard: listening on {path}", flush=True)
    next_id = 1
    while True:
        conn, _ = srv.accept()
        guest = [os.eventfd(0) for _ in range(vectors)]
        send(conn, 0)
        send(conn, next_id)
        send(conn, -1, shm)
        for fd in own:
            send(conn, 0, fd)
        for fd in guest:
            send(conn, next_id, fd)
        print(f"fakecard: peer {next_id} connected", flush=True)
        next_id += 1
        # Block until the peer goes away (QEMU exits or device_del).
        while conn.recv(4096):
            pass
        print("fakecard: peer disconnected", flush=True)
        conn.close()
        for fd in guest:
            os.close(fd)


if __name__ == "__main__":
    main()
