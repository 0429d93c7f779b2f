"""Summarise a sales CSV into out/summary.json and out/by_region.csv."""
import csv
import json
import os
import sys

src, out = sys.argv[1], sys.argv[2]
totals = {}
with open(src, newline="") as f:
    rows = list(csv.DictReader(f))
for r in rows:
    totals[r["region"]] = totals.get(r["region"], 0) + float(r["amount"])
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"rows": len(rows), "total": sum(totals.values())}, f, sort_keys=True)
with open(os.path.join(out, "by_region.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "amount"])
    for k in sorted(totals):
        w.writerow([k, "%.2f" % totals[k]])
print("USABILITY-OK rows=%d regions=%d" % (len(rows), len(totals)))
