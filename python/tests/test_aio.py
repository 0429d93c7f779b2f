"""The asyncio variant: runs awaited, several at once."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from skill_sandbox import SkillValidationError
from skill_sandbox import aio


def test_async_runs(binary, make_skill):
    skill = make_skill("async-skill", {"n.py": "import sys\nprint(int(sys.argv[1]) * 2)\n",
                                       "slow.py": "import time\ntime.sleep(60)\n"})

    async def main():
        sb = aio.AsyncSkillSandbox(skill_path=skill, timeout=20, binary=binary)
        results = await asyncio.gather(*(sb.run_script("n.py", args=[str(i)]) for i in range(3)))
        slow = await aio.AsyncSkillSandbox(skill_path=skill, timeout=1, binary=binary).run_script("slow.py")
        scripts = await sb.list_scripts()
        meta = await aio.validate_skill(skill, binary=binary)
        return results, slow, scripts, meta

    results, slow, scripts, meta = asyncio.run(main())
    assert [r.stdout for r in results] == ["0\n", "2\n", "4\n"]
    assert len({r.request_id for r in results}) == 3
    assert slow.timed_out and slow.outcome == "timed_out"
    assert [s["path"] for s in scripts] == ["scripts/n.py", "scripts/slow.py"]
    assert meta.name == "async-skill"


def test_async_validation_error(binary, make_skill):
    bad = make_skill("bad-async", {"x.py": ""}, frontmatter="name: bad-async\n")
    with pytest.raises(SkillValidationError) as exc:
        asyncio.run(aio.validate_skill(bad, binary=binary))
    assert "description" in exc.value.message


def _cmdlines_with(token: str) -> list:
    """Command lines of the host's processes that hold token."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if token.encode() in cmd:
            found.append(cmd)
    return found


def test_cancel_stops_the_run(binary, make_skill, workdir):
    out = workdir / "out"
    skill = make_skill("cancel-me", {"wait.py": f"""\
        import sys, time
        open({str(out / 'started')!r}, 'w').close()
        time.sleep(120)
        """})
    token = uuid.uuid4().hex

    async def main():
        sb = aio.AsyncSkillSandbox(skill_path=skill, timeout=300, write=[out], binary=binary)
        task = asyncio.ensure_future(sb.run_script("wait.py", args=[token]))
        # Wait for the script to run (a bound to give up, not a measure).
        for _ in range(1200):
            if (out / "started").exists() or task.done():
                break
            await asyncio.sleep(0.05)
        assert not task.done(), task.result()
        assert _cmdlines_with(token), "the script is not running"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    # The binary has exited, and stopped the script before that.
    assert _cmdlines_with(token) == []
