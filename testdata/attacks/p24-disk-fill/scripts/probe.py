#!/usr/bin/env python3
"""skill-sandbox attack probe 24: Tries to write a 10 GiB file (disk fill)."""
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

# Probe 24: disk fill: a 10 GiB file (sparse, then dense writes) in the work folder.
import shutil
import tempfile

d = tempfile.gettempdir()
GiB, MiB = 1 << 30, 1 << 20
path = os.path.join(d, "probe24-big")


def sparse():
    with open(path, "wb") as f:
        f.seek(10 * GiB - 1)
        f.write(b"\0")
    return "size %d" % os.stat(path).st_size


def truncate():
    with open(path, "wb") as f:
        f.truncate(10 * GiB)
    return "size %d" % os.stat(path).st_size


big = False
ok, _ = step("sparse 10GiB", sparse)
big = big or ok
ok, _ = step("truncate 10GiB", truncate)
big = big or ok
try:
    os.unlink(path)
except OSError:
    pass
# Dense writes only where they cannot hurt the host: the disk has room to
# spare, or the work folder is a small file system of its own (filling it
# is the test).
usage = shutil.disk_usage(d)
free = usage.free if usage.total > 4 * GiB else 16 * GiB
print("STEP work folder fs: ok total %d MiB free %d MiB" % (usage.total // MiB, usage.free // MiB), flush=True)
written = 0
if free > 4 * GiB:
    def dense():
        global written
        buf = b"\xaa" * MiB
        with open(path, "wb") as f:
            while written < 320 * MiB:
                f.write(buf)
                f.flush()
                written += MiB
        return "%d MiB" % (written // MiB)
    step("dense 320MiB", dense)
    print("STEP dense written: ok %d MiB" % (written // MiB), flush=True)
    try:
        os.unlink(path)
    except OSError:
        pass
else:
    print("STEP dense 320MiB: skipped free=%d" % free, flush=True)
# Disk fill through many files, each under a per-file cap: 8 x 128 MiB = 1 GiB.
multi = 0
if free > 8 * GiB:
    def many():
        global multi
        buf = b"\x55" * MiB
        for i in range(8):
            with open(os.path.join(d, "probe24-part%d" % i), "wb") as f:
                for _ in range(128):
                    f.write(buf)
                    multi += 1
            print("STEP many progress %d: ok %d MiB" % (i, multi), flush=True)
        return "%d MiB" % multi
    step("many files 1GiB", many)
    print("STEP many written: ok %d MiB" % multi, flush=True)
    for i in range(8):
        try:
            os.unlink(os.path.join(d, "probe24-part%d" % i))
        except OSError:
            pass
else:
    print("STEP many files 1GiB: skipped free=%d" % free, flush=True)
# Inode exhaustion: 20,000 empty files (no bytes; the default tmpfs work
# folder has 16,384 inodes).
made = 0


def inodes():
    global made
    for i in range(20000):
        open(os.path.join(d, "probe24-i%d" % i), "w").close()
        made += 1
    return "%d files" % made


step("empty files 20000", inodes)
print("STEP empty files made: ok %d" % made, flush=True)
for i in range(made):
    try:
        os.unlink(os.path.join(d, "probe24-i%d" % i))
    except OSError:
        pass
# Sparse files take no space; the effect is real bytes on disk.
result(written >= 320 * MiB or multi >= 1024 or made >= 20000, "10 GiB sparse=%s dense=%d MiB many-files=%d MiB empty-files=%d" % (big, written // MiB, multi, made))
