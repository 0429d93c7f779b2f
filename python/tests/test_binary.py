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


@pytest.mark.parametrize("entry", ["", ".", "bin"])
def test_relative_path_entries_are_skipped(binary, workdir, monkeypatch, entry):
    # A skill-sandbox planted in the current folder (a skill's, say) is
    # not picked through an empty, "." or relative PATH entry.
    planted = workdir / "bin" / "skill-sandbox" if entry == "bin" else workdir / "skill-sandbox"
    planted.parent.mkdir(exist_ok=True)
    planted.write_text("#!/bin/sh\nexit 0\n")
    planted.chmod(0o755)
    on_path = workdir / "path"
    on_path.mkdir()
    os.symlink(binary, on_path / "skill-sandbox")
    monkeypatch.delenv("SKILL_SANDBOX_BIN", raising=False)
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("PATH", os.pathsep.join([entry, str(on_path)]))
    assert find_binary() == str(on_path / "skill-sandbox")


def test_relative_env_is_made_absolute(binary, workdir, monkeypatch):
    # SKILL_SANDBOX_BIN=skill-sandbox names ./skill-sandbox: that file is
    # the one run, not a skill-sandbox that exec would find on PATH.
    os.symlink(binary, workdir / "skill-sandbox")
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("SKILL_SANDBOX_BIN", "skill-sandbox")
    assert find_binary() == str(workdir / "skill-sandbox")


@pytest.mark.parametrize("content", ["{", '{"result_version": 1}', "[]", "\\377"])
def test_unreadable_result_is_an_error(workdir, content):
    # A result file cut short (a full disk) or of another shape is a
    # SkillSandboxError, which the tool adapters turn into an error result.
    fake = workdir / "fake-skill-sandbox"
    fake.write_text("#!/bin/sh\n"
                    "while [ \"$1\" != --result-json ]; do shift; done\n"
                    f"printf '{content}' > \"$2\"\n")
    fake.chmod(0o755)
    with pytest.raises(skill_sandbox.SkillSandboxError, match="unreadable result|wrote no result"):
        skill_sandbox.SkillSandbox(workdir, binary=str(fake)).run_script("x.py")
