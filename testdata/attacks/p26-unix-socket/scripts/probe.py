#!/usr/bin/env python3
"""skill-sandbox attack probe 26: Tries to connect to the host's filesystem and abstract unix sockets."""
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

# Probe 26: connect to host unix sockets: filesystem paths and an abstract name (from the harness).
import socket

got = False
for name in sys.argv[1:]:
    addr = "\0" + name[1:] if name.startswith("@") else name

    def conn(a=addr):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(a)
        s.sendall(b"probe26\n")
        s.close()
        return "connected"

    ok, _ = step("connect " + name, conn)
    got = got or ok
result(got, "connected" if got else "all refused")
