#!/usr/bin/env python3
"""skill-sandbox attack probe 8: Tries to listen on a TCP port that the host can connect to."""
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

# Probe 8: listen on a TCP port (given by the harness, which tries to connect to it).
import socket

port = int(sys.argv[1])
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ok, _ = step("bind 0.0.0.0:%d" % port, lambda: srv.bind(("0.0.0.0", port)))
accepted = False
if ok:
    ok, _ = step("listen", lambda: srv.listen(8))
    print("PROBE-LISTENING", flush=True)
if ok:
    srv.settimeout(4)
    accepted, _ = step("accept", lambda: srv.accept()[1])
result(accepted, "accepted a connection" if accepted else "no connection accepted")
