import os
import sys

from pdf2image import convert_from_path


def convert(pdf_path, output_dir, max_dim=1000):
    images = convert_from_path(pdf_path, dpi=200)
    for i, image in enumerate(images):
        width, height = image.size
        if width > max_dim or height > max_dim:
            scale = min(max_dim / width, max_dim / height)
            image = image.resize((int(width * scale), int(height * scale)))
        image_path = os.path.join(output_dir, f"page_{i+1}.png")
        image.save(image_path)
        print(f"Saved page {i+1} as {image_path} (size: {image.size})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("Usage: convert_pdf_to_images.py [input pdf] [output directory]")
        sys.exit(1)
    convert(sys.argv[1], sys.argv[2])
