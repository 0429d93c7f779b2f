"""SkillSandbox.run_script against the real binary: every field as documented."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import need
from skill_sandbox import SkillSandbox, SkillSandboxError, SkillValidationError, validate_skill

ROOT = Path(__file__).resolve().parents[2]

SUMMARIZE = """\
#!/usr/bin/env python3
import sys
text = " ".join(sys.argv[1:])
print(f"summary of {text}: {len(text)} characters")
"""

# The example, verbatim but for the script's name (summarize_url.py
# fetched a URL; a local script stands in) and the import of sys it used.
EXAMPLE = """\
import sys
from skill_sandbox import SkillSandbox, validate_skill, SkillValidationError
try:
    meta = validate_skill("./my-skill")
except SkillValidationError as exc:
    print(f"Bad skill: {exc.message}")
    raise
sandbox = SkillSandbox(skill_path="./my-skill", timeout=10, memory_mb=256, allow_network=False)
result = sandbox.run_script("summarize_local.py", args=["https://example.com"])
print(f"exit={result.exit_code} duration={result.duration_ms}ms")
print(f"stdout: {result.stdout}")
print(f"timed_out: {result.timed_out}")
print(result.to_jsonl(), file=sys.stderr, flush=True)
"""


def run_example(python: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """Run EXAMPLE with python in cwd (which holds my-skill)."""
    return subprocess.run([python, "-c", EXAMPLE], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def check_example(p: subprocess.CompletedProcess) -> dict:
    """Check the example's output; returns its audit record."""
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("exit=0 duration=") and lines[0].endswith("ms"), p.stdout
    assert lines[1] == "stdout: summary of https://example.com: 19 characters"
    assert lines[3] == "timed_out: False"
    rec = json.loads(p.stderr.strip().splitlines()[-1])
    assert rec["outcome"] == "exited" and rec["exit_code"] == 0 and rec["memory_limit_mb"] == 256
    return rec


def test_example_verbatim(binary, make_skill, workdir):
    make_skill("my-skill", {"summarize_local.py": SUMMARIZE})
    env = dict(os.environ, SKILL_SANDBOX_BIN=binary, PYTHONPATH=str(ROOT / "python"), PYTHONDONTWRITEBYTECODE="1")
    check_example(run_example(sys.executable, workdir, env))


def test_fields(binary, make_skill):
    skill = make_skill("fields", {"echo.py": """\
        import os, sys
        print("args", sys.argv[1:])
        print("stdin", sys.stdin.read())
        print("env", os.environ.get("GREETING"), os.environ.get("SKILL_SANDBOX_REQUEST_ID"))
        sys.stderr.buffer.write(b"bad \\xff byte\\n")
        sys.exit(3)
        """})
    sb = SkillSandbox(skill_path=skill, timeout=20, memory_mb=300, env={"GREETING": "hi"}, binary=binary)
    r = sb.run_script("echo.py", args=["--", "a b"], stdin="in put")
    assert r.exit_code == 3 and r.status == 3 and r.outcome == "exited" and not r.ok
    assert r.stdout.splitlines()[:2] == ["args ['--', 'a b']", "stdin in put"]
    assert r.stdout.splitlines()[2] == f"env hi {r.request_id}" and len(r.request_id) == 32
    assert r.stderr_bytes == b"bad \xff byte\n" and r.stderr == "bad \ufffd byte\n"
    assert r.memory_limit_mb == 300 and r.network_allowed is False and r.timed_out is False
    assert r.duration_ms > 0 and r.record["request_id"] == r.request_id


def test_timeout(binary, make_skill):
    skill = make_skill("slow", {"slow.py": "import time\nprint('start', flush=True)\ntime.sleep(60)\n"})
    r = SkillSandbox(skill_path=skill, timeout=1, binary=binary).run_script("slow.py")
    assert r.timed_out and r.outcome == "timed_out" and r.status == 124, r
    assert r.stdout == "start\n" and r.duration_ms < 30000


def test_memory_limit(binary, make_skill):
    hog = "data = bytearray(400 * 1024 * 1024)\nfor i in range(0, len(data), 4096):\n    data[i] = 1\nprint('allocated')\n"
    skill = make_skill("hog", {"hog.py": hog})
    low = SkillSandbox(skill_path=skill, memory_mb=64, binary=binary).run_script("hog.py")
    if low.ok and low.record["peak_memory_kb"] > 64 * 1024:
        # The cgroup was made and charged but let the run past memory.max
        # (seen in a VM whose kernel does not enforce it).
        need(f"this host's memory cgroup did not enforce 64 MiB (peak {low.record['peak_memory_kb']} KiB)")
    assert low.memory_limit_mb == 64 and not low.ok and "allocated" not in low.stdout, low
    high = SkillSandbox(skill_path=skill, memory_mb=1024, binary=binary).run_script("hog.py")
    assert high.ok and high.stdout == "allocated\n", high


@pytest.fixture
def listener():
    """A TCP server on loopback that answers "hello" to each connection."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(30)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            c.sendall(b"hello")
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1]
    srv.close()


def test_network_refused(binary, make_skill, listener):
    skill = make_skill("net", {"net.py": f"""\
        import socket
        try:
            s = socket.create_connection(("127.0.0.1", {listener}), timeout=5)
            print("got", s.recv(5).decode())
        except OSError as exc:
            print("refused", type(exc).__name__)
        """})
    shut = SkillSandbox(skill_path=skill, binary=binary).run_script("net.py")
    assert shut.ok and shut.stdout.startswith("refused"), shut
    assert shut.network_allowed is False and shut.network["mode"] == "none"
    # The same script reaches the listener when the network is given.
    opened = SkillSandbox(skill_path=skill, allow_network=True, binary=binary).run_script("net.py")
    assert opened.stdout == "got hello\n" and opened.network_allowed is True, opened


def test_to_jsonl_is_one_audit_line(binary, make_skill):
    skill = make_skill("line", {"x.py": "print('<b> & </b>')\n"})
    r = SkillSandbox(skill_path=skill, binary=binary).run_script("x.py", args=["<tag>"])
    line = r.to_jsonl()
    assert "\n" not in line and line.startswith("{") and line.endswith("}")
    rec = json.loads(line)
    assert rec == r.record and rec["args"] == ["<tag>"]
    schema = json.loads((ROOT / "audit" / "schema" / "v7.json").read_text())
    # The run record's definition: every field it requires is there, and
    # so are those of each object field.
    run = schema["$defs"]["run_record"]
    missing = [k for k in run["required"] if k not in rec]
    assert not missing and rec["schema_version"] == "7"
    for key, sub in run["properties"].items():
        for k in sub.get("required", []) if isinstance(sub, dict) and key in rec else []:
            assert k in rec[key], (key, k)


def test_refused_run(binary, make_skill):
    skill = make_skill("refused", {"x.py": "print(1)\n"})
    r = SkillSandbox(skill_path=skill, binary=binary).run_script("missing.py")
    assert r.outcome == "refused" and r.status == 1 and r.error and r.error_kind == "bad_script", r
    with pytest.raises(SkillSandboxError) as exc:
        SkillSandbox(skill_path=skill, extra_flags=["--no-such-flag"], binary=binary).run_script("x.py")
    assert "no-such-flag" in exc.value.message


def test_write_grant_artifacts(binary, make_skill, workdir):
    out = workdir / "out"
    skill = make_skill("writer", {"w.py": f"open({str(out / 'a.txt')!r}, 'w').write('x')\n"})
    r = SkillSandbox(skill_path=skill, write=[out], binary=binary).run_script("w.py")
    assert r.ok, r
    assert [a["path"] for a in r.artifacts] == [str(out / "a.txt")], r.artifacts


def test_validate_skill(binary, make_skill, monkeypatch):
    monkeypatch.setenv("SKILL_SANDBOX_BIN", binary)
    good = make_skill("good-skill", {"x.py": "print(1)\n"})
    meta = validate_skill(good)
    assert meta.name == "good-skill" and meta.valid and meta.files["scripts"] == 1
    bad = make_skill("bad-skill", {"x.py": "print(1)\n"}, frontmatter="name: Bad_Skill\n")
    with pytest.raises(SkillValidationError) as exc:
        validate_skill(bad)
    assert "description" in exc.value.message and exc.value.errors, exc.value.message
    assert str(exc.value) == exc.value.message


FLOOD = """\
import asyncio, resource, sys
from skill_sandbox import SkillSandbox
from skill_sandbox.aio import AsyncSkillSandbox
skill, binary, mode = sys.argv[1:4]
if mode == "aio":
    r = asyncio.run(AsyncSkillSandbox(skill, timeout=60, binary=binary).run_script("flood.py"))
else:
    r = SkillSandbox(skill, timeout=60, binary=binary).run_script("flood.py")
assert r.ok and r.stdout_truncated and len(r.stdout_bytes) == 1 << 20, r
assert r.stderr_truncated and len(r.stderr_bytes) == 1 << 20, r
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.parametrize("mode", ["blocking", "aio"])
def test_flood_does_not_fill_memory(binary, make_skill, mode):
    # A hostile script writes 320 MiB to each stream; the binary streams
    # them on as well as keeping output_cap of each in the result file.
    # The caller's process must not hold what is streamed.
    skill = make_skill("flood", {"flood.py": """\
        import os
        b = b"A" * (1 << 20)
        for _ in range(320):
            os.write(1, b)
            os.write(2, b)
        """})
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-c", FLOOD, str(skill), binary, mode],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    max_rss_mib = int(p.stdout.split()[-1]) / 1024
    assert max_rss_mib < 150, f"the caller held {max_rss_mib:.0f} MiB"


def test_skill_with_warnings(binary, make_skill):
    # The record's validation warnings are strings: a skill that runs with
    # one (here an unknown frontmatter key) must still give a result.
    skill = make_skill("warned", {"hi.py": "print('hi')\n"},
                       frontmatter="name: warned\ndescription: A skill with a warning.\nbogus-key: 1\n")
    r = SkillSandbox(skill, binary=binary).run_script("hi.py")
    assert r.ok and r.stdout == "hi\n"
    assert any("bogus-key" in w for w in r.warnings), r.warnings


@pytest.mark.parametrize("mode", ["blocking", "aio"])
def test_temp_folder_granted(binary, make_skill, workdir, monkeypatch, mode):
    # A write grant on the temp folder (write=["/tmp"]) used to refuse
    # every run: the result file went to the temp folder, which the
    # binary refuses inside a write grant. It now goes elsewhere.
    scratch, cache = workdir / "scratch", workdir / "cache"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    skill = make_skill("scratcher", {"w.py": f"open({str(scratch / 'a.txt')!r}, 'w').write('x')\n"})
    sb = SkillSandbox(skill_path=skill, write=[scratch], binary=binary)
    if mode == "aio":
        from skill_sandbox.aio import AsyncSkillSandbox
        sb = AsyncSkillSandbox(skill_path=skill, write=[scratch], binary=binary)
        r = asyncio.run(sb.run_script("w.py"))
    else:
        r = sb.run_script("w.py")
    assert r.ok, r
    assert sorted(p.name for p in scratch.iterdir()) == ["a.txt"]
    assert (cache / "skill-sandbox" / "py").is_dir()
    assert list((cache / "skill-sandbox" / "py").iterdir()) == []
