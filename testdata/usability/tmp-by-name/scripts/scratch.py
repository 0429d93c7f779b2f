#!/usr/bin/env python3
"""Write scratch files in /tmp by name (not through TMPDIR) and read them back."""
import hashlib
import os

body = "".join("row %d\n" % i for i in range(2000)).encode()
os.makedirs("/tmp/scratch-dir", exist_ok=True)
for path in ("/tmp/scratch.txt", "/tmp/scratch-dir/part.txt"):
    with open(path, "wb") as f:
        f.write(body)
    with open(path, "rb") as f:
        assert f.read() == body, path
os.remove("/tmp/scratch.txt")
os.remove("/tmp/scratch-dir/part.txt")
os.rmdir("/tmp/scratch-dir")
# Which file system /tmp is: the suite checks that it is not the host's.
print("TMPDEV=%d" % os.stat("/tmp").st_dev)
print("USABILITY-OK /tmp by name sha256=%s" % hashlib.sha256(body).hexdigest()[:16])
