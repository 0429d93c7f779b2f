#!/usr/bin/env python3
"""Entry point."""
import json
import sys


def main():
    print(json.dumps({"args": sys.argv[1:]}))


if __name__ == "__main__":
    main()
