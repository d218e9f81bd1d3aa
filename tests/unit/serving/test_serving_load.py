from __future__ import annotations

import math

import pytest

from assay.evals.serving import (
    LengthSpec,
    LoadLevel,
    StreamClient,
    SyntheticWorkload,
    level_figures,
    run_level,
)

WORK = SyntheticWorkload(LengthSpec.parse("4", "x"), LengthSpec.parse("4", "x"))


async def test_warmup_requests_are_sent_but_excluded(stub_factory) -> None:
    stub = stub_factory(tokens=4)
    client = StreamClient(stub.base_url)
    run = await run_level(client, "stub", WORK, LoadLevel("c2", concurrency=2, num_requests=5, warmup=3))
    await client.aclose()
    assert len(stub.records) == 8
    assert sum(t.warmup for t in run.timings) == 3
    fig = level_figures(run.timings)
    assert fig.requests == 5 and fig.completed == 5


async def test_request_rate_paces_arrivals(stub_factory) -> None:
    stub = stub_factory(tokens=2)
    client = StreamClient(stub.base_url)
    level = LoadLevel("rate-40", rate=40.0, burstiness=4.0, num_requests=40)
    run = await run_level(client, "stub", WORK, level, seed=3)
    await client.aclose()
    starts = sorted(t.start_s for t in run.timings)
    # 39 gaps of mean 25 ms (gamma, shape 4): the sends span about a second
    assert starts[-1] - starts[0] == pytest.approx(39 / 40, rel=0.35)


async def test_infinite_rate_with_cap_and_duration(stub_factory) -> None:
    stub = stub_factory(ttft_s=0.02, itl_s=0.0, tokens=1)
    client = StreamClient(stub.base_url)
    level = LoadLevel("rate-inf", concurrency=3, rate=math.inf, duration_s=0.3)
    run = await run_level(client, "stub", WORK, level)
    await client.aclose()
    fig = level_figures(run.timings)
    # closed loop of 3 requests of ~20 ms for 0.3 s: about 45 requests, never more than 3 in flight
    assert 15 <= fig.requests <= 50
    assert fig.completed == fig.requests and fig.errors == 0


async def test_errors_and_timeouts_are_counted(stub_factory) -> None:
    failing = stub_factory(fail=True)
    client = StreamClient(failing.base_url)
    run = await run_level(client, "stub", WORK, LoadLevel("c1", concurrency=1, num_requests=3))
    await client.aclose()
    fig = level_figures(run.timings)
    assert (fig.errors, fig.completed) == (3, 0)
    assert "HTTP 500" in run.timings[0].error

    slow = stub_factory(ttft_s=2.0, tokens=2)
    client = StreamClient(slow.base_url)
    run = await run_level(
        client, "stub", WORK, LoadLevel("c2", concurrency=2, num_requests=2), request_timeout=0.1
    )
    await client.aclose()
    fig = level_figures(run.timings)
    assert (fig.timeouts, fig.errors, fig.completed) == (2, 0, 0)


async def test_without_usage_tokens_come_from_stream_events_and_say_so(stub_factory) -> None:
    stub = stub_factory(usage=False, flavor="plain", tokens=5)
    client = StreamClient(stub.base_url)
    run = await run_level(client, "stub", WORK, LoadLevel("c1", concurrency=1, num_requests=2))
    await client.aclose()
    assert all(t.output_tokens == 4 for t in run.timings)  # max_tokens=4 from the workload
    assert all(t.token_source.startswith("stream events") for t in run.timings)
