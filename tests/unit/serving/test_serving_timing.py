"""Against a stub with known delays, TTFT, ITL and E2E are measured within 2 ms."""

from __future__ import annotations

import statistics

import pytest

from assay.evals.serving import LengthSpec, LoadLevel, StreamClient, SyntheticWorkload, level_figures, run_level

TTFT, ITL, TOKENS = 0.050, 0.010, 8
TOL_MS = 2.0


def _workload() -> SyntheticWorkload:
    return SyntheticWorkload(LengthSpec.parse("8", "--input-len"), LengthSpec.parse(str(TOKENS), "--output-len"))


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_ttft_itl_e2e_within_2ms_of_known_delays(stub_factory, concurrency: int) -> None:
    stub = stub_factory(process=True, ttft_s=TTFT, itl_s=ITL, tokens=64)
    client = StreamClient(stub.base_url + "/v1")
    level = LoadLevel(f"c{concurrency}", concurrency=concurrency, num_requests=8, warmup=1)
    run = await run_level(client, "stub", _workload(), level)
    await client.aclose()
    measured = [t for t in run.timings if not t.warmup]
    assert len(measured) == 8 and all(t.ok for t in measured)
    assert all(t.output_tokens == TOKENS and t.token_source == "server usage" for t in measured)

    fig = level_figures(run.timings)
    lat = fig.latency_ms
    expected_e2e = (TTFT + ITL * (TOKENS - 1)) * 1000
    assert lat["ttft"]["median"] == pytest.approx(TTFT * 1000, abs=TOL_MS)
    assert lat["itl"]["median"] == pytest.approx(ITL * 1000, abs=TOL_MS)
    assert lat["e2e"]["median"] == pytest.approx(expected_e2e, abs=TOL_MS)
    assert lat["tpot"]["median"] == pytest.approx(ITL * 1000, abs=TOL_MS)
    assert all(len(t.itl_s) == TOKENS - 1 for t in measured)


async def test_measured_times_match_the_stubs_own_send_times(stub_factory) -> None:
    stub = stub_factory(process=True, ttft_s=0.030, itl_s=0.004, tokens=6)
    client = StreamClient(stub.base_url)
    run = await run_level(client, "stub", _workload(), LoadLevel("c2", concurrency=2, num_requests=6))
    await client.aclose()
    by_prompt = {r.prompt: r for r in stub.fetch_records()}
    diffs_first, diffs_gap = [], []
    for t in run.timings:
        # the stub saw the same prompt: compare its token write times with the client's stamps
        rec = by_prompt[_workload().item(t.index).prompt_text]
        diffs_first.append(t.ttft_s - (rec.token_times[0] - rec.arrived))
        server_gaps = [b - a for a, b in zip(rec.token_times, rec.token_times[1:], strict=False)]
        diffs_gap += [c - s for c, s in zip(t.itl_s, server_gaps, strict=True)]
    assert statistics.median(diffs_first) * 1000 == pytest.approx(0, abs=TOL_MS)
    assert statistics.median(diffs_gap) * 1000 == pytest.approx(0, abs=TOL_MS)
