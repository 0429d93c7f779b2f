#!/usr/bin/env python3
"""Pack a directory into a .docx, .pptx, or .xlsx file."""

import argparse
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path


def validate_document(doc_path):
    """Convert to PDF with LibreOffice to check the document opens."""
    with tempfile.TemporaryDirectory() as temp_dir:
        result = subprocess.run(
            ["soffice", "--headless", "--convert-to", "pdf", "--outdir", temp_dir, str(doc_path)],
            capture_output=True, timeout=10, text=True,
        )
        return result.returncode == 0


def pack_document(input_dir, output_file):
    with tempfile.TemporaryDirectory() as temp_dir:
        temp_content_dir = Path(temp_dir) / "content"
        shutil.copytree(input_dir, temp_content_dir)
        with zipfile.ZipFile(output_file, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in temp_content_dir.rglob("*"):
                if f.is_file():
                    zf.write(f, f.relative_to(temp_content_dir))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("input_directory")
    parser.add_argument("output_file")
    args = parser.parse_args()
    pack_document(args.input_directory, args.output_file)
