"""Print the text shown by Tj/TJ operators in a PDF's content streams."""
import re
import sys
import zlib

data = open(sys.argv[1], "rb").read()
if not data.startswith(b"%PDF-"):
    sys.exit("not a PDF")
texts = []
for m in re.finditer(rb"<<(.*?)>>\s*stream\r?\n(.*?)\r?\nendstream", data, re.S):
    head, body = m.group(1), m.group(2)
    if b"/FlateDecode" in head:
        body = zlib.decompress(body)
    for s in re.findall(rb"\(((?:\\.|[^\\)])*)\)\s*Tj", body):
        texts.append(re.sub(rb"\\(.)", rb"\1", s).decode("latin-1"))
pages = len(re.findall(rb"/Type\s*/Page\b", data))
print("USABILITY-OK pages=%d text=%s" % (pages, " | ".join(texts)))
