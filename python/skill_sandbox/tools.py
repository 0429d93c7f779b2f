"""Skills as tools for function-calling agents, with no SDK imported.

    from skill_sandbox.tools import SkillTools
    tools = SkillTools("./skills", timeout=30)
    openai_tools = tools.openai_schemas()        # tools=... of chat.completions / responses
    anthropic_tools = tools.anthropic_schemas()  # tools=... of messages.create
    ...
    for call in message.tool_calls:              # OpenAI
        messages.append(tools.openai_tool_message(call))
    for block in response.content:               # Anthropic
        if block.type == "tool_use":
            results.append(tools.anthropic_tool_result(block))

Each skill becomes one tool, named after the skill, described by its
SKILL.md description, taking ``script`` (one of its scripts), ``args`` and
``stdin``. A call runs the script in the sandbox with the limits given
here; the model chooses only the script and its arguments.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Mapping, Optional

from ._cli import PathLike
from ._core import SkillSandbox, find_skills, list_scripts
from ._errors import SkillSandboxError
from ._result import RunResult

# Function names the OpenAI and Anthropic APIs accept.
_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# Characters of a SKILL.md description a tool's description keeps: the
# specification's limit. run accepts longer ones (a warning), but a skill's
# author must not put unbounded text into every request sent to the model.
MAX_DESCRIPTION = 1024


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """obj[key] for dicts, obj.key for SDK objects."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _encodable(s: str, arg: bool) -> bool:
    """s can be an argument (as subprocess encodes it) or stdin (UTF-8)."""
    try:
        if arg:
            os.fsencode(s)
        else:
            s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class SkillTools:
    """The skills in one or more folders as tools, and their dispatcher.

    Args:
        *dirs: folders holding skills (or skill folders themselves).
        binary: the skill-sandbox binary (default: found as usual).
        **sandbox: arguments of :class:`skill_sandbox.SkillSandbox` for
            every run (``timeout``, ``memory_mb``, ``allow_hosts``, ...).
    """

    def __init__(self, *dirs: PathLike, binary: Optional[str] = None, **sandbox: Any) -> None:
        self.binary = binary
        self._sandbox = sandbox
        self.skills: Dict[str, Dict[str, Any]] = {}
        for s in find_skills(*dirs, binary=binary):
            name = s["name"]
            if not _NAME_RE.match(name) or name in self.skills:
                continue  # not a function name the APIs take, or a duplicate
            scripts = [e["path"] for e in list_scripts(s["path"], binary=binary)
                       if e.get("kind") == "script"]
            if scripts:
                self.skills[name] = {"description": s.get("description", ""),
                                     "path": s["path"], "scripts": scripts}

    def _scripts(self, name: str) -> List[str]:
        # scripts/x.py is offered as "x.py", as run takes it.
        return [os.path.basename(p) if p.count("/") == 1 else p for p in self.skills[name]["scripts"]]

    def _schema(self, name: str) -> Dict[str, Any]:
        names = self._scripts(name)
        return {
            "type": "object",
            "properties": {
                "script": {"type": "string", "enum": names,
                           "description": "the script of the skill to run"},
                "args": {"type": "array", "items": {"type": "string"},
                         "description": "command-line arguments of the script"},
                "stdin": {"type": "string", "description": "text for the script's standard input"},
            },
            "required": ["script"],
            "additionalProperties": False,
        }

    def _description(self, name: str) -> str:
        d = self.skills[name]["description"].strip()
        if len(d) > MAX_DESCRIPTION:
            d = d[:MAX_DESCRIPTION - 1].rstrip() + "\u2026"
        return d + " (Runs a script of the skill in a sandbox.)"

    def openai_schemas(self) -> List[Dict[str, Any]]:
        """Tools in the OpenAI function-calling shape (``{"type": "function", "function": ...}``)."""
        return [{"type": "function",
                 "function": {"name": n, "description": self._description(n),
                              "parameters": self._schema(n)}} for n in self.skills]

    def anthropic_schemas(self) -> List[Dict[str, Any]]:
        """Tools in the Anthropic Messages shape (``name``, ``description``, ``input_schema``)."""
        return [{"name": n, "description": self._description(n), "input_schema": self._schema(n)}
                for n in self.skills]

    def run(self, name: str, arguments: Mapping[str, Any]) -> RunResult:
        """Run the tool ``name`` with its decoded ``arguments``."""
        if name not in self.skills:
            raise SkillSandboxError(f"unknown tool {name!r}")
        s = self.skills[name]
        script = arguments.get("script")
        if not isinstance(script, str) or script not in self._scripts(name):
            raise SkillSandboxError(f"tool {name}: 'script' must be one of {self._scripts(name)}")
        args = arguments.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise SkillSandboxError(f"tool {name}: 'args' must be a list of strings")
        # A NUL or a lone surrogate (JSON \u0000, \ud800) cannot be passed
        # on: refused here as a bad call, not raised as ValueError.
        for a in args:
            if "\x00" in a or not _encodable(a, True):
                raise SkillSandboxError(f"tool {name}: an argument holds a NUL or a lone surrogate")
        stdin = arguments.get("stdin")
        if stdin is not None and not isinstance(stdin, str):
            raise SkillSandboxError(f"tool {name}: 'stdin' must be a string")
        if stdin is not None and not _encodable(stdin, False):
            raise SkillSandboxError(f"tool {name}: 'stdin' holds a lone surrogate")
        sb = SkillSandbox(s["path"], binary=self.binary, **self._sandbox)
        return sb.run_script(script, args=args, stdin=stdin)

    def dispatch(self, call: Any) -> RunResult:
        """Run a tool call as an SDK hands it over: an OpenAI tool call
        (``function.name``, ``function.arguments`` as a JSON string) or an
        Anthropic ``tool_use`` block (``name``, ``input``); dicts or SDK objects."""
        fn = _get(call, "function")
        if fn is not None:
            raw = _get(fn, "arguments") or "{}"
            try:
                arguments = json.loads(raw) if isinstance(raw, str) else dict(raw)
            except ValueError as exc:
                raise SkillSandboxError(f"tool call arguments are not JSON: {exc}") from None
            return self.run(str(_get(fn, "name")), arguments)
        return self.run(str(_get(call, "name")), dict(_get(call, "input") or {}))

    def _content(self, call: Any) -> "tuple[str, bool]":
        try:
            r = self.dispatch(call)
        except SkillSandboxError as exc:
            return json.dumps({"error": exc.message}), True
        body = {"exit_code": r.exit_code, "outcome": r.outcome, "timed_out": r.timed_out,
                "stdout": r.stdout, "stderr": r.stderr}
        if r.error:
            body["error"] = r.error
        return json.dumps(body, ensure_ascii=False), not r.ok

    def openai_tool_message(self, call: Any) -> Dict[str, Any]:
        """Run an OpenAI tool call; returns the ``{"role": "tool", ...}`` message to send back."""
        content, _ = self._content(call)
        return {"role": "tool", "tool_call_id": _get(call, "id"), "content": content}

    def anthropic_tool_result(self, block: Any) -> Dict[str, Any]:
        """Run an Anthropic ``tool_use`` block; returns its ``tool_result`` block."""
        content, is_error = self._content(block)
        return {"type": "tool_result", "tool_use_id": _get(block, "id"),
                "content": content, "is_error": is_error}
