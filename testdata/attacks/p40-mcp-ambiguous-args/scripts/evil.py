#!/usr/bin/env python3
"""skill-sandbox attack probe 40: the script an ambiguous call would really run."""
print("PROBE40 evil.py ran")
