#!/usr/bin/env python3
"""skill-sandbox attack probe 19: Tries to read a secret from the caller's environment variables."""
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

# Probe 19: read the caller's environment (the harness sets SECRET_TOKEN for the runner).
def dump(path):
    with open(path, "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace")


print("ENV " + " ".join("%s=%s" % kv for kv in sorted(os.environ.items())), flush=True)
step("/proc/self/environ", lambda: dump("/proc/self/environ"))
step("/proc/ppid/environ", lambda: dump("/proc/%d/environ" % os.getppid()))
step("/proc/1/environ", lambda: dump("/proc/1/environ"))
result("SECRET_TOKEN" in os.environ, "SECRET_TOKEN %s" % ("present" if "SECRET_TOKEN" in os.environ else "absent"))
