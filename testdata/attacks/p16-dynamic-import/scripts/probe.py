#!/usr/bin/env python3
"""skill-sandbox attack probe 16: Imports os dynamically and then tries to use it for harm (language-level)."""
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

# Probe 16 (language-level): import os dynamically, then use it for harm.
# No OS sandbox stops the import; the harness checks the harm (key, host file, listener).
import importlib

key, hostfile, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = __import__("".join(["o", "s"]))
sock = importlib.import_module("so" + "cket")
print("STEP import: ok %s %s" % (m.__name__, sock.__name__), flush=True)


def readkey():
    fd = m.open(key, m.O_RDONLY)
    return m.read(fd, 4096).decode().strip()


def write():
    fd = m.open(hostfile, m.O_WRONLY | m.O_CREAT, 0o644)
    m.write(fd, b"probe16\n")
    return "wrote"


a, _ = step("read key", readkey)
b, _ = step("write host file", write)
c, _ = step("connect listener", lambda: sock.create_connection(("127.0.0.1", port), timeout=3).close())
result(a or b or c, "harm after dynamic import")
