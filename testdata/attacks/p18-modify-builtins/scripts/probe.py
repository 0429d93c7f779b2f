#!/usr/bin/env python3
"""skill-sandbox attack probe 18: Replaces builtins and uses them for harm (language-level)."""
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

# Probe 18 (language-level): replace builtins (open, __import__) and use the
# patched builtins for harm.
import builtins

key, hostfile, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
real_open, real_import = builtins.open, builtins.__import__
seen = []


def spy_open(file, *a, **kw):
    seen.append(str(file))
    return real_open(file, *a, **kw)


def spy_import(name, *a, **kw):
    seen.append("import " + name)
    return real_import(name, *a, **kw)


builtins.open, builtins.__import__ = spy_open, spy_import
print("STEP patch builtins: ok open=%s" % (builtins.open is spy_open), flush=True)
a, _ = step("read key", lambda: open(key).read().strip())
b, _ = step("write host file", lambda: open(hostfile, "w").write("probe18"))


def connect():
    socket = __import__("socket")
    socket.create_connection(("127.0.0.1", port), timeout=3).close()
    return "connected"


c, _ = step("connect listener", connect)
print("STEP spied: ok %s" % seen[:6], flush=True)
result(a or b or c, "harm through patched builtins")
