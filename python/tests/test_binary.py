"""Finding the binary: the wheel's, then $SKILL_SANDBOX_BIN, then PATH."""

from __future__ import annotations

import os

import pytest

import skill_sandbox
from skill_sandbox import BinaryNotFoundError, find_binary


def test_source_tree_has_no_bundled_binary():
    assert skill_sandbox.bundled_binary() is None


def test_env_then_path(binary, workdir, monkeypatch):
    on_path = workdir / "path"
    on_path.mkdir()
    os.symlink(binary, on_path / "skill-sandbox")
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setenv("SKILL_SANDBOX_BIN", binary)
    assert find_binary() == binary
    monkeypatch.delenv("SKILL_SANDBOX_BIN")
    assert find_binary() == str(on_path / "skill-sandbox")


def test_bad_env_is_an_error(workdir, monkeypatch):
    not_exe = workdir / "not-exe"
    not_exe.write_text("")
    monkeypatch.setenv("SKILL_SANDBOX_BIN", str(not_exe))
    with pytest.raises(BinaryNotFoundError, match="not an executable file"):
        find_binary()


def test_none_found(workdir, monkeypatch):
    monkeypatch.delenv("SKILL_SANDBOX_BIN", raising=False)
    monkeypatch.setenv("PATH", str(workdir))
    with pytest.raises(BinaryNotFoundError) as exc:
        skill_sandbox.validate_skill(workdir)
    assert "SKILL_SANDBOX_BIN" in exc.value.message and "PATH" in exc.value.message
