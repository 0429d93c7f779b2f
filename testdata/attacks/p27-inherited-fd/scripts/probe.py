#!/usr/bin/env python3
"""skill-sandbox attack probe 27: Tries to read a file descriptor inherited from the caller."""
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

# Probe 27: read file descriptors inherited from the caller (fd 3 and up).
ok, fds = step("list /proc/self/fd", lambda: sorted(int(x) for x in os.listdir("/proc/self/fd")))
got = False
for fd in range(3, 64):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    try:
        target = os.readlink("/proc/self/fd/%d" % fd)
    except OSError:
        target = "?"
    ok2, _ = step("pread fd %d (%s)" % (fd, target), lambda f=fd: os.pread(f, 200, 0).decode(errors="replace").strip())
    got = got or ok2
result(got, "read an inherited descriptor" if got else "no readable descriptor above 2")
