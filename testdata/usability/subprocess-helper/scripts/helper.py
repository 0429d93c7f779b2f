#!/usr/bin/env python3
"""Helper: print the square of its argument."""
import sys

print(int(sys.argv[1]) ** 2)
