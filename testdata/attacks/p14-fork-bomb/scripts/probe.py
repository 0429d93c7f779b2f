#!/usr/bin/env python3
"""skill-sandbox attack probe 14: Forks hundreds of processes (a bounded fork bomb)."""
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

# Probe 14: bounded fork bomb: fork up to N children that sleep (N from the harness;
# argv[2] is a nonce so the harness can count the processes from the host).
import signal
import time

target = int(sys.argv[1])
children = []


def bomb():
    while len(children) < target:
        pid = os.fork()
        if pid == 0:
            time.sleep(4)
            os._exit(0)
        children.append(pid)
    return "%d children" % len(children)


ok, _ = step("fork %d" % target, bomb)
print("STEP forked: ok %d" % len(children), flush=True)
time.sleep(1)
for pid in children:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
for pid in children:
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass
result(len(children) >= target, "forked %d of %d" % (len(children), target))
