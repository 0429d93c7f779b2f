"""Command lines for the skill-sandbox binary and the reading of its JSON.

Shared by the blocking API (_core) and the asyncio one (aio): each call is
an argv plus a function that turns (exit status, stdout, stderr) into the
answer. Only JSON interfaces are read: run --result-json, validate --json,
scan --json, list --json, and the MCP server's list_skills.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._errors import SkillSandboxError, SkillValidationError

PathLike = Union[str, "os.PathLike[str]"]

#: Exit status of a usage error of skill-sandbox.
EXIT_USAGE = 2


@dataclass(frozen=True)
class ValidationResult:
    """A valid skill as ``skill-sandbox validate --json`` describes it.

    Attributes:
        name: the skill's name from SKILL.md.
        path: the folder as given.
        valid: always True here (an invalid skill raises).
        warnings: the validator's warnings (dicts with ``file`` and ``message``).
        files: counts of ``scripts``, ``references`` and ``assets``.
        result: the whole JSON result.
    """

    name: str
    path: str
    valid: bool
    warnings: List[Dict[str, Any]]
    files: Dict[str, int]
    result: Dict[str, Any]


@dataclass(frozen=True)
class VerifyResult:
    """The outcome of ``skill-sandbox verify``.

    ``verified`` is True for a good signature from an allowed signer;
    ``message`` is the binary's one-line answer (text for people: the
    verify command has no JSON form yet).
    """

    verified: bool
    message: str


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def _fail(what: str, status: int, stderr: bytes) -> SkillSandboxError:
    err = _text(stderr).strip()
    return SkillSandboxError(f"skill-sandbox {what} failed with exit status {status}: {err}", err)


def validate_argv(path: PathLike, strict: bool) -> List[str]:
    """argv (after the binary) of validate_skill."""
    argv = ["validate", "--json"]
    if strict:
        argv.append("--strict")
    return argv + ["--", os.fspath(path)]


def validate_answer(status: int, stdout: bytes, stderr: bytes) -> ValidationResult:
    """Read validate --json's answer; raises SkillValidationError when invalid."""
    if status not in (0, 1):
        raise _fail("validate", status, stderr)
    try:
        res = json.loads(stdout.splitlines()[0])
    except (ValueError, IndexError):
        raise _fail("validate", status, stderr) from None
    errors = res.get("errors") or []
    warnings = res.get("warnings") or []
    if status != 0 or not res.get("valid"):
        probs = errors or warnings  # --strict: warnings make it invalid
        msg = "; ".join(
            (f"{p['file']}: " if p.get("file") else "") + p.get("message", "") for p in probs
        ) or "invalid skill"
        raise SkillValidationError(msg, errors, warnings, res)
    return ValidationResult(
        name=str(res.get("name", "")), path=str(res.get("path", "")), valid=True,
        warnings=warnings, files=dict(res.get("files") or {}), result=res,
    )


def scan_argv(path: PathLike) -> List[str]:
    """argv of scan_skill."""
    return ["scan", "--json", "--", os.fspath(path)]


def scan_answer(status: int, stdout: bytes, stderr: bytes) -> Dict[str, Any]:
    """Read scan --json's object (path, findings, files)."""
    try:
        return dict(json.loads(stdout.splitlines()[0]))
    except (ValueError, IndexError):
        raise _fail("scan", status, stderr) from None


def list_argv(path: PathLike, all_files: bool) -> List[str]:
    """argv of list_scripts."""
    argv = ["list", "--json"]
    if all_files:
        argv.append("--all")
    return argv + ["--", os.fspath(path)]


def list_answer(status: int, stdout: bytes, stderr: bytes) -> List[Dict[str, Any]]:
    """Read list --json's array; a skill run refuses raises SkillValidationError."""
    if status == 1:
        err = _text(stderr).strip()
        raise SkillValidationError(err or "skill-sandbox list refused the skill")
    if status != 0:
        raise _fail("list", status, stderr)
    return list(json.loads(stdout))


def verify_argv(path: PathLike, allowed_signers: PathLike, principal: Optional[str],
                signature: Optional[PathLike]) -> List[str]:
    """argv of verify_skill."""
    argv = ["verify", "--allowed-signers", os.fspath(allowed_signers)]
    if principal:
        argv += ["--principal", principal]
    if signature:
        argv += ["--signature", os.fspath(signature)]
    return argv + ["--", os.fspath(path)]


def verify_answer(status: int, stdout: bytes, stderr: bytes) -> VerifyResult:
    """Read verify's exit status (0 good, 1 not verified)."""
    if status not in (0, 1):
        raise _fail("verify", status, stderr)
    return VerifyResult(verified=status == 0, message=_text(stdout if status == 0 else stderr).strip())


@dataclass(frozen=True)
class RunOptions:
    """What a run is given: limits, grants, network, environment."""

    timeout: float
    memory_mb: int
    allow_network: bool
    allow_hosts: Sequence[str]
    deny_hosts: Sequence[str]
    read: Sequence[PathLike]
    write: Sequence[PathLike]
    cwd: Optional[PathLike]
    policy: Optional[PathLike]
    env: Mapping[str, str]
    require_signature: Optional[PathLike]
    output_cap: Optional[int]
    extra_flags: Sequence[str]


def _seconds(t: float) -> str:
    if t <= 0:
        raise ValueError(f"timeout must be positive, got {t}")
    return f"{int(t)}s" if float(t).is_integer() else f"{t}s"


def run_argv(skill_path: PathLike, o: RunOptions, script: str, args: Sequence[str],
             module: bool, result_file: str) -> List[str]:
    """argv of a run writing its result to result_file."""
    argv = ["run", "--quiet", "--result-json", result_file,
            "--timeout", _seconds(o.timeout), "--memory", str(int(o.memory_mb))]
    if o.allow_network:
        argv.append("--allow-network")
    for h in o.allow_hosts:
        argv += ["--allow-host", h]
    for h in o.deny_hosts:
        argv += ["--deny-host", h]
    for p in o.read:
        argv += ["--read", os.fspath(p)]
    for p in o.write:
        argv += ["--write", os.fspath(p)]
    if o.cwd is not None:
        argv += ["--cwd", os.fspath(o.cwd)]
    if o.policy is not None:
        argv += ["--policy", os.fspath(o.policy)]
    for k, v in o.env.items():
        argv += ["--env", f"{k}={v}"]
    if o.require_signature is not None:
        argv += ["--require-signature", "--allowed-signers", os.fspath(o.require_signature)]
    if o.output_cap is not None:
        argv += ["--output-cap", str(int(o.output_cap))]
    if module:
        argv.append("--module")
    argv += list(o.extra_flags)
    # The "--" after SCRIPT is dropped by run: an argument "--" of the
    # caller's then reaches the script.
    return argv + ["--", os.fspath(skill_path), script, "--"] + [str(a) for a in args]


def stdin_bytes(stdin: Union[None, str, bytes]) -> Optional[bytes]:
    """The bytes a run reads on stdin (None: /dev/null)."""
    if stdin is None:
        return None
    return stdin.encode("utf-8") if isinstance(stdin, str) else bytes(stdin)


def mcp_list_input(dirs: Sequence[PathLike]) -> "tuple[List[str], bytes]":
    """argv and stdin of an MCP session that calls list_skills on dirs."""
    argv = ["mcp"]
    for d in dirs:
        argv += ["--skills", os.fspath(d)]
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "skill_sandbox.py", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "list_skills", "arguments": {}}},
    ]
    return argv, "".join(json.dumps(m) + "\n" for m in msgs).encode()


def mcp_list_answer(status: int, stdout: bytes, stderr: bytes) -> List[Dict[str, Any]]:
    """The skills (name, description, path) of the list_skills call."""
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("id") == 2:
            if "error" in msg:
                raise SkillSandboxError(f"list_skills: {msg['error'].get('message', '')}")
            return list(msg["result"]["structuredContent"]["skills"])
    raise _fail("mcp", status, stderr)
