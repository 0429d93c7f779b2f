#!/usr/bin/env python3
"""Sum and average one column of a CSV file; write output.json and a report."""
import csv
import json
import os
import sys


def main(argv):
    if len(argv) != 1:
        print("usage: stats.py FILE", file=sys.stderr)
        return 2
    raw = sys.stdin.read().strip()
    options = json.loads(raw) if raw else {}
    with open(argv[0], newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print("stats.py: no rows", file=sys.stderr)
        return 1
    column = options.get("column") or list(rows[0])[-1]
    values = [float(r[column]) for r in rows]
    result = {"column": column, "rows": len(values), "sum": sum(values), "mean": sum(values) / len(values)}
    with open("output.json", "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.makedirs("report", exist_ok=True)
    with open(os.path.join("report", "summary.txt"), "w", encoding="utf-8") as f:
        f.write(f"{column}: {len(values)} rows, sum {result['sum']:g}, mean {result['mean']:g}\n")
    print(f"{len(values)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
