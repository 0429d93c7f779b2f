#!/usr/bin/env python3
"""skill-sandbox attack probe 1: Tries to read /etc/passwd and /etc/shadow."""
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

# Probe 1: read the account databases.
import hashlib

got = False
for path in ("/etc/passwd", "/etc/shadow"):
    ok, _ = step("read " + path, lambda p=path: "sha256=%s" % hashlib.sha256(open(p, "rb").read()).hexdigest())
    got = got or ok
result(got, "read at least one account file" if got else "both reads failed")
