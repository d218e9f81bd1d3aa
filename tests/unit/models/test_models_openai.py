"""openai-compat request/response shapes against a local fake HTTP server playing recorded answers."""

from __future__ import annotations

import time

import pytest
from models_fakes import FakeServer, Reply, load_fixture, sse_blocks

from assay.errors import ConfigError, InfraError, SubjectError
from assay.models import Message, ModelInfraError, ModelResponseError, Tool, ToolCall, get_model
from assay.models._retry import get_limiter

WEATHER = Tool(
    "get_weather",
    "Current weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _model(server: FakeServer, **kw):
    kw.setdefault("backoff_s", 0.0)
    return get_model(f"openai-compat/gpt-4o-mini@{server.url}/v1", api_key="sk-test-123", **kw)


async def test_plain_chat_request_and_usage(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body=load_fixture("openai_chat.json")))
    model = _model(fake_server)
    out = await model.generate(
        [Message("system", "Be brief."), Message("user", "Capital of France?")], temperature=0, max_tokens=20
    )
    req = fake_server.requests[0]
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.headers["authorization"] == "Bearer sk-test-123"
    assert req.body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Capital of France?"},
        ],
        "temperature": 0,
        "max_tokens": 20,
    }
    assert out.text == "Paris is the capital of France."
    assert out.finish_reason == "stop"
    assert out.model == "gpt-4o-mini-2024-07-18"
    # prompt_tokens includes cached tokens; assay keeps them apart
    assert (out.usage.input_tokens, out.usage.cache_read_tokens, out.usage.output_tokens) == (176, 1024, 8)
    assert out.usage.cost_source == "harness_counts"
    assert out.usage.cost_usd == pytest.approx((176 * 0.15 + 1024 * 0.075 + 8 * 0.6) / 1e6)
    assert out.timings is not None and out.timings.e2e_s is not None and out.timings.e2e_s >= 0


async def test_tool_call_request_shape_and_parsing(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body=load_fixture("openai_tool_call.json")))
    model = _model(fake_server)
    history = [
        Message("user", "Weather in Paris?"),
        Message("assistant", "", tool_calls=[ToolCall("call_0", "get_weather", {"city": "Paris"})]),
        Message("tool", "18C, sunny", tool_call_id="call_0"),
        Message("user", "And Lyon?"),
    ]
    out = await model.generate(history, tools=[WEATHER], tool_choice="get_weather")
    body = fake_server.requests[0].body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": WEATHER.description,
                "parameters": WEATHER.parameters,
            },
        }
    ]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    assert body["messages"][2] == {"role": "tool", "content": "18C, sunny", "tool_call_id": "call_0"}
    assert out.finish_reason == "tool_calls"
    assert out.tool_calls[0] == ToolCall("call_w1", "get_weather", {"city": "Paris"})
    # the second call's arguments are truncated JSON: kept raw, never guessed
    assert out.tool_calls[1].arguments == {} and out.tool_calls[1].raw_arguments == '{"city": "Lyon"'


async def test_streaming_chunks_timings_and_usage(fake_server: FakeServer) -> None:
    fake_server.add(Reply(sse=sse_blocks("openai_stream.sse")))
    model = _model(fake_server)
    before = time.perf_counter()
    stream = model.stream([Message("user", "hi")])
    seen = [c.text async for c in stream]
    assert seen == ["Hello", " there", "!"]
    out = stream.output
    assert out is not None and out.text == "Hello there!"
    body = fake_server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    t = out.timings
    assert t is not None and t.first_token is not None and t.last_token is not None and t.end is not None
    assert before <= t.request_start <= t.first_token <= t.last_token <= t.end
    stamps = [c.t for c in out.chunks]
    assert stamps == sorted(stamps) and stamps[0] == t.first_token
    assert (out.usage.input_tokens, out.usage.output_tokens) == (12, 3)
    assert out.usage.cost_usd == pytest.approx((12 * 0.15 + 3 * 0.6) / 1e6)
    assert out.finish_reason == "stop"


async def test_streamed_tool_call_is_assembled(fake_server: FakeServer) -> None:
    fake_server.add(Reply(sse=sse_blocks("openai_stream_tools.sse")))
    out = await _model(fake_server).generate([Message("user", "Oslo?")], tools=[WEATHER], stream=True)
    assert out.tool_calls == [ToolCall("call_s1", "get_weather", {"city": "Oslo"})]
    assert out.chunks[-1].tool_call == out.tool_calls[0]
    assert out.timings is not None and out.timings.first_token is not None


async def test_call_without_reported_tokens_has_no_cost(fake_server: FakeServer) -> None:
    body = load_fixture("openai_chat.json")
    del body["usage"]
    fake_server.add(Reply(body=body))
    out = await _model(fake_server).generate([Message("user", "hi")])
    assert out.usage.cost_usd is None and out.usage.cost_source is None and out.usage.unpriced_calls == 1


async def test_server_reported_cost_wins(fake_server: FakeServer) -> None:
    body = load_fixture("openai_chat.json")
    body["usage"]["cost"] = 0.00042
    fake_server.add(Reply(body=body))
    out = await _model(fake_server).generate([Message("user", "hi")])
    assert out.usage.cost_usd == 0.00042 and out.usage.cost_source == "api_equivalent"


async def test_unknown_model_on_remote_host_is_unpriced(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body=load_fixture("openai_chat.json")))
    model = get_model(f"openai-compat/qwen3-32b@{fake_server.url}/v1")
    out = await model.generate([Message("user", "hi")])
    # the fake server is on loopback: your own machine is free
    assert out.usage.cost_usd == 0.0


@pytest.mark.parametrize(
    ("status", "fixture", "kind"),
    [
        (401, "openai_error_auth.json", "auth"),
        (429, "openai_error_quota.json", "quota"),
        (404, "openai_error_model.json", "not_found"),
    ],
)
async def test_infra_failures_are_not_retried(
    fake_server: FakeServer, status: int, fixture: str, kind: str
) -> None:
    fake_server.add(Reply(status, load_fixture(fixture)), Reply(body=load_fixture("openai_chat.json")))
    with pytest.raises(ModelInfraError) as info:
        await _model(fake_server).generate([Message("user", "hi")])
    assert isinstance(info.value, InfraError)
    assert info.value.kind == kind and info.value.status == status
    assert len(fake_server.requests) == 1
    if kind == "auth":
        assert "OPENAI_API_KEY" in str(info.value)


async def test_context_too_long_is_the_subjects_failure(fake_server: FakeServer) -> None:
    fake_server.add(Reply(400, load_fixture("openai_error_context.json")))
    with pytest.raises(ModelResponseError) as info:
        await _model(fake_server).generate([Message("user", "x" * 100)])
    assert isinstance(info.value, SubjectError) and not isinstance(info.value, InfraError)
    assert "context_length_exceeded" in str(info.value)


async def test_rate_limit_is_retried_honouring_retry_after(fake_server: FakeServer) -> None:
    fake_server.add(
        Reply(429, load_fixture("openai_error_rate_limit.json"), headers={"Retry-After": "0.3"}),
        Reply(body=load_fixture("openai_chat.json")),
    )
    model = _model(fake_server, backoff_s=5.0, max_concurrency=8)
    start = time.perf_counter()
    out = await model.generate([Message("user", "hi")])
    elapsed = time.perf_counter() - start
    assert out.text.startswith("Paris")
    assert len(fake_server.requests) == 2
    assert 0.3 <= elapsed < 3.0  # waited what the server asked, not the 5 s backoff
    limiter = get_limiter(f"openai-compat@{fake_server.url}/v1", 8)
    assert limiter.rate_limited == 1 and limiter.limit == 4


async def test_server_errors_become_infra_after_retries(fake_server: FakeServer) -> None:
    fake_server.add(*[Reply(503, {"error": {"message": "upstream overloaded"}}) for _ in range(3)])
    with pytest.raises(ModelInfraError) as info:
        await _model(fake_server, max_retries=2).generate([Message("user", "hi")])
    assert info.value.kind == "server" and "after 2 retries" in str(info.value)
    assert len(fake_server.requests) == 3


async def test_server_error_then_success_recovers(fake_server: FakeServer) -> None:
    fake_server.add(Reply(500, "Internal Server Error"), Reply(body=load_fixture("openai_chat.json")))
    model = _model(fake_server)
    out = await model.generate([Message("user", "hi")])
    assert out.text.startswith("Paris") and model.retries_done == 1


async def test_dropped_connection_is_retried_then_infra(fake_server: FakeServer) -> None:
    fake_server.add(Reply(drop=True), Reply(drop=True))
    with pytest.raises(ModelInfraError) as info:
        await _model(fake_server, max_retries=1).generate([Message("user", "hi")])
    assert info.value.kind in ("protocol", "connect")
    assert len(fake_server.requests) == 2


async def test_connection_refused_is_infra() -> None:
    from assay.models._server import free_port

    model = get_model(f"openai-compat/m@http://127.0.0.1:{free_port()}/v1", max_retries=1, backoff_s=0.0)
    with pytest.raises(ModelInfraError) as info:
        await model.generate([Message("user", "hi")])
    assert info.value.kind == "connect"


async def test_dns_failure_is_infra() -> None:
    model = get_model("openai-compat/m@http://no-such-host.invalid/v1", max_retries=0)
    with pytest.raises(ModelInfraError) as info:
        await model.generate([Message("user", "hi")])
    assert info.value.kind in ("dns", "connect")


async def test_preflight_checks_models_endpoint(fake_server: FakeServer) -> None:
    fake_server.add(Reply(body={"object": "list", "data": [{"id": "gpt-4o-mini"}]}))
    await _model(fake_server).preflight()
    assert fake_server.requests[0].path == "/v1/models"
    fake_server.add(Reply(401, load_fixture("openai_error_auth.json")))
    with pytest.raises(ModelInfraError, match="OPENAI_API_KEY"):
        await _model(fake_server).preflight()


async def test_preflight_names_the_env_var_when_unreachable() -> None:
    from assay.models._server import free_port

    model = get_model(f"openai-compat/m@http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(ModelInfraError, match="ASSAY_OPENAI_BASE_URL") as info:
        await model.preflight()
    assert "\n" not in str(info.value)


def test_configuration_errors_name_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="ASSAY_OPENAI_BASE_URL"):
        get_model("openai-compat/qwen3")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        get_model("openai/gpt-4o-mini")
    monkeypatch.setenv("ASSAY_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert get_model("openai-compat/qwen3").base_url == "http://127.0.0.1:9/v1"  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    m = get_model("openai/gpt-4o-mini")
    assert m.name == "openai/gpt-4o-mini"
