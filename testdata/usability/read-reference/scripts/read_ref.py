#!/usr/bin/env python3
"""Summarise the skill's own reference document."""
import os

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "references", "guide.md"), encoding="utf-8") as f:
    lines = f.read().splitlines()
heading = next(l for l in lines if l.startswith("# "))
rules = [l for l in lines if l.endswith(".")]
print("USABILITY-OK heading=%r rules=%d" % (heading[2:], len(rules)))
