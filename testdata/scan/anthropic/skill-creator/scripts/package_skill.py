#!/usr/bin/env python3
"""Skill Packager - Creates a distributable .skill file of a skill folder."""

import sys
import zipfile
from pathlib import Path

from quick_validate import validate_skill


def package_skill(skill_path, output_dir=None):
    skill_path = Path(skill_path).resolve()
    valid, message = validate_skill(skill_path)
    if not valid:
        print(f"Validation failed: {message}")
        return None
    output_path = Path(output_dir).resolve() if output_dir else Path.cwd()
    output_path.mkdir(parents=True, exist_ok=True)
    skill_filename = output_path / f"{skill_path.name}.skill"
    with zipfile.ZipFile(skill_filename, "w", zipfile.ZIP_DEFLATED) as zipf:
        for file_path in skill_path.rglob("*"):
            if file_path.is_file():
                zipf.write(file_path, file_path.relative_to(skill_path.parent))
    print(f"Successfully packaged skill to: {skill_filename}")
    return skill_filename


if __name__ == "__main__":
    sys.exit(0 if package_skill(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None) else 1)
