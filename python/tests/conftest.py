"""Fixtures of the skill_sandbox tests: the binary, and skills made at test time."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Callable, Dict, Iterator

import pytest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))


def need(what: str) -> None:
    """Skip for a missing premise, or fail under CI=true, where it must be there."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {what}")
    pytest.skip(what)


@pytest.fixture(scope="session")
def binary() -> str:
    """The skill-sandbox binary under test: $SKILL_SANDBOX_BIN (make test sets it)."""
    b = os.environ.get("SKILL_SANDBOX_BIN", "")
    if not b or not os.access(b, os.X_OK):
        need("SKILL_SANDBOX_BIN does not name the built binary (run make test)")
    return os.path.abspath(b)


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A new folder every user may read: run as root, the script runs as another uid."""
    d = Path(tempfile.mkdtemp(prefix="skill-sandbox-pytest-"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


SkillMaker = Callable[..., Path]


@pytest.fixture
def make_skill(workdir: Path) -> SkillMaker:
    """make_skill(name, scripts={file: source}, description=...) writes a skill."""

    def make(name: str = "my-skill", scripts: Dict[str, str] = None,
             description: str = "A skill made by a test. Use in tests.",
             frontmatter: str = None, parent: Path = None) -> Path:
        d = (parent or workdir) / name
        (d / "scripts").mkdir(parents=True)
        fm = frontmatter if frontmatter is not None else f"name: {name}\ndescription: {description}\n"
        (d / "SKILL.md").write_text(f"---\n{fm}---\n\n# {name}\n\nA test skill.\n")
        for f, src in (scripts or {}).items():
            p = d / "scripts" / f
            p.write_text(textwrap.dedent(src))
            p.chmod(0o755)
        for p in [d, d / "scripts", *d.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if p.is_dir() else 0))
        return d

    return make
