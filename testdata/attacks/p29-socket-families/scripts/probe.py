#!/usr/bin/env python3
"""skill-sandbox attack probe 29: Tries to create AF_VSOCK, AF_PACKET, raw IP and ICMP sockets, and to reach the hypervisor's host over vsock."""
import errno as _errno
import os
import sys


def _fmt(e):
    if isinstance(e, OSError) and e.errno:
        return "%s %s" % (_errno.errorcode.get(e.errno, str(e.errno)), e.strerror)
    return "%s %s" % (type(e).__name__, e)


def step(label, fn):
    """Run one attack step; print 'STEP label: ok VALUE' or 'STEP label: ERRNO msg'."""
    try:
        value = fn()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # MemoryError and friends are outcomes too
        print("STEP %s: %s" % (label, _fmt(e)), flush=True)
        return False, e
    print(("STEP %s: ok %s" % (label, value))[:4000], flush=True)
    return True, value


def result(effect, why):
    """Print the probe's own verdict; the harness checks the host as well."""
    print("PROBE-RESULT: %s %s" % ("effect" if effect else "none", why), flush=True)

# Probe 29: socket families and types no skill needs. AF_VSOCK reaches the
# hypervisor's host from any network namespace; AF_PACKET and raw IP sockets
# read and forge traffic past every connect() rule.
import socket

got = []


def make(family, kind, proto=0, connect=None):
    def f():
        s = socket.socket(family, kind, proto)
        try:
            if connect is not None:
                s.settimeout(2)
                try:
                    s.connect(connect)
                    return "created; connected"
                except OSError as e:
                    return "created; connect %s" % _errno.errorcode.get(e.errno, str(e.errno))
            return "created"
        finally:
            s.close()
    return f


for label, fn in [
    ("socket AF_VSOCK stream", make(40, socket.SOCK_STREAM, 0, (2, 22))),
    ("socket AF_PACKET raw", make(17, socket.SOCK_RAW, 0x0300)),
    ("socket AF_INET raw ICMP", make(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)),
    ("socket AF_INET dgram ICMP", make(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)),
]:
    ok, _ = step(label, fn)
    if ok:
        got.append(label)
result(bool(got), "created: " + ", ".join(got) if got else "all refused")
