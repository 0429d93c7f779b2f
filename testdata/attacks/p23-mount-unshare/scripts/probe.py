#!/usr/bin/env python3
"""skill-sandbox attack probe 23: Tries unshare, mount and setns through libc."""
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

# Probe 23: unshare, mount and setns through libc.
import ctypes
import tempfile

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 0x40000


def call(fn, *args):
    if fn(*args) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return "returned 0"


done = []
ok, _ = step("unshare(CLONE_NEWUSER)", lambda: call(libc.unshare, CLONE_NEWUSER))
if ok:
    done.append("unshare-user")
ok, _ = step("unshare(CLONE_NEWNS)", lambda: call(libc.unshare, CLONE_NEWNS))
if ok:
    done.append("unshare-mnt")
    # Private propagation first so nothing below can reach the caller's mounts.
    step("make / private", lambda: call(libc.mount, None, b"/", None, MS_REC | MS_PRIVATE, None))
target = tempfile.mkdtemp(prefix="probe23-")
ok, _ = step("mount tmpfs " + target, lambda: call(libc.mount, b"none", target.encode(), b"tmpfs", 0, None))
if ok:
    done.append("mount")
    libc.umount2(target.encode(), 0)
os.rmdir(target)


def setns():
    fd = os.open("/proc/1/ns/mnt", os.O_RDONLY)
    try:
        return call(libc.setns, fd, 0)
    finally:
        os.close(fd)


ok, _ = step("setns(/proc/1/ns/mnt)", setns)
if ok:
    done.append("setns")
result(bool(done), ",".join(done) or "all refused")
