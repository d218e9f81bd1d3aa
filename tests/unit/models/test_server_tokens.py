"""One reader of a server's own tokenizer (``assay.models.server_tokens``), used by the gateway's count_tokens,
a stream's missing usage and the serving benchmark: each server's shape, the BOS taken off, no tokenizer is None
(never an estimate), and a server that was down is asked again."""

from __future__ import annotations

from typing import Any

from assay.evals.serving._stub import StubConfig, StubServer
from assay.models.server_tokens import ServerTokenizer, server_tokenizer


async def test_llama_cpp_python_counts_without_its_bos_token() -> None:
    stub = StubServer(StubConfig(flavor="llama-cpp-python")).start()
    try:
        counter = server_tokenizer(stub.base_url, "stub")
        assert await counter.count("one two three") == 3  # the stub: a BOS and one token a word
        assert await counter.count("") == 0
        assert counter.source == "tokenizer (llama-cpp-python)"
    finally:
        stub.stop()


async def test_a_server_without_a_tokenizer_counts_nothing() -> None:
    stub = StubServer(StubConfig(flavor="plain")).start()
    try:
        counter = server_tokenizer(stub.base_url)
        assert await counter.count("one two") is None
        assert counter.kind is None and counter.source is None
    finally:
        stub.stop()


async def test_vllms_shape_is_read_and_a_server_that_was_down_is_asked_again() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []
    up = False

    async def post(path: str, body: dict[str, Any]) -> tuple[int | None, Any]:
        asked.append((path, body))
        if not up:
            return None, None  # unreachable
        if path == "/tokenize" and "prompt" in body:  # vLLM: a count, the prompt under "prompt"
            return 200, {"count": len(body["prompt"].split()), "max_model_len": 4096, "tokens": []}
        return 400, {"error": "unsupported"}

    counter = ServerTokenizer(post, "m")
    assert await counter.count("a b c") is None and counter.kind is None
    up = True
    assert await counter.count("a b c d") == 4 and counter.source == "tokenizer (vllm)"
    assert asked[-1] == ("/tokenize", {"model": "m", "prompt": "a b c d", "add_special_tokens": False})


def test_one_counter_per_server_whichever_url_names_it() -> None:
    assert server_tokenizer("http://127.0.0.1:9/v1") is server_tokenizer("http://127.0.0.1:9/")
