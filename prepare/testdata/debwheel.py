"""Assemble wheels from distributions Debian installed.

Usage: /usr/bin/python3 debwheel.py OUTDIR NAME...

For each distribution NAME in /usr/lib/python3/dist-packages (its
.dist-info or .egg-info), writes OUTDIR/NAME-VERSION-TAG.whl holding its
top-level packages and modules (no __pycache__), a METADATA with its name,
version and Requires-Dist, a WHEEL and a RECORD with each file's SHA-256;
TAG is py3-none-any, or the interpreter's cpXY-cpXY-linux_ARCH when it has
extension modules. Prints each wheel's file name. Used by the prepare tests
to serve packages of the real world on a local index without PyPI.
"""
import base64
import hashlib
import importlib.metadata as md
import os
import re
import sys
import sysconfig
import zipfile

DIST = "/usr/lib/python3/dist-packages"


def top_level(dist):
    tops = (dist.read_text("top_level.txt") or "").split()
    if tops:
        return tops
    return sorted({str(f).split("/")[0] for f in dist.files or []
                   if not str(f).split("/")[0].endswith((".dist-info", ".egg-info"))
                   and not str(f).startswith("..")})


def files(dist):
    out = []
    for top in top_level(dist):
        p = os.path.join(DIST, top)
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for n in sorted(names):
                    full = os.path.join(root, n)
                    out.append((full, os.path.relpath(full, DIST)))
        elif os.path.isfile(p + ".py"):
            out.append((p + ".py", top + ".py"))
        else:
            for n in sorted(os.listdir(DIST)):
                if n.startswith(top + ".") and n.endswith(".so"):
                    out.append((os.path.join(DIST, n), n))
    return out


def wheel(outdir, name):
    dist = md.distribution(name)
    real, version = dist.metadata["Name"], dist.version
    found = files(dist)
    if not found:
        sys.exit("%s: no files in %s" % (name, DIST))
    binary = any(r.endswith(".so") for _, r in found)
    tag = "py3-none-any"
    if binary:
        v = "cp%d%d" % sys.version_info[:2]
        tag = "%s-%s-%s" % (v, v, sysconfig.get_platform().replace("-", "_").replace(".", "_"))
    norm = re.sub(r"[-_.]+", "_", real)
    info = "%s-%s.dist-info" % (norm, version)
    meta = ["Metadata-Version: 2.1", "Name: " + real, "Version: " + version]
    meta += ["Requires-Dist: " + r for r in dist.requires or []]
    entries = []
    for full, rel in found:
        with open(full, "rb") as f:
            entries.append((rel, f.read()))
    entries.append((info + "/METADATA", ("\n".join(meta) + "\n").encode()))
    entries.append((info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: debwheel\nRoot-Is-Purelib: %s\nTag: %s\n"
                                      % ("false" if binary else "true", tag)).encode()))
    record = []
    for rel, data in entries:
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (rel, h, len(data)))
    record.append(info + "/RECORD,,")
    file = "%s-%s-%s.whl" % (norm, version, tag)
    with zipfile.ZipFile(os.path.join(outdir, file), "w", zipfile.ZIP_DEFLATED) as z:
        for rel, data in entries:
            z.writestr(rel, data)
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    print(file)


for n in sys.argv[2:]:
    wheel(sys.argv[1], n)
