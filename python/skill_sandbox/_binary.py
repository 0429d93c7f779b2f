"""Finding the skill-sandbox binary: the wheel's, $SKILL_SANDBOX_BIN, PATH."""

from __future__ import annotations

import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Optional

from ._errors import BinaryNotFoundError

#: The environment variable naming a skill-sandbox binary to use.
ENV_VAR = "SKILL_SANDBOX_BIN"

_NAME = "skill-sandbox"


def bundled_binary() -> Optional[Path]:
    """Return the binary shipped inside this package (a platform wheel), or None."""
    p = Path(__file__).resolve().parent / "bin" / _NAME
    if p.is_file() and os.access(p, os.X_OK):
        return p
    return None


def find_binary() -> str:
    """Return the path of the skill-sandbox binary to run.

    The order is: the binary inside the installed wheel, then the file named
    by ``$SKILL_SANDBOX_BIN``, then ``skill-sandbox`` on ``PATH``. A
    ``$SKILL_SANDBOX_BIN`` that names no executable file is an error, not
    skipped. Raises :class:`BinaryNotFoundError` when none fits.
    """
    b = bundled_binary()
    if b is not None:
        return str(b)
    env = os.environ.get(ENV_VAR)
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            # Absolute: the file checked is the one run (a name without a
            # slash would be looked up on PATH by exec), whatever folder
            # the caller changes to later.
            return os.path.abspath(env)
        raise BinaryNotFoundError(f"${ENV_VAR} is {env!r}, which is not an executable file")
    # Only absolute folders of PATH: an empty entry or "." is the current
    # folder, which may be a skill's (an agent often works in one), and a
    # skill-sandbox planted there must not be the one that runs.
    dirs = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d)]
    found = shutil.which(_NAME, path=os.pathsep.join(dirs)) if dirs else None
    if found:
        return found
    raise BinaryNotFoundError(
        f"no skill-sandbox binary for {sys.platform}/{platform.machine()}: "
        f"this installation carries none (a pure-Python sdist, or no wheel for this platform), "
        f"${ENV_VAR} is not set and {_NAME} is not on PATH; install a platform wheel "
        f"(Linux x86_64 or aarch64) or the binary (docs/install.md), or set ${ENV_VAR}"
    )
