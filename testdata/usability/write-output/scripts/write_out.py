#!/usr/bin/env python3
"""Write a report into the work folder ($TMPDIR, and the working directory
when that is not the scripts/ folder, as with --workdir) and read it back."""
import hashlib
import os
import tempfile

body = "".join("line %d\n" % i for i in range(1000)).encode()
targets = [os.path.join(tempfile.gettempdir(), "report.txt")]
here = os.path.dirname(os.path.abspath(__file__))
if os.path.realpath(os.getcwd()) != os.path.realpath(here) and os.access(os.getcwd(), os.W_OK):
    targets.append(os.path.join(os.getcwd(), "report.txt"))
for path in targets:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(body)
    with open(path, "rb") as f:
        assert f.read() == body
print("CWD=" + os.getcwd())
print("USABILITY-OK wrote %d file(s) sha256=%s" % (len(targets), hashlib.sha256(body).hexdigest()[:16]))
