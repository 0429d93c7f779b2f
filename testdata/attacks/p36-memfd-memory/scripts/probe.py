#!/usr/bin/env python3
"""skill-sandbox attack probe 36: Holds 1 GiB in memfds, then 1 GiB in System V shared memory, under a 512 MiB memory limit."""
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

# Probe 36: memory no address space counts. RLIMIT_AS is per process and
# counts mappings; pages written into a memfd, or into a System V segment
# that is then detached, are in no process's address space. 1 GiB each,
# under the default --memory 512.
import ctypes

MiB = 1 << 20
CHUNK = 256  # MiB per memfd or segment
WANT = 1024  # MiB in all, per kind
memfd_mib = 0
fds = []


def memfds():
    global memfd_mib
    buf = b"\x5a" * MiB
    for i in range(WANT // CHUNK):
        fd = os.memfd_create("p36-%d" % i)
        fds.append(fd)
        for _ in range(CHUNK):
            os.write(fd, buf)
            memfd_mib += 1
        print("STEP memfd progress %d: ok %d MiB" % (i, memfd_mib), flush=True)
    return "%d MiB" % memfd_mib


step("memfd 1GiB", memfds)
print("STEP memfd held: ok %d MiB" % memfd_mib, flush=True)
for fd in fds:
    os.close(fd)

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
shm_mib = 0
ids = []


def sysv():
    global shm_mib
    for i in range(WANT // CHUNK):
        sid = libc.shmget(IPC_PRIVATE, CHUNK * MiB, IPC_CREAT | 0o600)
        if sid < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        ids.append(sid)
        addr = libc.shmat(sid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        ctypes.memset(addr, 0x5A, CHUNK * MiB)
        libc.shmdt(ctypes.c_void_p(addr))
        shm_mib += CHUNK
        print("STEP shm progress %d: ok %d MiB" % (i, shm_mib), flush=True)
    return "%d MiB" % shm_mib


step("sysv shm 1GiB", sysv)
print("STEP shm held: ok %d MiB" % shm_mib, flush=True)
for sid in ids:
    libc.shmctl(sid, IPC_RMID, None)
result(memfd_mib >= WANT or shm_mib >= WANT, "memfd=%d MiB sysv=%d MiB held at once (limit 512 MiB)" % (memfd_mib, shm_mib))
