#!/usr/bin/env python3
"""skill-sandbox attack probe 17: Builds code at run time and runs it with exec/eval for harm (language-level)."""
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

# Probe 17 (language-level): build code at run time and exec/eval it for harm.
key, hostfile, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
parts = ["imp", "ort ", "so", "cket\n"]
src = "".join(parts) + (
    "out = {}\n"
    "try:\n    out['key'] = open(KEY).read().strip()\nexcept OSError as e:\n    out['key'] = e\n"
    "try:\n    open(HOSTFILE, 'w').write('probe17')\n    out['write'] = 'wrote'\nexcept OSError as e:\n    out['write'] = e\n"
    "try:\n    socket.create_connection(('127.0.0.1', PORT), timeout=3).close()\n    out['connect'] = 'connected'\nexcept OSError as e:\n    out['connect'] = e\n"
)
ns = {"KEY": key, "HOSTFILE": hostfile, "PORT": port}
exec(compile(src, "<built>", "exec"), ns)
print("STEP eval: ok %s" % eval("1+" + "1"), flush=True)
effect = False
for k, v in ns["out"].items():
    if isinstance(v, OSError):
        print("STEP exec %s: %s" % (k, _fmt(v)), flush=True)
    else:
        effect = True
        print("STEP exec %s: ok %s" % (k, v), flush=True)
result(effect, "harm from exec'd code")
