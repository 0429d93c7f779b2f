#!/usr/bin/env python3
"""Summarise the sales CSV per region as JSON."""
import csv
import io
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
totals = {}
with open(os.path.join(here, "..", "references", "sales.csv"), newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = round(totals.get(row["region"], 0) + int(row["units"]) * float(row["price"]), 2)
out = io.StringIO()
w = csv.writer(out)
w.writerows(sorted(totals.items()))
assert out.getvalue().count("\n") == len(totals)
print("USABILITY-OK " + json.dumps(totals, sort_keys=True))
