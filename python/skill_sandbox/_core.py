"""The blocking API: SkillSandbox and the skill functions."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _cli
from ._binary import find_binary
from ._cli import PathLike, RunOptions, ValidationResult, VerifyResult
from ._errors import SkillSandboxError
from ._result import RunResult, parse_result

#: The defaults of skill-sandbox run: 30 s, 512 MiB.
DEFAULT_TIMEOUT = 30.0
DEFAULT_MEMORY_MB = 512

# Python waits this much longer than the run's own time limit before it
# gives up on the binary (which kills the script itself at the limit).
_GRACE = 60.0


def _call(binary: Optional[str], argv: List[str], stdin: Optional[bytes] = None,
          timeout: Optional[float] = None) -> "subprocess.CompletedProcess[bytes]":
    exe = binary or find_binary()
    try:
        return subprocess.run([exe] + argv, input=stdin, capture_output=True,
                              stdin=None if stdin is not None else subprocess.DEVNULL,
                              timeout=timeout, check=False)
    except OSError as exc:
        raise SkillSandboxError(f"cannot start {exe}: {exc}") from exc


# What a run keeps of the binary's stderr: its last bytes (the binary's own
# error comes after the script's stderr, which it streams there too). The
# binary's stdout, the script's streamed, is not read at all: the result
# file holds both streams up to output_cap. A script writing without end
# must not fill this process's memory.
STDERR_KEEP = 64 << 10


class _Tail:
    """The last STDERR_KEEP bytes of what is added."""

    def __init__(self) -> None:
        self._b = bytearray()

    def add(self, chunk: bytes) -> None:
        self._b += chunk
        if len(self._b) > 2 * STDERR_KEEP:
            del self._b[:-STDERR_KEEP]

    def bytes(self) -> bytes:
        return bytes(self._b[-STDERR_KEEP:])


def _call_run(exe: str, argv: List[str], stdin: Optional[bytes],
              timeout: float) -> Tuple[int, bytes]:
    """Run a run call: its exit status and the end of its stderr (see STDERR_KEEP)."""
    try:
        p = subprocess.Popen([exe] + argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as exc:
        raise SkillSandboxError(f"cannot start {exe}: {exc}") from exc
    tail = _Tail()

    def feed() -> None:
        assert p.stdin is not None
        try:
            p.stdin.write(stdin or b"")
        except (BrokenPipeError, OSError):
            pass  # the script did not read it all
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass

    def drain() -> None:
        assert p.stderr is not None
        fd = p.stderr.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            tail.add(chunk)

    threads = [threading.Thread(target=drain, daemon=True)]
    if stdin is not None:
        threads.append(threading.Thread(target=feed, daemon=True))
    for t in threads:
        t.start()
    try:
        status = p.wait(timeout=timeout)
    except BaseException:
        # Past the grace time, or interrupted: as subprocess.run does (the
        # binary's death ends its sandbox).
        p.kill()
        p.wait()
        raise
    finally:
        for t in threads:
            t.join(timeout=10)
        if p.stderr is not None:
            p.stderr.close()
    return status, tail.bytes()


def validate_skill(path: PathLike, *, strict: bool = False,
                   binary: Optional[str] = None) -> ValidationResult:
    """Validate the skill folder at ``path``.

    Returns a :class:`ValidationResult` for a valid skill (warnings
    included); raises :class:`SkillValidationError` (``.message``,
    ``.errors``) for an invalid one. ``strict`` makes warnings errors.
    """
    p = _call(binary, _cli.validate_argv(path, strict))
    return _cli.validate_answer(p.returncode, p.stdout, p.stderr)


def scan_skill(path: PathLike, *, binary: Optional[str] = None) -> Dict[str, Any]:
    """Scan the skill folder for risky patterns; returns ``scan --json``'s object.

    Its ``findings`` list each finding's ``file``, ``line``, ``rule``,
    ``severity`` and ``message`` (docs/scan.md).
    """
    p = _call(binary, _cli.scan_argv(path))
    return _cli.scan_answer(p.returncode, p.stdout, p.stderr)


def list_scripts(path: PathLike, *, all_files: bool = False,
                 binary: Optional[str] = None) -> List[Dict[str, Any]]:
    """List the skill's scripts (``path``, ``kind``, ``interpreter``, ``size``).

    ``all_files`` also lists references, assets and other files. A skill
    that run would refuse raises :class:`SkillValidationError`.
    """
    p = _call(binary, _cli.list_argv(path, all_files))
    return _cli.list_answer(p.returncode, p.stdout, p.stderr)


def verify_skill(path: PathLike, allowed_signers: PathLike, *, principal: Optional[str] = None,
                 signature: Optional[PathLike] = None,
                 binary: Optional[str] = None) -> VerifyResult:
    """Check the skill's SSH signature (SKILL.sig) against an allowed_signers file."""
    p = _call(binary, _cli.verify_argv(path, allowed_signers, principal, signature))
    return _cli.verify_answer(p.returncode, p.stdout, p.stderr)


def find_skills(*dirs: PathLike, binary: Optional[str] = None) -> List[Dict[str, Any]]:
    """The skills in each folder (a skill, or a folder of skills): name, description, path.

    Read from the MCP server's ``list_skills`` tool, the same list an MCP
    client gets.
    """
    argv, stdin = _cli.mcp_list_input(dirs)
    p = _call(binary, argv, stdin, timeout=120)
    return _cli.mcp_list_answer(p.returncode, p.stdout, p.stderr)


class SkillSandbox:
    """Runs the scripts of one skill in the sandbox.

    Args:
        skill_path: the skill folder (holding SKILL.md and scripts/).
        timeout: wall-time limit of each run in seconds.
        memory_mb: memory limit in MiB.
        allow_network: give the script the host's whole network; prefer
            ``allow_hosts``.
        allow_hosts: host patterns the script may reach through the
            filtering proxy (``api.example.com``, ``*.example.com``).
        deny_hosts: patterns never reachable, even if allowed.
        read: files or folders the script may read.
        write: folders the script may write (created if missing).
        cwd: the folder to run in, inside a read or write grant.
        policy: a policy file (docs/policy.md).
        env: variables added to the script's environment.
        require_signature: an OpenSSH allowed_signers file: refuse to run
            unless the skill's SKILL.sig is a good signature from it.
        output_cap: bytes of stdout and of stderr kept (default 1 MiB).
        extra_flags: more flags of ``skill-sandbox run``, as given.
        binary: the skill-sandbox binary (default: :func:`find_binary`).
    """

    def __init__(self, skill_path: PathLike, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, allow_network: bool = False, *,
                 allow_hosts: Sequence[str] = (), deny_hosts: Sequence[str] = (),
                 read: Sequence[PathLike] = (), write: Sequence[PathLike] = (),
                 cwd: Optional[PathLike] = None, policy: Optional[PathLike] = None,
                 env: Optional[Mapping[str, str]] = None,
                 require_signature: Optional[PathLike] = None,
                 output_cap: Optional[int] = None, extra_flags: Sequence[str] = (),
                 binary: Optional[str] = None) -> None:
        self.skill_path = os.fspath(skill_path)
        self.binary = binary
        self.options = RunOptions(
            timeout=float(timeout), memory_mb=int(memory_mb), allow_network=bool(allow_network),
            allow_hosts=tuple(allow_hosts), deny_hosts=tuple(deny_hosts),
            read=tuple(read), write=tuple(write), cwd=cwd, policy=policy,
            env=dict(env or {}), require_signature=require_signature,
            output_cap=output_cap, extra_flags=tuple(extra_flags))

    def _options(self, env: Optional[Mapping[str, str]]) -> RunOptions:
        if not env:
            return self.options
        merged = dict(self.options.env)
        merged.update(env)
        o = self.options
        return RunOptions(o.timeout, o.memory_mb, o.allow_network, o.allow_hosts, o.deny_hosts,
                          o.read, o.write, o.cwd, o.policy, merged, o.require_signature,
                          o.output_cap, o.extra_flags)

    def run_script(self, name: str, args: Sequence[str] = (), *,
                   stdin: Union[None, str, bytes] = None,
                   env: Optional[Mapping[str, str]] = None,
                   module: bool = False) -> RunResult:
        """Run script ``name`` of the skill with ``args``; returns a :class:`RunResult`.

        ``name`` is a file of scripts/ (``"stats.py"``) or a path in the
        skill (``"scripts/stats.py"``); with ``module`` a Python module
        of the skill run as ``python3 -m scripts.NAME``. ``stdin`` (str or
        bytes) is the script's standard input (default: empty). ``env``
        adds to the sandbox's environment for this run.

        A refused run (invalid skill, missing script, policy) is returned
        with ``outcome == "refused"`` and ``error`` set, as the audit
        record has it; a usage error raises :class:`SkillSandboxError`.
        """
        o = self._options(env)
        exe = self.binary or find_binary()
        with tempfile.TemporaryDirectory(prefix="skill-sandbox-py-", dir=_result_parent(o.write)) as tmp:
            result_file = os.path.join(tmp, "result.json")
            argv = _cli.run_argv(self.skill_path, o, name, args, module, result_file)
            status, err = _call_run(exe, argv, _cli.stdin_bytes(stdin), o.timeout + _GRACE)
            return _read_result(result_file, status, err)

    def list_scripts(self, *, all_files: bool = False) -> List[Dict[str, Any]]:
        """The skill's scripts; see :func:`list_scripts`."""
        return list_scripts(self.skill_path, all_files=all_files, binary=self.binary)

    def validate(self, *, strict: bool = False) -> ValidationResult:
        """Validate the skill; see :func:`validate_skill`."""
        return validate_skill(self.skill_path, strict=strict, binary=self.binary)


def _inside(path: str, folders: Sequence[PathLike]) -> bool:
    """Whether path is one of folders or lies under one (links resolved)."""
    p = os.path.realpath(path)
    for f in folders:
        g = os.path.realpath(os.fspath(f))
        if p == g or p.startswith(g.rstrip(os.sep) + os.sep):
            return True
    return False


def _result_parent(write: Sequence[PathLike]) -> Optional[str]:
    """The folder for the run's result file: the temp folder unless a write
    grant holds it (the binary refuses a result file there, where the script
    could plant a link), then $XDG_RUNTIME_DIR, then a private folder in the
    user's cache. None means tempfile's default, and the binary's refusal."""
    tmp = tempfile.gettempdir()
    if not _inside(tmp, write):
        return None
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime) and not _inside(runtime, write):
        return runtime
    cache = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(cache):
        cache = os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(cache, "skill-sandbox", "py")
    if _inside(folder, write):
        return None
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _read_result(result_file: str, status: int, stderr: bytes) -> RunResult:
    err = stderr.decode("utf-8", "replace").strip()
    try:
        with open(result_file, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        raise SkillSandboxError(f"skill-sandbox run wrote no result (exit status {status}): {err}", err) from None
    try:
        res = parse_result(text, status)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        # A file cut short (a full disk) or not this version's: an error
        # of the call, which the tool adapters report, not a crash.
        raise SkillSandboxError(f"skill-sandbox run wrote an unreadable result (exit status {status}): {exc}",
                                err) from None
    if status == _cli.EXIT_USAGE and res.error_kind == "usage":
        raise SkillSandboxError(res.error or err, err)
    return res
