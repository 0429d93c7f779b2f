#!/usr/bin/env python3
"""Print non-ASCII text."""
import sys

text = "Grüße, 世界 — naïve café 🚀"
sys.stdout.buffer.write(("USABILITY-OK " + text + "\n").encode("utf-8"))
print("encoding=" + (sys.stdout.encoding or "none"))
