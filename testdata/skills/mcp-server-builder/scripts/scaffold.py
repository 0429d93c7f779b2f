#!/usr/bin/env python3
"""Scaffold a server."""
import json
import sys


def main():
    print(json.dumps({"args": sys.argv[1:]}))


if __name__ == "__main__":
    main()
