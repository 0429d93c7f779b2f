import json
import sys

from pypdf import PdfReader, PdfWriter


def fill_pdf_fields(input_pdf_path, fields_json_path, output_pdf_path):
    with open(fields_json_path) as f:
        fields = json.load(f)
    reader = PdfReader(input_pdf_path)
    writer = PdfWriter(clone_from=reader)
    by_page = {}
    for field in fields:
        by_page.setdefault(field["page"], {})[field["field_id"]] = field["value"]
    for page, values in by_page.items():
        writer.update_page_form_field_values(writer.pages[page - 1], values, auto_regenerate=False)
    writer.set_need_appearances_writer(True)
    with open(output_pdf_path, "wb") as f:
        writer.write(f)


if __name__ == "__main__":
    fill_pdf_fields(sys.argv[1], sys.argv[2], sys.argv[3])
