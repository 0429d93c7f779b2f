#!/usr/bin/env python3
"""skill-sandbox attack probe 7: Tries DNS lookups through the system resolver and a DNS listener on the host's 127.0.0.1."""
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

# Probe 7: DNS lookups: the system resolver and a raw query to a host DNS listener
# on 127.0.0.1 (UDP, port given by the harness).
import socket
import struct

port = int(sys.argv[1])
step("getaddrinfo example.com", lambda: socket.getaddrinfo("example.com", 80)[0][4][0])
query = struct.pack(">HHHHHH", 0x5353, 0x0100, 1, 0, 0, 0) + b"\x07example\x03com\x00" + struct.pack(">HH", 1, 1)


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(query, ("127.0.0.1", port))
    data, _ = s.recvfrom(512)
    return "answer of %d bytes" % len(data)


ok, _ = step("udp dns query 127.0.0.1:%d" % port, udp)
result(ok, "DNS answer received" if ok else "no DNS answer")
