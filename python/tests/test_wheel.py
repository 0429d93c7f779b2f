"""The platform wheel of make dist, installed with pip into a fresh venv."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import need
from test_run import SUMMARIZE, check_example, run_example

ROOT = Path(__file__).resolve().parents[2]


def dist_command():
    """The dist tool: $SKILL_SANDBOX_DIST (make test builds it), else go run."""
    d = os.environ.get("SKILL_SANDBOX_DIST")
    if d:
        return [d]
    if shutil.which("go"):
        return ["go", "run", "./scripts/dist"]
    need("neither SKILL_SANDBOX_DIST nor go to build the wheel")


def test_wheel_in_fresh_venv(binary, make_skill, workdir):
    out = workdir / "dist"
    p = subprocess.run(dist_command() + ["-out", str(out), "-version", "v1.2.3-4-g757357a",
                                         "-epoch", "1796601600", "-python-only", binary],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    wheels = sorted(out.glob("*.whl"))
    assert [w.name.split("-py3-")[0] for w in wheels] == ["skill_sandbox-1.2.3+4.g757357a"], wheels
    assert (out / "skill_sandbox-1.2.3+4.g757357a.tar.gz").is_file()

    venv = workdir / "venv"
    p = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "ensurepip" in p.stdout + p.stderr:
        need("python3 -m venv has no ensurepip (Debian: apt-get install python3-venv)")
    assert p.returncode == 0, p.stdout + p.stderr
    py = str(venv / "bin" / "python")
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", str(workdir)),
           "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    p = subprocess.run([py, "-m", "pip", "install", "--no-index", str(wheels[0])],
                       env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr

    # The wheel's binary comes first, whatever the environment names.
    env["SKILL_SANDBOX_BIN"] = "/nonexistent/skill-sandbox"
    p = subprocess.run([py, "-c", "import skill_sandbox as s; print(s.__version__); print(s.find_binary())"],
                       env=env, capture_output=True, text=True, timeout=60, cwd=workdir)
    version, found = p.stdout.split()
    assert version == "1.2.3+4.g757357a"
    assert found.startswith(str(venv)) and found.endswith("skill_sandbox/bin/skill-sandbox"), p
    assert os.access(found, os.X_OK)

    make_skill("my-skill", {"summarize_local.py": SUMMARIZE})
    check_example(run_example(py, workdir, env))
