#!/usr/bin/env python3
"""skill-sandbox attack probe 33: Connects to a listener on the host's 127.0.0.1 with TCP Fast Open (sendto MSG_FASTOPEN, TCP_FASTOPEN_CONNECT), past a connect() rule."""
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

# Probe 33: TCP Fast Open connects inside sendto/sendmsg, where a connect()
# rule (Landlock's) does not look: sendto(MSG_FASTOPEN) and
# setsockopt(TCP_FASTOPEN_CONNECT) + connect to a host listener on 127.0.0.1.
import socket

port = int(sys.argv[1])
addr = ("127.0.0.1", port)


def sendto_fastopen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    s.sendto(b"p33-fastopen\n", socket.MSG_FASTOPEN, addr)
    s.close()
    return "sent"


def fastopen_connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    s.setsockopt(socket.IPPROTO_TCP, 30, 1)  # TCP_FASTOPEN_CONNECT
    s.connect(addr)
    s.sendall(b"p33-connect\n")
    s.close()
    return "connected"


ok1, _ = step("sendto MSG_FASTOPEN", sendto_fastopen)
ok2, _ = step("TCP_FASTOPEN_CONNECT", fastopen_connect)
result(ok1 or ok2, "the harness counts what the host listener accepted")
