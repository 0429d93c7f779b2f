"""Run Agent Skills' scripts in the skill-sandbox kernel sandbox.

    from skill_sandbox import SkillSandbox, validate_skill, SkillValidationError
    meta = validate_skill("./my-skill")
    sandbox = SkillSandbox(skill_path="./my-skill", timeout=10, memory_mb=256, allow_network=False)
    result = sandbox.run_script("stats.py", args=["notes.txt"])
    print(result.exit_code, result.stdout, result.to_jsonl())

The package drives the skill-sandbox binary (the one in a platform wheel,
else $SKILL_SANDBOX_BIN, else PATH) through its JSON interfaces; it needs
nothing outside the standard library. See docs/python.md.
"""

from ._binary import ENV_VAR, bundled_binary, find_binary
from ._cli import ValidationResult, VerifyResult
from ._core import (
    SkillSandbox,
    find_skills,
    list_scripts,
    scan_skill,
    validate_skill,
    verify_skill,
)
from ._errors import BinaryNotFoundError, SkillSandboxError, SkillValidationError
from ._result import RunResult
from ._version import __version__

__all__ = [
    "ENV_VAR",
    "BinaryNotFoundError",
    "RunResult",
    "SkillSandbox",
    "SkillSandboxError",
    "SkillValidationError",
    "ValidationResult",
    "VerifyResult",
    "__version__",
    "bundled_binary",
    "find_binary",
    "find_skills",
    "list_scripts",
    "scan_skill",
    "validate_skill",
    "verify_skill",
]
