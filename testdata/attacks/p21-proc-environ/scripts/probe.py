#!/usr/bin/env python3
"""skill-sandbox attack probe 21: Tries to read /proc/1/environ and other processes' /proc entries."""
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

# Probe 21: read other processes' /proc entries (a host pid from the harness, pid 1, the parent).
def dump(path):
    with open(path, "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")[:1500]


got = False
for pid in (sys.argv[1], "1", str(os.getppid())):
    for entry in ("environ", "cmdline"):
        ok, _ = step("/proc/%s/%s" % (pid, entry), lambda p="/proc/%s/%s" % (pid, entry): dump(p))
        got = got or (ok and entry == "environ")
step("/proc/%s/maps" % sys.argv[1], lambda: len(dump("/proc/%s/maps" % sys.argv[1])))
result(got, "read another process's environ" if got else "no environ readable")
