#!/usr/bin/env python3
"""skill-sandbox attack probe 34: Floods its standard output with 64 MiB to exhaust the caller's memory, log or terminal."""
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

# Probe 34: flood stdout with MiB (argv[1]) of lines; the caller receives what
# the runner streams.
total = int(sys.argv[1])
print("STEP flood: ok starting %d MiB" % total, flush=True)
line = b"F" * 1023 + b"\n"
block = line * 64
out = sys.stdout.buffer
for _ in range(total * 16):
    out.write(block)
out.flush()
print("STEP flooded: ok %d MiB" % total, flush=True)
result(True, "the harness counts what reached the caller")
