#!/usr/bin/env python3
"""skill-sandbox attack probe 37: Takes every inotify watch and instance and fanotify group the kernel lets it have, and holds them while the harness tries to use them as the caller."""
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

# Probe 37: per-user kernel counters the run shares with its caller (host
# root's, for a root caller): inotify watches (on the same files from one
# instance after another: a watch counts per instance and file), inotify
# instances and fanotify groups, each taken until the kernel refuses, then
# held for a few seconds while the harness tries to get one as the caller.
import ctypes
import ctypes.util
import time

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
hold = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
held = []  # descriptors kept open until the end


def stopped(n):
    e = ctypes.get_errno()
    return "%d (then %s)" % (n, _errno.errorcode.get(e, str(e)))


def watches():
    paths = []
    for root, dirs, files in os.walk("/usr"):
        for n in dirs + files:
            paths.append(os.path.join(root, n).encode())
        if len(paths) >= 20000:
            break
    total = 0
    while True:
        fd = libc.inotify_init1(0)
        if fd < 0:
            return stopped(total)
        held.append(fd)
        wds = set()
        for p in paths:
            wd = libc.inotify_add_watch(fd, p, 2)  # IN_MODIFY
            if wd >= 0:
                wds.add(wd)
            elif ctypes.get_errno() == _errno.ENOSPC:
                return stopped(total + len(wds))
        total += len(wds)
        if not wds:
            return stopped(total)


def take(make):
    n = 0
    while True:
        fd = make()
        if fd < 0:
            return stopped(n)
        held.append(fd)
        n += 1


step("inotify watches", watches)
step("inotify instances", lambda: take(lambda: libc.inotify_init1(0)))
# FAN_CLASS_NOTIF | FAN_REPORT_FID: what a process without CAP_SYS_ADMIN may have.
step("fanotify groups", lambda: take(lambda: libc.fanotify_init(0x200, 0)))
print("STEP holding: ok %d descriptors for %.1fs" % (len(held), hold), flush=True)
time.sleep(hold)
result(False, "the harness checks whether the caller was refused meanwhile")
