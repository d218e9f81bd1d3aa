"""The ``local`` provider on the embedded SmolLM2 GGUF: llama.cpp in a server child process, so a crash of the
model is an outage of the backend, never the death of the eval."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from assay.errors import ConfigError, InfraError
from assay.models import Message, Tool, embedded_gguf_path, get_model
from assay.models._local import LocalModel
from assay.models.server_tokens import server_tokenizer

pytestmark = pytest.mark.local_model

WEATHER = Tool(
    "get_weather",
    "Get the current weather of a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
GREETING = [Message("system", "You are a helpful assistant."), Message("user", "Say hello to Ada.")]


@pytest.fixture(scope="module")
def model() -> LocalModel:
    m = get_model("local/smollm2", ctx_size=1024, defaults={"temperature": 0, "seed": 7})
    assert isinstance(m, LocalModel)
    return m


async def test_one_server_process_shared(model: LocalModel) -> None:
    await model.preflight()
    other = get_model("local/smollm2", ctx_size=1024)
    assert isinstance(other, LocalModel)
    await other.preflight()
    assert model.server is not None and other.server is model.server
    assert model.server.running and model.server.pid not in (None, os.getpid())
    assert model.model_path == embedded_gguf_path()


async def test_plain_chat(model: LocalModel) -> None:
    out = await model.generate(GREETING, max_tokens=24)
    assert out.text.strip() and out.finish_reason in ("stop", "length")
    assert out.usage.input_tokens > 5 and 0 < out.usage.output_tokens <= 24
    assert out.usage.cost_usd == 0.0 and out.usage.cost_source == "harness_counts"


async def test_streaming_with_timings_and_counted_usage(model: LocalModel) -> None:
    plain = await model.generate(GREETING, max_tokens=24)
    stream = model.stream(GREETING, max_tokens=24)
    arrivals = [c.t async for c in stream]
    out = stream.output
    assert out is not None and out.text == plain.text  # greedy: streaming changes nothing
    assert len(arrivals) >= 3 and arrivals == sorted(arrivals)
    t = out.timings
    assert t is not None and t.first_token == arrivals[0] and t.last_token == arrivals[-1]
    assert t.request_start < t.first_token <= t.last_token <= (t.end or 0)
    # llama-cpp-python reports no usage when streaming; assay's server adds the final usage chunk
    assert out.usage.input_tokens == plain.usage.input_tokens
    assert abs(out.usage.output_tokens - plain.usage.output_tokens) <= 1


async def test_the_servers_own_tokenizer_counts_the_texts_tokens(model: LocalModel) -> None:
    await model.preflight()
    assert model.server is not None
    counter = server_tokenizer(model.server.base_url, model.model)
    # SmolLM2's tokenizer, read through llama.cpp's /tokenize: the text's own tokens, no BOS
    assert await counter.count("") == 0
    assert await counter.count("Hello world") == 2
    assert await counter.count("The quick brown fox jumps over the lazy dog.") == 10
    assert counter.source == "tokenizer (llama.cpp)"


async def test_tool_call_shape(model: LocalModel) -> None:
    out = await model.generate(
        [Message("user", "What is the weather in Paris?")],
        tools=[WEATHER],
        tool_choice="get_weather",
        max_tokens=48,
    )
    assert out.finish_reason == "tool_calls" and [c.name for c in out.tool_calls] == ["get_weather"]
    assert isinstance(out.tool_calls[0].arguments.get("city"), str)
    streamed = await model.generate(
        [Message("user", "Weather in Oslo?")],
        tools=[WEATHER],
        tool_choice="get_weather",
        stream=True,
        max_tokens=48,
    )
    assert [c.name for c in streamed.tool_calls] == ["get_weather"]


def test_model_path_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="--model-path"):
        get_model("local/x", model_path=tmp_path / "missing.gguf")
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"NOPE" + b"\0" * 16)
    with pytest.raises(ConfigError, match="not a GGUF"):
        get_model(f"local/{fake}")
    monkeypatch.setenv("ASSAY_LOCAL_MODEL_PATH", str(tmp_path / "gone.gguf"))
    with pytest.raises(ConfigError, match="ASSAY_LOCAL_MODEL_PATH"):
        get_model("local/smollm2")
    monkeypatch.delenv("ASSAY_LOCAL_MODEL_PATH")
    with pytest.raises(ConfigError, match="unknown"):
        get_model("local/llama-70b")


async def test_a_crashed_model_is_an_outage_naming_the_signal() -> None:
    model = get_model("local/smollm2", ctx_size=512)
    assert isinstance(model, LocalModel)
    first = await model.generate(GREETING, max_tokens=4)
    assert first.text
    assert model.server is not None
    os.kill(model.server.pid or 0, signal.SIGSEGV)
    model.server.wait()
    with pytest.raises(InfraError, match=r"killed by SIGSEGV \(signal 11\)") as caught:
        await model.generate(GREETING, max_tokens=4)
    assert "chat_template" not in str(caught.value) and "{%" not in str(caught.value)
    again = await model.generate(GREETING, max_tokens=4)  # the next call starts a fresh server
    assert again.text
