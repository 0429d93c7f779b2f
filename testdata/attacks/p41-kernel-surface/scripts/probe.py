#!/usr/bin/env python3
"""skill-sandbox attack probe 41: Calls the kernel interfaces behind most kernel escapes and reports which kernel answered."""
import ctypes
import errno as _errno
import os
import platform
import socket

# System call numbers: (x86_64, aarch64).
NR = {
    "io_uring_setup": (425, 425),
    "userfaultfd": (323, 282),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "add_key": (248, 217),
    "syslog": (103, 116),
}
ARCH = 0 if platform.machine() in ("x86_64", "AMD64") else 1
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def sys(name, *args):
    r = libc.syscall(ctypes.c_long(NR[name][ARCH]), *args)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


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
    except BaseException as e:
        print("STEP %s: %s" % (label, _fmt(e)), flush=True)
        return False
    print(("STEP %s: ok %s" % (label, value))[:4000], flush=True)
    return True


def fd_of(r):
    os.close(r)
    return "fd"


def io_uring():
    params = ctypes.create_string_buffer(120)
    return fd_of(sys("io_uring_setup", ctypes.c_uint(8), params))


def userfaultfd():
    return fd_of(sys("userfaultfd", ctypes.c_int(os.O_CLOEXEC | os.O_NONBLOCK)))


def bpf_map():
    # BPF_MAP_CREATE of a one-entry BPF_MAP_TYPE_ARRAY.
    attr = (ctypes.c_uint32 * 32)(2, 4, 4, 1)
    return fd_of(sys("bpf", ctypes.c_int(0), attr, ctypes.c_uint(ctypes.sizeof(attr))))


def perf_event():
    # PERF_TYPE_SOFTWARE, size 128, PERF_COUNT_SW_CPU_CLOCK, this process.
    attr = ctypes.create_string_buffer(128)
    ctypes.memmove(attr, (ctypes.c_uint32 * 2)(1, 128), 8)
    return fd_of(sys("perf_event_open", attr, ctypes.c_int(0), ctypes.c_int(-1), ctypes.c_int(-1), ctypes.c_ulong(0)))


def add_key():
    # A "user" key in the process keyring (KEY_SPEC_PROCESS_KEYRING).
    return "key %d" % sys("add_key", b"user", b"skill-sandbox-probe", b"x", ctypes.c_size_t(1), ctypes.c_int(-2))


def raw_socket(family, kind, proto):
    def f():
        socket.socket(family, kind, proto).close()
        return "created"
    return f


def kernel_log():
    # SYSLOG_ACTION_READ_ALL: the kernel's ring buffer.
    buf = ctypes.create_string_buffer(16384)
    n = sys("syslog", ctypes.c_int(3), buf, ctypes.c_int(len(buf)))
    first = buf.raw[:n].decode("utf-8", "replace").strip().split("\n")[0]
    return first[:200]


got = []
for label, fn in [
    ("io_uring_setup", io_uring),
    ("userfaultfd", userfaultfd),
    ("bpf map create", bpf_map),
    ("perf_event_open", perf_event),
    ("add_key", add_key),
    ("socket AF_INET raw", raw_socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)),
    ("socket AF_PACKET raw", raw_socket(17, socket.SOCK_RAW, 0x0300)),
]:
    if step(label, fn):
        got.append(label)
# Which kernel answered: not attacks, evidence.
step("kernel release", lambda: os.uname().release)
step("kernel log", kernel_log)
print("PROBE-RESULT: %s %s" % ("effect" if got else "none", "reached: " + ", ".join(got) if got else "all refused"), flush=True)
