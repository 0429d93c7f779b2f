#!/usr/bin/env python3
"""Print word, line and character counts and the top five words of a text file as JSON.

Usage: stats.py PATH [--out FILE]

PATH is resolved relative to the skill folder (the parent of scripts/), so
"references/sample.txt" works from any working directory; an absolute PATH
is used as it is. With --out FILE the JSON is also written to FILE, relative
to the current directory. Nothing else is written, so a read-only working
directory is fine. Standard library only.
"""
import argparse
import collections
import json
import re
import sys
from pathlib import Path

SKILL_DIR = Path(__file__).resolve().parent.parent


def stats(text):
    words = [w.lower() for w in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)*", text)]
    top = collections.Counter(words).most_common(5)
    return {
        "words": len(words),
        "lines": len(text.splitlines()),
        "chars": len(text),
        "top": [{"word": w, "count": n} for w, n in top],
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", help="text file, relative to the skill folder")
    parser.add_argument("--out", help="also write the JSON to this file (relative to the current directory)")
    args = parser.parse_args(argv)
    path = Path(args.path)
    if not path.is_absolute():
        path = SKILL_DIR / path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        print(f"stats.py: cannot read {args.path}: {e.strerror}", file=sys.stderr)
        return 1
    result = json.dumps(stats(text), ensure_ascii=False)
    print(result)
    if args.out:
        try:
            Path(args.out).write_text(result + "\n", encoding="utf-8")
        except OSError as e:
            print(f"stats.py: cannot write {args.out}: {e.strerror}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
