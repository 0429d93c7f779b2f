#!/usr/bin/env python3
"""skill-sandbox attack probe 40: the script an approval would name."""
print("PROBE40 probe.py ran")
