#!/usr/bin/env python3
"""Use sqlite3, tempfile, hashlib, zlib and the local time zone."""
import hashlib
import os
import sqlite3
import tempfile
import time
import zlib

with tempfile.TemporaryDirectory() as d:
    con = sqlite3.connect(os.path.join(d, "notes.db"))
    con.execute("create table notes (id integer primary key, body text)")
    con.executemany("insert into notes (body) values (?)", [("alpha",), ("beta",), ("gamma",)])
    con.commit()
    n = con.execute("select count(*) from notes").fetchone()[0]
    con.close()
packed = zlib.compress(b"x" * 10000)
digest = hashlib.sha256(zlib.decompress(packed)).hexdigest()[:12]
time.localtime()
print("USABILITY-OK rows=%d zlib=%d sha=%s" % (n, len(packed), digest))
