"""Driving one load level: warm-up, then a closed loop (``--concurrency``) or an open loop of arrivals at
``--request-rate`` (Poisson, or gamma with ``--burstiness``), for ``--num-requests`` or ``--duration``.

Arrival gaps follow vLLM's convention: gamma with shape = burstiness and mean 1/rate, so burstiness 1 is a
Poisson process, below 1 is burstier and above 1 is more regular. An infinite rate sends everything at
once (bounded by the concurrency cap when one is given).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from assay.evals.serving._client import StreamClient, StreamResult
from assay.evals.serving._metrics import RequestTiming
from assay.evals.serving._target import token_counter
from assay.evals.serving._workloads import WorkItem, Workload
from assay.models.server_tokens import ServerTokenizer

__all__ = ["LevelRun", "LoadLevel", "arrival_gaps", "run_level"]


@dataclass(frozen=True)
class LoadLevel:
    """One load level. ``rate`` None means no arrival pacing (closed loop at ``concurrency``)."""

    name: str
    concurrency: int | None = None
    rate: float | None = None
    burstiness: float = 1.0
    num_requests: int | None = None
    duration_s: float | None = None
    warmup: int = 0

    def describe(self) -> str:
        parts = []
        if self.rate is not None:
            parts.append("rate=max" if math.isinf(self.rate) else f"rate={self.rate:.3g}/s")
            if not math.isinf(self.rate) and self.burstiness != 1.0:
                parts.append(f"burstiness={self.burstiness:g}")
        if self.concurrency is not None:
            parts.append(f"concurrency={self.concurrency}")
        return ", ".join(parts) or "unbounded"

    def to_json(self) -> dict[str, Any]:
        rate = None if self.rate is None else ("inf" if math.isinf(self.rate) else self.rate)
        return {
            "name": self.name,
            "concurrency": self.concurrency,
            "rate": rate,
            "burstiness": self.burstiness,
            "num_requests": self.num_requests,
            "duration_s": self.duration_s,
            "warmup": self.warmup,
        }


@dataclass
class LevelRun:
    level: LoadLevel
    timings: list[RequestTiming]
    wall_s: float


def arrival_gaps(rate: float, burstiness: float, rng: random.Random) -> Iterator[float]:
    """Seconds between consecutive arrivals (an endless generator)."""
    if math.isinf(rate):
        while True:
            yield 0.0
    shape = burstiness
    scale = 1.0 / (rate * burstiness)
    while True:
        yield rng.gammavariate(shape, scale)


def _body(item: WorkItem, model: str) -> dict[str, Any]:
    body = dict(item.body)
    body["model"] = model
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    return body


async def _timing(
    index: int,
    item: WorkItem,
    result: StreamResult,
    t0: float,
    counter: ServerTokenizer,
    workload: Workload,
    warmup: bool,
) -> RequestTiming:
    times = result.token_times
    ok = result.ok and bool(times)
    timing = RequestTiming(
        index=index,
        start_s=result.start - t0,
        ok=ok,
        ttft_s=(times[0] - result.start) if times else None,
        e2e_s=(result.end - result.start) if result.end is not None else None,
        itl_s=[b - a for a, b in itertools.pairwise(times)],
        timed_out=result.timed_out,
        error=result.error or (None if result.timed_out or times or not result.ok else "empty answer"),
        finish_reason=result.finish_reason,
        warmup=warmup,
        extra={"key": item.key, **item.extra},
    )
    if result.timed_out:
        timing.error = "timeout"
    if not ok:
        return timing
    usage = result.usage or {}
    if isinstance(usage.get("completion_tokens"), int) and isinstance(usage.get("prompt_tokens"), int):
        timing.output_tokens = usage["completion_tokens"]
        timing.input_tokens = usage["prompt_tokens"]
        timing.token_source = "server usage"
    elif not warmup:
        out = await counter.count(result.text)
        inp = await counter.count(item.prompt_text)
        if out is not None and inp is not None:
            timing.output_tokens, timing.input_tokens, timing.token_source = out, inp, counter.source
        else:
            timing.output_tokens = len(times)
            timing.token_source = "stream events (no usage, no tokenizer endpoint)"
    if not warmup:
        timing.extra.update(workload.score(item, result.text))
    return timing


async def run_level(
    client: StreamClient,
    model: str,
    workload: Workload,
    level: LoadLevel,
    *,
    seed: int = 0,
    request_timeout: float | None = 300.0,
    counter: ServerTokenizer | None = None,
    first_index: int = 0,
) -> LevelRun:
    """Run one level: warm-up requests (excluded), then the measured ones; returns their timings."""
    counter = counter or token_counter(client, model)
    cap = level.concurrency
    raw: list[tuple[int, WorkItem, StreamResult, bool]] = []

    async def send(index: int, item: WorkItem, warmup: bool, sem: asyncio.Semaphore | None) -> None:
        try:
            result = await client.request(item.path, _body(item, model), timeout=request_timeout)
        finally:
            if sem is not None:
                sem.release()
        raw.append((index, item, result, warmup))

    # warm-up: the level's own shape, on prompts the measured part does not start with
    if level.warmup:
        width = max(1, min(level.warmup, cap or level.warmup))
        wsem = asyncio.Semaphore(width)
        wtasks = []
        for k in range(level.warmup):
            await wsem.acquire()
            wtasks.append(asyncio.create_task(send(-1 - k, workload.item(-1 - k), True, wsem)))
        await asyncio.gather(*wtasks)

    sem = asyncio.Semaphore(cap) if cap else None
    rng = random.Random(f"{seed}:{level.name}")
    gaps = arrival_gaps(level.rate, level.burstiness, rng) if level.rate is not None else None
    limit = level.num_requests
    t0 = time.perf_counter()
    deadline = t0 + level.duration_s if level.duration_s else None
    next_at = t0
    tasks: list[asyncio.Task[None]] = []
    i = 0
    while limit is None or i < limit:
        if gaps is not None:
            if i:  # the first request goes at once, every later one a drawn gap after the one before
                next_at += next(gaps)
            delay = next_at - time.perf_counter()
            if deadline is not None and next_at >= deadline:
                break
            if delay > 0:
                await asyncio.sleep(delay)
        if sem is not None:
            await sem.acquire()
        if deadline is not None and time.perf_counter() >= deadline:
            if sem is not None:
                sem.release()
            break
        tasks.append(asyncio.create_task(send(first_index + i, workload.item(first_index + i), False, sem)))
        i += 1
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - t0
    timings = [
        await _timing(index, item, result, t0, counter, workload, warmup)
        for index, item, result, warmup in sorted(raw, key=lambda r: (not r[3], r[0] if not r[3] else -r[0]))
    ]
    return LevelRun(level, timings, wall)
