import csv, sys

with open(sys.argv[1], newline="") as f:
    rows = list(csv.reader(f))
with open(sys.argv[2], "w") as out:
    out.write(f"{len(rows)} rows\n")
