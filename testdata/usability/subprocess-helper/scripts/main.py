#!/usr/bin/env python3
"""Run a helper script and sort(1) as subprocesses, and a small thread pool."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

here = os.path.dirname(os.path.abspath(__file__))
helper = subprocess.run([sys.executable, os.path.join(here, "helper.py"), "7"],
                        capture_output=True, text=True, check=True).stdout.strip()
sorted_out = subprocess.run(["sort"], input="pear\napple\nfig\n", capture_output=True,
                            text=True, check=True).stdout.split()
with ThreadPoolExecutor(max_workers=8) as pool:
    squares = list(pool.map(lambda n: n * n, range(16)))
shell = subprocess.run("echo $((6*7))", shell=True, capture_output=True, text=True, check=True).stdout.strip()
assert helper == "49" and sorted_out == ["apple", "fig", "pear"] and squares[15] == 225 and shell == "42"
print("USABILITY-OK helper=%s sort=%s threads=%d shell=%s" % (helper, ",".join(sorted_out), len(squares), shell))
