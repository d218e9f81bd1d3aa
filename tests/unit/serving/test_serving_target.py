from __future__ import annotations

import pytest

from assay.errors import ConfigError, InfraError
from assay.evals.serving import StreamClient
from assay.evals.serving._target import check_context, parse_model_spec, read_context_size, token_counter


def test_model_specs() -> None:
    t = parse_model_spec("openai-compat/qwen@http://127.0.0.1:8000/v1")
    assert (t.model, t.base_url, t.embedded, t.label) == (
        "qwen",
        "http://127.0.0.1:8000/v1",
        False,
        "openai-compat/qwen",
    )
    assert parse_model_spec("local/smollm2").embedded
    for bad in (
        "qwen",
        "openai-compat/qwen",
        "anthropic/claude@http://x",
        "openai-compat/q@ftp://x",
        "local/llama",
    ):
        with pytest.raises(ConfigError, match="--model"):
            parse_model_spec(bad)


@pytest.mark.parametrize(
    ("flavor", "source"),
    [
        ("llamacpp", "llama.cpp /props"),
        ("vllm", "vLLM /v1/models max_model_len"),
        ("llama-cpp-python", "llama-cpp-python context-window refusal"),
    ],
)
async def test_context_size_is_read_back(stub_factory, flavor: str, source: str) -> None:
    stub = stub_factory(flavor=flavor, n_ctx=512)
    client = StreamClient(stub.base_url + "/v1")
    reading = await read_context_size(client, "stub", expected=512)
    assert (reading.n_ctx, reading.source) == (512, source)
    check_context(reading, 512)
    with pytest.raises(ConfigError, match=r"--ctx-size 1024: the server runs with a context size of 512"):
        check_context(await read_context_size(client, "stub", expected=1024), 1024)
    await client.aclose()


async def test_llama_cpp_python_window_larger_than_asked_is_a_mismatch(stub_factory) -> None:
    stub = stub_factory(flavor="llama-cpp-python", n_ctx=4096)
    client = StreamClient(stub.base_url)
    reading = await read_context_size(client, "stub", expected=256)
    assert reading.n_ctx is None
    with pytest.raises(ConfigError, match=r"--ctx-size 256: the server runs with a larger context window"):
        check_context(reading, 256)
    await client.aclose()


async def test_plain_server_records_that_it_does_not_tell(stub_factory) -> None:
    stub = stub_factory(flavor="plain")
    client = StreamClient(stub.base_url)
    reading = await read_context_size(client, "stub", expected=None)
    assert reading.n_ctx is None and "not exposed" in reading.source
    check_context(reading, 4096)  # nothing to compare with: recorded as unknown, not an error
    await client.aclose()


async def test_unreachable_server_is_infra() -> None:
    from assay.models._server import free_port

    client = StreamClient(f"http://127.0.0.1:{free_port()}")
    with pytest.raises(InfraError, match="unreachable"):
        await read_context_size(client, "x", None)


async def test_token_counter_uses_the_servers_tokenizer(stub_factory) -> None:
    client = StreamClient(stub_factory(flavor="llama-cpp-python").base_url)
    counter = token_counter(client, "stub")
    assert await counter.count("one two three") == 3  # BOS subtracted
    assert counter.source == "tokenizer (llama-cpp-python)"
    await client.aclose()
    client = StreamClient(stub_factory(flavor="plain").base_url)
    counter = token_counter(client, "stub")
    assert await counter.count("one two") is None and counter.source is None
    await client.aclose()
