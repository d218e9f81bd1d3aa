"""Anthropic Messages API request/response shapes against a local fake server playing recorded answers."""

from __future__ import annotations

import pytest
from models_fakes import FakeServer, Reply, load_fixture, sse_blocks

from assay.errors import ConfigError
from assay.models import Message, ModelInfraError, ModelResponseError, Tool, ToolCall, get_model

WEATHER = Tool(
    "get_weather",
    "Current weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _model(server: FakeServer, **kw):
    kw.setdefault("backoff_s", 0.0)
    return get_model("anthropic/claude-sonnet-4-5", api_key="sk-ant-test", base_url=server.url, **kw)


async def test_plain_message_request_and_usage(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body=load_fixture("anthropic_message.json")))
    out = await _model(fake_server).generate(
        [Message("system", "Be brief."), Message("user", "Capital of France?")], temperature=0.2, stop="\n\n"
    )
    req = fake_server.requests[0]
    assert (req.method, req.path) == ("POST", "/v1/messages")
    assert req.headers["x-api-key"] == "sk-ant-test"
    assert req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "Capital of France?"}],
        "temperature": 0.2,
        "stop_sequences": ["\n\n"],
    }
    assert out.text == "Paris is the capital of France."
    assert out.finish_reason == "stop"
    u = out.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (
        2095,
        503,
        2000,
        100,
    )
    assert u.cost_source == "harness_counts"
    assert u.cost_usd == pytest.approx((2095 * 3 + 503 * 15 + 2000 * 0.3 + 100 * 3.75) / 1e6)


async def test_tools_and_tool_results_shape(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body=load_fixture("anthropic_tool_use.json")))
    history = [
        Message("user", "Weather in Paris?"),
        Message("assistant", "Checking.", tool_calls=[ToolCall("toolu_1", "get_weather", {"city": "Paris"})]),
        Message("tool", "18C", tool_call_id="toolu_1"),
        Message("user", "And San Francisco?"),
    ]
    out = await _model(fake_server).generate(history, tools=[WEATHER], tool_choice="required", max_tokens=200)
    body = fake_server.requests[0].body
    assert body["tools"] == [
        {"name": "get_weather", "description": WEATHER.description, "input_schema": WEATHER.parameters}
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["max_tokens"] == 200
    assert body["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        # the tool result and the next user text share one user turn
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {"type": "text", "text": "And San Francisco?"},
            ],
        },
    ]
    assert out.text == "I'll check the weather."
    assert out.finish_reason == "tool_calls"
    assert out.tool_calls == [
        ToolCall("toolu_01A09q90qw90lq917835lq9", "get_weather", {"city": "San Francisco", "unit": "celsius"})
    ]


async def test_streaming_text_tool_use_and_usage(fake_server: FakeServer) -> None:
    fake_server.add(Reply(sse=sse_blocks("anthropic_stream.sse")))
    model = _model(fake_server)
    stream = model.stream([Message("user", "Weather in SF?")], tools=[WEATHER], tool_choice="get_weather")
    texts = [c.text async for c in stream if c.tool_call is None]
    out = stream.output
    assert fake_server.requests[0].body["stream"] is True
    assert fake_server.requests[0].body["tool_choice"] == {"type": "tool", "name": "get_weather"}
    assert texts == ["Let me", " check."]
    assert out is not None and out.text == "Let me check."
    assert out.tool_calls == [
        ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", {"city": "San Francisco"})
    ]
    assert out.finish_reason == "tool_calls"
    assert (out.usage.input_tokens, out.usage.output_tokens) == (472, 89)
    t = out.timings
    assert t is not None and t.first_token is not None and t.last_token is not None
    assert t.request_start <= t.first_token <= t.last_token <= (t.end or 0)


async def test_overloaded_in_stream_is_retried(fake_server: FakeServer) -> None:
    fake_server.add(
        Reply(sse=sse_blocks("anthropic_stream_overloaded.sse")),
        Reply(sse=sse_blocks("anthropic_stream.sse")),
    )
    out = await _model(fake_server).generate([Message("user", "hi")], stream=True)
    assert out.text == "Let me check." and len(fake_server.requests) == 2


async def test_overloaded_529_becomes_infra_after_retries(fake_server: FakeServer) -> None:
    fake_server.add(*[Reply(529, load_fixture("anthropic_error_overloaded.json")) for _ in range(2)])
    with pytest.raises(ModelInfraError) as info:
        await _model(fake_server, max_retries=1).generate([Message("user", "hi")])
    assert info.value.kind == "server" and info.value.status == 529


@pytest.mark.parametrize(
    ("status", "fixture", "kind"),
    [(401, "anthropic_error_auth.json", "auth"), (400, "anthropic_error_billing.json", "quota")],
)
async def test_auth_and_billing_are_infra(
    fake_server: FakeServer, status: int, fixture: str, kind: str
) -> None:
    fake_server.add(Reply(status, load_fixture(fixture)))
    with pytest.raises(ModelInfraError) as info:
        await _model(fake_server).generate([Message("user", "hi")])
    assert info.value.kind == kind and len(fake_server.requests) == 1
    if kind == "auth":
        assert "ANTHROPIC_API_KEY" in str(info.value)


async def test_bad_request_is_the_subjects_failure(fake_server: FakeServer) -> None:
    fake_server.add(
        Reply(
            400,
            {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}},
        )
    )
    with pytest.raises(ModelResponseError, match="prompt is too long"):
        await _model(fake_server).generate([Message("user", "hi")])


async def test_preflight_lists_one_model(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body=load_fixture("anthropic_models.json")))
    await _model(fake_server).preflight()
    assert fake_server.requests[0].path == "/v1/models?limit=1"
    assert fake_server.requests[0].headers["x-api-key"] == "sk-ant-test"


def test_missing_key_names_the_env_var() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        get_model("anthropic/claude-sonnet-4-5")


def test_unknown_option_is_a_config_error(fake_server: FakeServer) -> None:
    model = _model(fake_server)
    with pytest.raises(ConfigError, match="frobnicate"):
        model.build_payload([Message("user", "x")], None, False, {"frobnicate": 1})  # type: ignore[attr-defined]
