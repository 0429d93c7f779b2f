#!/usr/bin/env python3
"""skill-sandbox attack probe 20: Tries to read the host name, kernel version and user list."""
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

# Probe 20: system information: host name, kernel, users.
import socket


def first_line(path):
    with open(path) as f:
        return f.readline().strip()


def users():
    with open("/etc/passwd") as f:
        return ",".join(sorted(l.split(":")[0] for l in f if ":" in l))


step("gethostname", socket.gethostname)
step("uname nodename", lambda: os.uname().nodename)
step("/etc/hostname", lambda: first_line("/etc/hostname"))
step("/proc/sys/kernel/hostname", lambda: first_line("/proc/sys/kernel/hostname"))
step("uname release", lambda: os.uname().release)
step("/proc/version", lambda: first_line("/proc/version"))
step("users /etc/passwd", users)
step("list /home", lambda: ",".join(sorted(os.listdir("/home"))))
step("utmp", lambda: os.path.getsize("/var/run/utmp"))
result(True, "see the STEP lines")
