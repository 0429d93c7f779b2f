"""Exceptions of the skill_sandbox package."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class SkillSandboxError(Exception):
    """A call to skill-sandbox failed (a usage error, an unreadable result).

    ``message`` is the error text; ``stderr`` what the binary printed.
    """

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr


class BinaryNotFoundError(SkillSandboxError):
    """No skill-sandbox binary fits this platform (see :func:`find_binary`)."""


class SkillValidationError(SkillSandboxError):
    """A skill folder failed validation.

    ``message`` joins the errors into one line; ``errors`` and ``warnings``
    are the validator's problems (dicts with ``file``, ``message`` and,
    where known, ``line``, ``column``, ``field``); ``result`` is the whole
    JSON result of ``skill-sandbox validate --json``.
    """

    def __init__(self, message: str, errors: Optional[List[Dict[str, Any]]] = None,
                 warnings: Optional[List[Dict[str, Any]]] = None,
                 result: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.errors = errors or []
        self.warnings = warnings or []
        self.result = result or {}
