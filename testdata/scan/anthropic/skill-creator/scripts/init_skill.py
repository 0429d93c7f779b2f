#!/usr/bin/env python3
"""Skill Initializer - Creates a new skill from template."""

import sys
from pathlib import Path

SKILL_TEMPLATE = """---
name: {skill_name}
description: [TODO: Complete explanation of what the skill does and when to use it.]
---

# {skill_title}

## Overview

[TODO: 1-2 sentences explaining what this skill enables]
"""

EXAMPLE_SCRIPT = '''#!/usr/bin/env python3
"""Example helper script for {skill_name}."""

def main():
    print("This is an example script for {skill_name}")

if __name__ == "__main__":
    main()
'''


def init_skill(skill_name, path):
    skill_dir = Path(path).resolve() / skill_name
    if skill_dir.exists():
        print(f"Error: Skill directory already exists: {skill_dir}")
        return None
    skill_dir.mkdir(parents=True, exist_ok=False)
    title = " ".join(w.capitalize() for w in skill_name.split("-"))
    (skill_dir / "SKILL.md").write_text(SKILL_TEMPLATE.format(skill_name=skill_name, skill_title=title))
    scripts = skill_dir / "scripts"
    scripts.mkdir()
    example = scripts / "example.py"
    example.write_text(EXAMPLE_SCRIPT.format(skill_name=skill_name))
    example.chmod(0o755)
    (skill_dir / "references").mkdir()
    (skill_dir / "assets").mkdir()
    return skill_dir


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--path":
        print("Usage: init_skill.py <skill-name> --path <path>")
        sys.exit(1)
    sys.exit(0 if init_skill(sys.argv[1], sys.argv[3]) else 1)
