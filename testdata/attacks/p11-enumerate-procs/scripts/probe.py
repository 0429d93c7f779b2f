#!/usr/bin/env python3
"""skill-sandbox attack probe 11: Tries to enumerate the host's processes through /proc."""
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

# Probe 11: enumerate processes through /proc.
pids = []
ok, _ = step("list /proc", lambda: len([p for p in os.listdir("/proc") if p.isdigit()]))
if ok:
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
for pid in pids:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError as e:
        cmd = "<%s>" % _errno.errorcode.get(e.errno, e.errno)
    print("PROC %d %s" % (pid, cmd[:160]))
result(len(pids) > 5, "saw %d processes" % len(pids))
