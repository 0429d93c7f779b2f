#!/usr/bin/env python3
"""skill-sandbox attack probe 31: Reads a host System V shared memory segment by its key and leaves a segment of its own for a later run to find."""
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

# Probe 31: System V shared memory: attach the host's segment (key from the
# harness) and read its secret, then create a segment under a second key that
# would outlive the run and be visible to the host and to concurrent runs.
import ctypes
import ctypes.util

libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
host_key = int(sys.argv[1])
own_key = int(sys.argv[2])


def err():
    e = ctypes.get_errno()
    return OSError(e, os.strerror(e))


def read_host():
    sid = libc.shmget(host_key, 0, 0)
    if sid < 0:
        raise err()
    p = libc.shmat(sid, None, 0o10000)  # SHM_RDONLY
    if p is None or p == ctypes.c_void_p(-1).value:
        raise err()
    return ctypes.string_at(p, 64).split(b"\0")[0].decode(errors="replace")


def create_own():
    sid = libc.shmget(own_key, 4096, 0o1000 | 0o666)  # IPC_CREAT
    if sid < 0:
        raise err()
    return "segment id %d" % sid


ok1, _ = step("shmget host key", read_host)
ok2, _ = step("shmget create own key", create_own)
result(ok1 or ok2, "the harness checks the host's segments")
