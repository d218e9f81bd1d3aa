"""``python -m assay.models._llama_serve ARGS``: llama-cpp-python's OpenAI-compatible server, as assay runs it.

Three things on top of ``python -m llama_cpp.server ARGS`` (same arguments):

- the installed llama.cpp is checked first (:func:`check_llama_build`): a build that would crash on this CPU
  exits with one line saying how to rebuild it, instead of a segmentation fault on the first request;
- a streamed chat completion ends with a usage chunk (``choices: []``, ``usage: {...}``), as OpenAI sends for
  ``stream_options.include_usage``: llama-cpp-python reports no usage when streaming;
- a request that offers tools is served so that the model chooses between a tool call and an answer
  (:mod:`assay.models._llama_tools`): llama-cpp-python's own formats never call a tool unless forced.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any


def _with_usage(llm: Any, chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Pass ``chunks`` through, then a usage chunk: the prompt is what the context held at the first chunk
    (evaluated, nothing generated fed back yet); the answer is counted by the model's own tokenizer."""
    prompt_tokens: int | None = None
    last: dict[str, Any] | None = None
    pieces: list[str] = []
    for chunk in chunks:
        if chunk.get("usage"):  # the stream counted itself (a tool call of assay.models._llama_tools)
            yield chunk
            yield from chunks
            return
        if prompt_tokens is None:
            prompt_tokens = int(llm.n_tokens)
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                pieces.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                fn = call.get("function") or {}
                pieces.append((fn.get("name") or "") + (fn.get("arguments") or ""))
        last = chunk
        yield chunk
    if last is None:
        return
    answer = "".join(pieces)
    completion = len(llm.tokenize(answer.encode("utf-8"), add_bos=False, special=True)) if answer else 0
    prompt = prompt_tokens or 0
    yield {
        "id": last.get("id"),
        "object": "chat.completion.chunk",
        "created": last.get("created"),
        "model": last.get("model"),
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def install_stream_usage() -> None:
    """Make ``Llama.create_chat_completion(stream=True)`` end with a usage chunk (in this process)."""
    import llama_cpp

    original = llama_cpp.Llama.create_chat_completion
    if getattr(original, "_assay_stream_usage", False):
        return

    def create_chat_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        return _with_usage(self, result) if kwargs.get("stream") else result

    create_chat_completion._assay_stream_usage = True  # type: ignore[attr-defined]
    llama_cpp.Llama.create_chat_completion = create_chat_completion  # type: ignore[method-assign]


def main() -> None:
    from assay.errors import AssayError
    from assay.models._llama_build import check_llama_build
    from assay.models._llama_tools import install_tool_calls

    try:
        check_llama_build()
    except AssayError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    install_tool_calls()
    install_stream_usage()
    from llama_cpp.server.__main__ import main as serve

    sys.argv[0] = "assay-llama-server"
    serve()


if __name__ == "__main__":
    main()
