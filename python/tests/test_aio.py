"""The asyncio variant: runs awaited, several at once."""

from __future__ import annotations

import asyncio

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
