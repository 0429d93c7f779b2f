#!/usr/bin/env python3
"""skill-sandbox attack probe 6: Tries an HTTP request to a listener on the host's 127.0.0.1."""
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

# Probe 6: HTTP request to a listener on the host's 127.0.0.1 (port given by the harness).
import socket
import urllib.request

port = int(sys.argv[1])


def raw():
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    s.close()
    return "connected"


step("tcp connect 127.0.0.1:%d" % port, raw)
ok, _ = step("http get", lambda: urllib.request.urlopen("http://127.0.0.1:%d/probe6" % port, timeout=3).status)
result(ok, "HTTP answered" if ok else "no HTTP answer")
