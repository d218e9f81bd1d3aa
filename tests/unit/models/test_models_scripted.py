"""The scripted provider: ordered and keyed replies, tool calls, scripted failures, streaming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError, InfraError, SubjectError
from assay.models import Message, ModelInfraError, ModelResponseError, ToolCall, get_model
from assay.models.scripted import ScriptedModel

SCRIPT = """\
replies:
  - match: weather
    tool_calls:
      - name: get_weather
        arguments: {city: Paris}
  - regex: "^add (\\\\d+) and (\\\\d+)"
    text: "the sum"
    times: 1
  - text: "first"
  - text: "second"
default:
  text: "I don't know."
"""


def _user(text: str) -> list[Message]:
    return [Message("system", "sys"), Message("user", text)]


async def test_ordered_keyed_and_default(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SCRIPT)
    model = get_model(f"scripted/{path}")
    assert model.name == f"scripted/{path}"
    assert (await model.generate(_user("hello"))).text == "first"
    weather = await model.generate(_user("What's the WEATHER like?"))
    assert weather.tool_calls == [ToolCall("call_2_0", "get_weather", {"city": "Paris"})]
    assert weather.finish_reason == "tool_calls"
    assert (await model.generate(_user("add 2 and 3"))).text == "the sum"
    # 'times: 1' used up: the next ordered reply comes instead
    assert (await model.generate(_user("add 2 and 3"))).text == "second"
    assert (await model.generate(_user("anything"))).text == "I don't know."
    assert isinstance(model, ScriptedModel) and len(model.calls) == 5


async def test_exhausted_script_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps([{"text": "only"}]))
    model = get_model(f"scripted/{path}")
    await model.generate(_user("a"))
    with pytest.raises(ConfigError, match=r"s\.json.*ran out of replies after 1 calls"):
        await model.generate(_user("b"))


async def test_loop_restarts_ordered_replies() -> None:
    model = ScriptedModel({"replies": [{"text": "a"}, {"text": "b"}], "loop": True})
    texts = [(await model.generate(_user("x"))).text for _ in range(5)]
    assert texts == ["a", "b", "a", "b", "a"]


async def test_scripted_errors_are_classified() -> None:
    model = ScriptedModel(
        [
            {"error": "infra", "message": "backend down"},
            {"error": "auth"},
            {"error": "subject", "message": "context too long"},
        ]
    )
    with pytest.raises(ModelInfraError, match="backend down") as info:
        await model.generate(_user("x"))
    assert isinstance(info.value, InfraError) and info.value.kind == "connect"
    with pytest.raises(ModelInfraError) as info:
        await model.generate(_user("x"))
    assert info.value.kind == "auth" and info.value.status == 401
    with pytest.raises(ModelResponseError) as subj:
        await model.generate(_user("x"))
    assert isinstance(subj.value, SubjectError) and not isinstance(subj.value, InfraError)


async def test_rate_limit_is_retried_through_the_shared_loop() -> None:
    model = ScriptedModel(
        [{"error": "rate_limit", "retry_after": 0.01}, {"error": "server"}, {"text": "finally"}],
        max_retries=2,
    )
    out = await model.generate(_user("x"))
    assert out.text == "finally" and model.retries_done == 2


async def test_streaming_chunks_and_usage() -> None:
    model = ScriptedModel(
        [{"text": "one two three", "usage": {"input_tokens": 7, "output_tokens": 3}, "delay_s": 0.01}]
    )
    stream = model.stream(_user("x"))
    pieces = [c.text async for c in stream]
    assert "".join(pieces) == "one two three" and len(pieces) == 3
    out = stream.output
    assert out is not None and out.timings is not None
    assert out.timings.ttft_s is not None and out.timings.ttft_s >= 0.01
    assert (out.usage.input_tokens, out.usage.output_tokens) == (7, 3)
    assert out.usage.cost_usd == 0.0 and out.usage.cost_source == "harness_counts"


async def test_word_counts_when_usage_not_scripted() -> None:
    out = await ScriptedModel([{"text": "a b c"}]).generate([Message("user", "one two")])
    assert (out.usage.input_tokens, out.usage.output_tokens, out.usage.calls) == (2, 3, 1)


def test_yaml_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("replies:\n  - text: ok\n  - text: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: invalid YAML"):
        get_model(f"scripted/{path}")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('[{"text": "x", "colour": "red"}]', "replies.0.colour"),
        ('[{"error": "meteor"}]', "replies.0.error"),
        ('[{"regex": "(", "text": "x"}]', "bad regex"),
        ("{}", "no replies"),
        ('"just text"', "list of replies"),
    ],
)
def test_bad_scripts_are_config_errors(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=needle) as info:
        get_model(f"scripted/{path}")
    assert str(path) in str(info.value)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        get_model(f"scripted/{tmp_path / 'nope.yaml'}")
