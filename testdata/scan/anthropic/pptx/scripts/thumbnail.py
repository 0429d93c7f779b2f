#!/usr/bin/env python3
"""Create thumbnail grids from PowerPoint slides."""

import argparse
import subprocess
import tempfile
from pathlib import Path

from PIL import Image


def convert_to_images(pptx_path, temp_dir, dpi=100):
    pdf_path = temp_dir / f"{pptx_path.stem}.pdf"
    subprocess.run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", str(temp_dir), str(pptx_path)],
                   capture_output=True, text=True, check=True)
    subprocess.run(["pdftoppm", "-jpeg", "-r", str(dpi), str(pdf_path), str(temp_dir / "slide")], check=True)
    return sorted(temp_dir.glob("slide-*.jpg"))


def main():
    parser = argparse.ArgumentParser(description="Create thumbnail grids from PowerPoint slides.")
    parser.add_argument("input")
    parser.add_argument("output_prefix")
    parser.add_argument("--cols", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        images = convert_to_images(Path(args.input), Path(d))
        grid = Image.new("RGB", (300 * args.cols, 200 * ((len(images) + args.cols - 1) // args.cols)), "white")
        for i, p in enumerate(images):
            with Image.open(p) as im:
                im.thumbnail((300, 200))
                grid.paste(im, ((i % args.cols) * 300, (i // args.cols) * 200))
        grid.save(f"{args.output_prefix}.jpg")


if __name__ == "__main__":
    main()
