"""How many streamed requests per second one assay process sustains (so the client never bounds figures).

Starts assay's stub OpenAI-compatible server in a separate process on 127.0.0.1 (no delays, 32 streamed
tokens per reply), then drives it with the serving benchmark's own load loop (``run_level``: the lean
client, SSE parsing, per-token stamps, per-request records) at a fixed concurrency, and prints the
completed requests per second. Bounded: ``--requests`` per round, ``--rounds`` rounds.

    .venv/bin/python benchmarks/client_overhead.py [--concurrency 64] [--requests 5000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time

from assay.evals.serving import (
    LengthSpec,
    LoadLevel,
    StreamClient,
    SyntheticWorkload,
    level_figures,
    run_level,
)

TARGET_RPS = 500.0


def start_stub(tokens: int, per_token_writes: bool) -> tuple[subprocess.Popen[str], str]:
    args = ["--port", "0", "--tokens", str(tokens)] + (["--per-token-writes"] if per_token_writes else [])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from assay.evals.serving._stub import main; main(sys.argv[1:])",
            *args,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening "):
        proc.kill()
        raise SystemExit(f"stub did not start: {line!r}")
    return proc, line.split(" ", 1)[1]


async def measure(url: str, concurrency: int, requests: int, rounds: int, tokens: int) -> list[float]:
    workload = SyntheticWorkload(
        LengthSpec.parse("16", "--input-len"), LengthSpec.parse(str(tokens), "--output-len")
    )
    client = StreamClient(url)
    rates = []
    try:
        for r in range(rounds):
            level = LoadLevel(
                f"c{concurrency}", concurrency=concurrency, num_requests=requests, warmup=concurrency
            )
            t0, cpu0 = time.perf_counter(), time.process_time()
            run = await run_level(client, "stub", workload, level, seed=r, request_timeout=30)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            fig = level_figures(run.timings)
            tokens_seen = sum(len(t.itl_s) + 1 for t in run.timings if t.ok and not t.warmup)
            rates.append(fig.request_throughput or 0.0)
            print(
                f"round {r + 1}: {fig.completed}/{fig.requests} ok, {fig.errors} errors, "
                f"{fig.request_throughput or 0:.0f} req/s, {fig.output_throughput or 0:.0f} tok/s "
                f"({tokens_seen} streamed tokens stamped), round wall {wall:.2f}s incl. warm-up; "
                f"client CPU {1e6 * cpu / (requests + concurrency):.0f} us/request "
                f"(one core would allow {(requests + concurrency) / cpu:.0f} req/s)"
            )
    finally:
        await client.aclose()
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument(
        "--per-token-writes",
        action="store_true",
        help="the stub writes each token separately (harder: one read and stamp per token)",
    )
    args = parser.parse_args()
    proc, url = start_stub(args.tokens, args.per_token_writes)
    try:
        rates = asyncio.run(measure(url, args.concurrency, args.requests, args.rounds, args.tokens))
    finally:
        proc.terminate()
        proc.wait(5)
    best, median = max(rates), statistics.median(rates)
    print(
        f"client overhead: one assay process sustains {median:.0f} req/s (median of {len(rates)}, best {best:.0f}) "
        f"against a local stub streaming {args.tokens} tokens per reply"
        f"{' (one write per token)' if args.per_token_writes else ''} at concurrency {args.concurrency}; "
        f"target >= {TARGET_RPS:.0f} req/s: {'OK' if median >= TARGET_RPS else 'BELOW TARGET'}"
    )


if __name__ == "__main__":
    main()
