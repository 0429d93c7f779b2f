"""The asyncio API: the same calls as the blocking one, awaited.

    from skill_sandbox.aio import AsyncSkillSandbox
    result = await AsyncSkillSandbox(skill_path="./my-skill").run_script("stats.py")

Each call runs the binary with asyncio's subprocess support; many runs may
be awaited at once (asyncio.gather). Cancelling a call kills its binary,
which stops the run and tears its sandbox down.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _cli
from ._binary import find_binary
from ._cli import PathLike, ValidationResult, VerifyResult
from ._core import _GRACE, SkillSandbox, _read_result, _result_parent, _Tail
from ._errors import SkillSandboxError
from ._result import RunResult


async def _call(binary: Optional[str], argv: List[str], stdin: Optional[bytes] = None,
                timeout: Optional[float] = None) -> Tuple[int, bytes, bytes]:
    exe = binary or find_binary()
    try:
        proc = await asyncio.create_subprocess_exec(
            exe, *argv,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        raise SkillSandboxError(f"cannot start {exe}: {exc}") from exc
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
    except BaseException:
        # Cancelled or past the grace time: SIGTERM makes the binary stop
        # the run and remove its sandbox before it exits.
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out, err


async def _call_run(exe: str, argv: List[str], stdin: Optional[bytes],
                    timeout: float) -> Tuple[int, bytes]:
    """Run a run call: its exit status and the end of its stderr. Its
    stdout is not read and only the end of stderr kept (see
    skill_sandbox._core.STDERR_KEEP): a script writing without end must not
    fill this process's memory."""
    try:
        proc = await asyncio.create_subprocess_exec(
            exe, *argv,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        raise SkillSandboxError(f"cannot start {exe}: {exc}") from exc
    tail = _Tail()

    async def feed() -> None:
        if stdin is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the script did not read it all
        finally:
            proc.stdin.close()

    async def drain() -> None:
        assert proc.stderr is not None
        while True:
            chunk = await proc.stderr.read(65536)
            if not chunk:
                return
            tail.add(chunk)

    async def whole() -> int:
        await asyncio.gather(feed(), drain())
        return await proc.wait()

    try:
        status = await asyncio.wait_for(whole(), timeout)
    except BaseException:
        # As _call: SIGTERM makes the binary stop the run and remove its sandbox.
        if proc.returncode is None:
            proc.terminate()
            await proc.wait()
        raise
    return status, tail.bytes()


async def validate_skill(path: PathLike, *, strict: bool = False,
                         binary: Optional[str] = None) -> ValidationResult:
    """Awaitable :func:`skill_sandbox.validate_skill`."""
    return _cli.validate_answer(*await _call(binary, _cli.validate_argv(path, strict)))


async def scan_skill(path: PathLike, *, binary: Optional[str] = None) -> Dict[str, Any]:
    """Awaitable :func:`skill_sandbox.scan_skill`."""
    return _cli.scan_answer(*await _call(binary, _cli.scan_argv(path)))


async def list_scripts(path: PathLike, *, all_files: bool = False,
                       binary: Optional[str] = None) -> List[Dict[str, Any]]:
    """Awaitable :func:`skill_sandbox.list_scripts`."""
    return _cli.list_answer(*await _call(binary, _cli.list_argv(path, all_files)))


async def verify_skill(path: PathLike, allowed_signers: PathLike, *, principal: Optional[str] = None,
                       signature: Optional[PathLike] = None,
                       binary: Optional[str] = None) -> VerifyResult:
    """Awaitable :func:`skill_sandbox.verify_skill`."""
    argv = _cli.verify_argv(path, allowed_signers, principal, signature)
    return _cli.verify_answer(*await _call(binary, argv))


class AsyncSkillSandbox(SkillSandbox):
    """:class:`skill_sandbox.SkillSandbox` whose calls are awaited.

    Takes the same arguments; ``run_script``, ``list_scripts`` and
    ``validate`` are coroutines.
    """

    async def run_script(self, name: str, args: Sequence[str] = (), *,  # type: ignore[override]
                         stdin: Union[None, str, bytes] = None,
                         env: Optional[Mapping[str, str]] = None,
                         module: bool = False) -> RunResult:
        """Awaitable :meth:`skill_sandbox.SkillSandbox.run_script`."""
        o = self._options(env)
        exe = self.binary or find_binary()
        with tempfile.TemporaryDirectory(prefix="skill-sandbox-py-", dir=_result_parent(o.write)) as tmp:
            result_file = os.path.join(tmp, "result.json")
            argv = _cli.run_argv(self.skill_path, o, name, args, module, result_file)
            status, err = await _call_run(exe, argv, _cli.stdin_bytes(stdin), o.timeout + _GRACE)
            return _read_result(result_file, status, err)

    async def list_scripts(self, *, all_files: bool = False) -> List[Dict[str, Any]]:  # type: ignore[override]
        """Awaitable :meth:`skill_sandbox.SkillSandbox.list_scripts`."""
        return await list_scripts(self.skill_path, all_files=all_files, binary=self.binary)

    async def validate(self, *, strict: bool = False) -> ValidationResult:  # type: ignore[override]
        """Awaitable :meth:`skill_sandbox.SkillSandbox.validate`."""
        return await validate_skill(self.skill_path, strict=strict, binary=self.binary)
