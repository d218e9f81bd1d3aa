from __future__ import annotations

import math
import random
import statistics

import pytest

from assay.errors import ConfigError
from assay.evals.serving._levels import build_levels, saturated, sustained_rates, sweep_rate
from assay.evals.serving._load import arrival_gaps
from assay.evals.serving._metrics import RequestTiming
from assay.evals.serving._options import ServingOptions


def test_concurrency_levels_default_to_the_workload_size() -> None:
    levels = build_levels(ServingOptions(**{"concurrency": "1,4"}), natural_size=53)
    assert [(lv.name, lv.concurrency, lv.num_requests) for lv in levels] == [("c1", 1, 53), ("c4", 4, 53)]
    assert build_levels(ServingOptions(**{}), None)[0].num_requests == 100


def test_rate_levels_and_sweep() -> None:
    levels = build_levels(
        ServingOptions(**{"request_rate": "2,inf", "concurrency": "8", "burstiness": 0.5}), 10
    )
    assert [lv.name for lv in levels] == ["rate-2", "rate-inf"]
    assert levels[0].rate == 2 and math.isinf(levels[1].rate) and levels[0].concurrency == 8
    sweep = build_levels(ServingOptions(**{"sweep": True, "sweep_steps": 3, "duration": 5.0}), 10)
    assert [lv.name for lv in sweep] == ["sync", "max", "sweep-1", "sweep-2", "sweep-3"]
    assert sweep[0].concurrency == 1 and math.isinf(sweep[1].rate)
    assert sweep[0].duration_s == 5.0 and sweep[0].num_requests is None


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        ({"concurrency": "0"}, "--concurrency"),
        ({"concurrency": "a"}, "--concurrency"),
        ({"request_rate": "-1"}, "--request-rate"),
        ({"request_rate": "1,2", "concurrency": "1,2"}, "--concurrency"),
        ({"sweep": True, "request_rate": "1"}, "--request-rate"),
        ({"burstiness": 0}, "--burstiness"),
        ({"num_requests": 0}, "--num-requests"),
        ({"duration": -1.0}, "--duration"),
        ({"request_rate": "inf", "duration": 2.0}, "--concurrency"),
    ],
)
def test_bad_load_flags_name_the_flag(options: dict, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        build_levels(ServingOptions(**options), 10)


def test_sweep_rates_lie_strictly_between_sync_and_max() -> None:
    rates = [sweep_rate(k, 3, 2.0, 10.0) for k in (1, 2, 3)]
    assert rates == [4.0, 6.0, 8.0]
    assert sweep_rate(1, 3, 5.0, 5.0) is None and sweep_rate(1, 3, 5.0, 5.4) is None
    assert saturated(10.0, 8.0) and not saturated(10.0, 9.5) and saturated(10.0, None)


@pytest.mark.parametrize("burstiness", [1.0, 0.25, 4.0])
def test_arrival_gaps_have_the_right_mean_and_burstiness(burstiness: float) -> None:
    gen = arrival_gaps(20.0, burstiness, random.Random(1))
    gaps = [next(gen) for _ in range(20_000)]
    mean = statistics.fmean(gaps)
    cv = statistics.pstdev(gaps) / mean
    assert mean == pytest.approx(1 / 20, rel=0.03)
    # gamma(shape=k): coefficient of variation 1/sqrt(k); Poisson (k=1) has CV 1
    assert cv == pytest.approx(1 / math.sqrt(burstiness), rel=0.05)


def _timing(i: int, start: float, e2e: float) -> RequestTiming:
    return RequestTiming(index=i, start_s=start, ok=True, ttft_s=e2e / 2, e2e_s=e2e)


def test_a_server_that_keeps_up_is_not_saturated_despite_the_drain() -> None:
    # 10 arrivals 0.1 s apart, each answered in 0.5 s: the level lasts 1.4 s for 0.9 s of sending
    timings = [_timing(i, 0.1 * i, 0.5) for i in range(10)]
    offered, served = sustained_rates(timings)
    assert offered == pytest.approx(10.0) and served == pytest.approx(10.0)
    assert not saturated(offered, served)


def test_a_server_falling_behind_is_saturated() -> None:
    # arrivals every 0.1 s, but it finishes one request every 0.2 s (a growing queue)
    timings = [_timing(i, 0.1 * i, 0.2 * (i + 1) - 0.1 * i) for i in range(10)]
    offered, served = sustained_rates(timings)
    assert offered == pytest.approx(10.0)
    assert served < 0.85 * offered and saturated(offered, served)
