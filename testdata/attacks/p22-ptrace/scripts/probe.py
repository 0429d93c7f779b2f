#!/usr/bin/env python3
"""skill-sandbox attack probe 22: Tries to ptrace a host process and its own child."""
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

# Probe 22: ptrace a host process (pid from the harness) and our own child.
import ctypes
import signal
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def attach(pid):
    if libc.ptrace(PTRACE_ATTACH, pid, None, None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    os.waitpid(pid, getattr(os, "__WALL", 0x40000000)) if pid in children else time.sleep(0.1)
    time.sleep(1.0)  # hold the attachment so the harness can see TracerPid
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    return "attached"


children = []
host, _ = step("attach host pid %s" % sys.argv[1], lambda: attach(int(sys.argv[1])))
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
children.append(child)
own, _ = step("attach own child", lambda: attach(child))
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
result(host or own, "ptrace attach worked" if (host or own) else "ptrace refused")
