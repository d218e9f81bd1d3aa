"""Against a stub with known delays, TTFT, ITL and E2E are measured within 2 ms.

The stub runs in its own process and records when it really wrote each token. On a shared 2-core machine
under load either process is sometimes scheduled milliseconds late, which no client can measure around; so
a round that misses is run again, at most 5 rounds, and one round must land every median within 2 ms (a
systematic error, such as a stamp taken at the wrong moment, fails every round).
"""

from __future__ import annotations

import statistics

import pytest

from assay.evals.serving import (
    LengthSpec,
    LoadLevel,
    StreamClient,
    SyntheticWorkload,
    level_figures,
    run_level,
)

TTFT, ITL, TOKENS = 0.050, 0.010, 8
TOL_MS = 2.0


def _workload() -> SyntheticWorkload:
    return SyntheticWorkload(
        LengthSpec.parse("8", "--input-len"), LengthSpec.parse(str(TOKENS), "--output-len")
    )


def _stub_lateness_ms(records, seen: int) -> float:
    late = []
    for rec in records[seen:]:
        late += [(t - rec.arrived - TTFT - ITL * i) * 1000 for i, t in enumerate(rec.token_times)]
    return statistics.median(late)


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_ttft_itl_e2e_within_2ms_of_known_delays(stub_factory, concurrency: int) -> None:
    stub = stub_factory(process=True, ttft_s=TTFT, itl_s=ITL, tokens=64)
    client = StreamClient(stub.base_url + "/v1")
    rounds: list[str] = []
    for _round in range(5):
        seen = len(stub.fetch_records())
        level = LoadLevel(f"c{concurrency}", concurrency=concurrency, num_requests=8, warmup=1)
        run = await run_level(client, "stub", _workload(), level)
        stub_late = _stub_lateness_ms(stub.fetch_records(), seen)
        measured = [t for t in run.timings if not t.warmup]
        assert len(measured) == 8 and all(t.ok for t in measured)
        assert all(t.output_tokens == TOKENS and t.token_source == "server usage" for t in measured)
        assert all(len(t.itl_s) == TOKENS - 1 for t in measured)
        lat = level_figures(run.timings).latency_ms
        errors_ms = {
            "ttft": lat["ttft"]["median"] - TTFT * 1000,
            "itl": lat["itl"]["median"] - ITL * 1000,
            "tpot": lat["tpot"]["median"] - ITL * 1000,
            "e2e": lat["e2e"]["median"] - (TTFT + ITL * (TOKENS - 1)) * 1000,
        }
        rounds.append(
            f"stub late {stub_late:.2f} ms, errors { ({k: round(v, 2) for k, v in errors_ms.items()}) }"
        )
        if all(abs(v) <= TOL_MS for v in errors_ms.values()):
            break
    await client.aclose()
    assert all(abs(v) <= TOL_MS for v in errors_ms.values()), "\n".join(rounds)


async def test_measured_times_match_the_stubs_own_send_times(stub_factory) -> None:
    stub = stub_factory(process=True, ttft_s=0.030, itl_s=0.004, tokens=6)
    client = StreamClient(stub.base_url)
    rounds: list[list[float]] = []
    for r in range(5):
        run = await run_level(
            client, "stub", _workload(), LoadLevel("c2", concurrency=2, num_requests=6), seed=r
        )
        by_prompt = {rec.prompt: rec for rec in stub.fetch_records()}
        diffs_first, diffs_gap, diffs_end = [], [], []
        for t in run.timings:
            # the stub saw the same prompt: compare its token write times with the client's stamps
            rec = by_prompt[_workload().item(t.index).prompt_text]
            diffs_first.append(t.ttft_s - (rec.token_times[0] - rec.arrived))
            diffs_end.append(t.e2e_s - (rec.token_times[-1] - rec.arrived))
            server_gaps = [b - a for a, b in zip(rec.token_times, rec.token_times[1:], strict=False)]
            diffs_gap += [c - s for c, s in zip(t.itl_s, server_gaps, strict=True)]
        rounds.append([statistics.median(d) * 1000 for d in (diffs_first, diffs_gap, diffs_end)])
        if all(abs(m) <= TOL_MS for m in rounds[-1]):
            break
    await client.aclose()
    assert all(abs(m) <= TOL_MS for m in rounds[-1]), rounds
