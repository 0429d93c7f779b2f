#!/usr/bin/env python3
"""Recalculate all formulas in an Excel file using LibreOffice."""

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from openpyxl import load_workbook

MACRO = '''<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">
    Sub RecalculateAndSave()
      ThisComponent.calculateAll()
      ThisComponent.store()
      ThisComponent.close(True)
    End Sub
</script:module>'''


def macro_dir():
    if platform.system() == "Darwin":
        return os.path.expanduser("~/Library/Application Support/LibreOffice/4/user/basic/Standard")
    return os.path.expanduser("~/.config/libreoffice/4/user/basic/Standard")


def recalc(filename, timeout=30):
    d = Path(macro_dir())
    d.mkdir(parents=True, exist_ok=True)
    (d / "Module1.xba").write_text(MACRO)
    cmd = ["soffice", "--headless", "--norestore",
           "vnd.sun.star.script:Standard.Module1.RecalculateAndSave?language=Basic&location=application",
           str(Path(filename).absolute())]
    subprocess.run(["timeout", str(timeout)] + cmd, capture_output=True, text=True)
    wb = load_workbook(filename, data_only=True)
    errors = {}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("#"):
                    errors.setdefault(cell.value, []).append(f"{ws.title}!{cell.coordinate}")
    return {"status": "errors_found" if errors else "success", "errors": errors}


if __name__ == "__main__":
    print(json.dumps(recalc(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30), indent=2))
