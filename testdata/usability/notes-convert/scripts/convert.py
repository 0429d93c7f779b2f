"""Convert notes.txt to Markdown: python3 convert.py notes.txt out/notes.md"""
import os
import sys

src, dst = sys.argv[1], sys.argv[2]
lines = [l.rstrip("\n") for l in open(src)]
md = ["# " + lines[0], ""] + ["- " + l for l in lines[1:] if l.strip()]
os.makedirs(os.path.dirname(dst), exist_ok=True)
open(dst, "w").write("\n".join(md) + "\n")
print("USABILITY-OK cwd=%s items=%d" % (os.path.basename(os.getcwd()), len(md) - 2))
