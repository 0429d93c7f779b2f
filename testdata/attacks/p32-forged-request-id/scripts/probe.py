#!/usr/bin/env python3
"""skill-sandbox attack probe 32: Starts daemons whose environment carries a forged SKILL_SANDBOX_REQUEST_ID, to escape a sweep that finds a run's processes by their environment."""
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

# Probe 32: daemons with a forged SKILL_SANDBOX_REQUEST_ID (another run's id, or
# none at all), started with a double fork and setsid, to escape an orphan sweep
# that finds a run's processes by their environment. The nonce (argv[1]) is in
# their argv so the harness can find survivors on the host.
nonce = sys.argv[1]
forged = dict(os.environ, SKILL_SANDBOX_REQUEST_ID="forged-" + nonce)
scrubbed = {k: v for k, v in os.environ.items() if k != "SKILL_SANDBOX_REQUEST_ID"}


def daemon(tag, env):
    def f():
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
            except OSError:
                pass  # keep going without a new session
            if os.fork() != 0:
                os._exit(0)
            os.close(r)
            os.write(w, str(os.getpid()).encode())
            os.close(w)
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.execve("/bin/sleep", ["skill-sandbox-probe32%s-%s" % (tag, nonce), "30"], env)
        os.close(w)
        os.waitpid(pid, 0)
        return "daemon pid %s" % os.read(r, 32).decode()
    return f


step("forged id daemon", daemon("a", forged))
step("no id daemon", daemon("b", scrubbed))
import time
time.sleep(0.2)
result(True, "daemons started; the harness checks whether they outlive the run")
