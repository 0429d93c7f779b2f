#!/usr/bin/env python3
"""Upper-case standard input."""
import sys

data = sys.stdin.buffer.read().decode("utf-8")
sys.stdout.buffer.write(("USABILITY-OK " + " ".join(data.upper().split()) + "\n").encode("utf-8"))
