#!/usr/bin/env python3
"""Build report.docx in the working directory, convert it to report.pdf with
LibreOffice and check the result (soffice can exit 0 without writing it)."""
import os
import subprocess
import sys
import tempfile
import zipfile

# Work in the working directory (the work folder under --workdir), but
# never write into the skill's own scripts/ folder (a bare run).
here = os.path.dirname(os.path.abspath(__file__))
if os.path.realpath(os.getcwd()) == os.path.realpath(here):
    os.chdir(tempfile.mkdtemp())
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
with zipfile.ZipFile("report.docx", "w") as z:
    z.writestr("[Content_Types].xml",
               '<?xml version="1.0" encoding="UTF-8"?>'
               '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
               '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
               '<Default Extension="xml" ContentType="application/xml"/>'
               '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
               '</Types>')
    z.writestr("_rels/.rels",
               '<?xml version="1.0" encoding="UTF-8"?>'
               '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
               '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>'
               '</Relationships>')
    z.writestr("word/document.xml",
               '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="%s"><w:body>'
               '<w:p><w:r><w:t>Quarterly report, converted in the sandbox.</w:t></w:r></w:p>'
               '</w:body></w:document>' % W)
r = subprocess.run(["soffice", "--headless", "--norestore", "--convert-to", "pdf", "--outdir", ".", "report.docx"],
                   capture_output=True, text=True, timeout=150)
if r.returncode != 0 or not os.path.exists("report.pdf"):
    sys.exit("soffice exit %d, no PDF: %s %s" % (r.returncode, r.stdout, r.stderr))
data = open("report.pdf", "rb").read()
if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-1024:]:
    sys.exit("report.pdf is not a PDF")
print("CWD=" + os.getcwd())
print("USABILITY-OK converted docx to a PDF")
