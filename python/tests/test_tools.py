"""The tool adapters, fed tool calls as the OpenAI and Anthropic SDKs hand them over."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from skill_sandbox import SkillSandboxError
from skill_sandbox.tools import SkillTools

UPPER = "import sys\nprint(' '.join(a.upper() for a in sys.argv[1:]) + sys.stdin.read().upper())\n"


@pytest.fixture
def tools(binary, make_skill, workdir):
    skills = workdir / "skills"
    make_skill("shout", {"upper.py": UPPER, "fail.sh": "echo no >&2\nexit 4\n"},
               description="Upper-cases its arguments. Use to shout.", parent=skills)
    make_skill("second-skill", {"hi.sh": "echo hi\n"}, parent=skills)
    return SkillTools(skills, timeout=20, binary=binary)


def test_schemas(tools):
    oa = {t["function"]["name"]: t for t in tools.openai_schemas()}
    an = {t["name"]: t for t in tools.anthropic_schemas()}
    assert sorted(oa) == sorted(an) == ["second-skill", "shout"]
    f = oa["shout"]
    assert f["type"] == "function" and f["function"]["description"].startswith("Upper-cases its arguments.")
    params = f["function"]["parameters"]
    assert params["properties"]["script"]["enum"] == ["fail.sh", "upper.py"]
    assert params["required"] == ["script"] and an["shout"]["input_schema"] == params
    json.dumps(oa), json.dumps(an)  # plain JSON, as the APIs take them


def test_openai_tool_call(tools):
    # chat.completions returns message.tool_calls: objects with .id and
    # .function.name/.arguments (a JSON string); dicts once serialised.
    call = SimpleNamespace(id="call_1", type="function", function=SimpleNamespace(
        name="shout", arguments=json.dumps({"script": "upper.py", "args": ["a", "b"], "stdin": "c"})))
    msg = tools.openai_tool_message(call)
    assert msg["role"] == "tool" and msg["tool_call_id"] == "call_1"
    body = json.loads(msg["content"])
    assert body["stdout"] == "A BC\n" and body["exit_code"] == 0 and body["outcome"] == "exited"
    as_dict = {"id": "call_2", "type": "function", "function": {"name": "second-skill", "arguments": '{"script": "hi.sh"}'}}
    assert json.loads(tools.openai_tool_message(as_dict)["content"])["stdout"] == "hi\n"


def test_anthropic_tool_use(tools):
    block = SimpleNamespace(type="tool_use", id="toolu_1", name="shout", input={"script": "fail.sh"})
    res = tools.anthropic_tool_result(block)
    assert res["type"] == "tool_result" and res["tool_use_id"] == "toolu_1" and res["is_error"] is True
    assert json.loads(res["content"])["exit_code"] == 4
    ok = tools.anthropic_tool_result({"type": "tool_use", "id": "toolu_2", "name": "shout",
                                      "input": {"script": "upper.py", "args": ["x"]}})
    assert ok["is_error"] is False and json.loads(ok["content"])["stdout"] == "X\n"


@pytest.mark.parametrize("call,why", [
    ({"id": "1", "name": "nope", "input": {"script": "x"}}, "unknown tool"),
    ({"id": "2", "name": "shout", "input": {"script": "../../etc/passwd"}}, "must be one of"),
    ({"id": "3", "name": "shout", "input": {"script": "upper.py", "args": "x"}}, "list of strings"),
    ({"id": "4", "function": {"name": "shout", "arguments": "{not json"}}, "not JSON"),
    # JSON a model may send that cannot reach the script: a bad call, not
    # a ValueError or UnicodeEncodeError out of the adapter.
    ({"id": "5", "function": {"name": "shout", "arguments": '{"script": "upper.py", "args": ["a\\u0000b"]}'}},
     "NUL or a lone surrogate"),
    ({"id": "6", "name": "shout", "input": {"script": "upper.py", "args": ["\ud800"]}}, "NUL or a lone surrogate"),
    ({"id": "7", "name": "shout", "input": {"script": "upper.py", "stdin": "\ud800"}}, "lone surrogate"),
])
def test_bad_calls(tools, call, why):
    with pytest.raises(SkillSandboxError, match=why):
        tools.dispatch(call)
    if "input" in call:
        res = tools.anthropic_tool_result(call)
        assert res["is_error"] and why in json.loads(res["content"])["error"]


def test_long_description_is_cut(binary, make_skill, workdir):
    # A hostile skill's 200,000-character description (run takes it, with
    # a warning) is not sent whole with every request to the model.
    skills = workdir / "long"
    make_skill("long-desc", {"hi.sh": "echo hi\n"}, description="A" * 200000, parent=skills)
    t = SkillTools(skills, binary=binary)
    desc = t.anthropic_schemas()[0]["description"]
    assert desc.startswith("AAAA") and len(desc) < 1100, len(desc)
    assert t.openai_schemas()[0]["function"]["description"] == desc
