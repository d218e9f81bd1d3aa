"""A server that reports no usage while streaming (llama-cpp-python's, as a user may run it) is counted by its own
tokenizer endpoint."""

from __future__ import annotations

from assay.evals.serving._stub import StubConfig, StubServer
from assay.models import Message, get_model


async def test_streamed_usage_is_counted_by_the_servers_tokenizer() -> None:
    stub = StubServer(StubConfig(flavor="llama-cpp-python", tokens=5, reply=["w "])).start()
    try:
        model = get_model(f"openai-compat/stub@{stub.base_url}/v1")
        out = await model.generate([Message("user", "one two three")], max_tokens=5, stream=True)
    finally:
        stub.stop()
    # the stub's tokenizer: a BOS and one token a word; the BOS is taken off both counts
    assert out.usage.output_tokens == len(out.text.split()) == 5
    assert out.usage.input_tokens == 3 and out.usage.cost_usd == 0.0 and out.usage.unpriced_calls == 0
