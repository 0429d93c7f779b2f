#!/usr/bin/env python3
"""skill-sandbox attack probe 28: Tries to leave processes running after the run (double fork, setsid, ignored signals)."""
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

# Probe 28: leave processes running after the run: a double fork with setsid and a
# new-session child that ignores SIGHUP/SIGTERM. The nonce (argv[1]) is in their
# argv and environment so the harness can find survivors on the host.
import subprocess
import time

nonce = sys.argv[1]
env = dict(os.environ, SKILL_SANDBOX_PROBE28=nonce)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    os.close(r)
    os.write(w, str(os.getpid()).encode())
    os.close(w)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.execve("/bin/sleep", ["skill-sandbox-probe28-" + nonce, "30"], env)
os.close(w)
os.waitpid(pid, 0)
print("STEP double fork: ok daemon pid %s" % os.read(r, 32).decode(), flush=True)
p = subprocess.Popen(
    ["bash", "-c", "trap '' HUP TERM; exec -a skill-sandbox-probe28b-%s sleep 30" % nonce],
    start_new_session=True, env=env,
    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
print("STEP setsid child: ok pid %d" % p.pid, flush=True)
time.sleep(0.2)
result(True, "daemons started; the harness checks whether they outlive the run")
