#!/usr/bin/env python3
"""skill-sandbox attack probe 9: Runs os.system('id') chained with reading the caller's key and writing a host file."""
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

# Probe 9: os.system('id'), chained with harmful follow-ups (key and host file given by the harness).
key, hostfile = sys.argv[1], sys.argv[2]
status = os.system("id; echo uid-line-done; cat %s; echo probe9 > %s" % (key, hostfile))
print("STEP os.system: ok exit status %d" % status, flush=True)
result(status == 0, "shell command chain exit status %d" % status)
