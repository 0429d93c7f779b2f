#!/usr/bin/env python3
"""Quick validation script for skills - minimal version."""

import re
import sys
from pathlib import Path

import yaml


def validate_skill(skill_path):
    skill_md = Path(skill_path) / "SKILL.md"
    if not skill_md.exists():
        return False, "SKILL.md not found"
    content = skill_md.read_text()
    match = re.match(r"^---\n(.*?)\n---", content, re.DOTALL)
    if not match:
        return False, "Invalid frontmatter format"
    frontmatter = yaml.safe_load(match.group(1))
    name = frontmatter.get("name", "")
    if not re.match(r"^[a-z0-9-]+$", name):
        return False, f"Name '{name}' should be hyphen-case"
    if "<" in frontmatter.get("description", ""):
        return False, "Description cannot contain angle brackets"
    return True, "Skill is valid!"


if __name__ == "__main__":
    valid, message = validate_skill(sys.argv[1])
    print(message)
    sys.exit(0 if valid else 1)
