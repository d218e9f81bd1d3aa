from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.evals.serving import RequestTiming, level_figures, parse_slo


def _t(i: int, start: float, ttft: float, e2e: float, out: int, inp: int = 10, **kw) -> RequestTiming:
    gaps = [(e2e - ttft) / (out - 1)] * (out - 1) if out > 1 else []
    return RequestTiming(
        index=i,
        start_s=start,
        ok=True,
        ttft_s=ttft,
        e2e_s=e2e,
        itl_s=gaps,
        input_tokens=inp,
        output_tokens=out,
        token_source="server usage",
        **kw,
    )


def test_tpot_is_decode_time_over_output_tokens_minus_one() -> None:
    t = _t(0, 0.0, 0.1, 0.5, 5)
    assert t.tpot_s == pytest.approx(0.1)
    assert _t(1, 0.0, 0.1, 0.1, 1).tpot_s is None


def test_level_figures_throughput_percentiles_and_goodput() -> None:
    timings = [
        _t(0, 0.0, 0.10, 1.0, 10),
        _t(1, 0.5, 0.20, 1.5, 10),  # ends at 2.0: the level lasts 2 s
        _t(2, 0.2, 0.90, 1.0, 10),  # breaks the TTFT SLO
        RequestTiming(index=3, start_s=0.3, ok=False, e2e_s=0.1, error="HTTP 500: boom"),
        RequestTiming(index=4, start_s=0.4, ok=False, e2e_s=1.0, timed_out=True, error="timeout"),
        _t(-1, -5.0, 3.0, 9.0, 10, warmup=True),  # warm-up: excluded from everything
    ]
    fig = level_figures(timings, parse_slo("ttft=500,tpot=200"))
    assert (fig.requests, fig.completed, fig.errors, fig.timeouts) == (5, 3, 1, 1)
    assert fig.duration_s == pytest.approx(2.0)
    assert fig.request_throughput == pytest.approx(1.5)
    assert fig.output_throughput == pytest.approx(15.0)
    assert fig.total_token_throughput == pytest.approx((30 + 30) / 2.0)
    assert fig.goodput == pytest.approx(1.0)
    assert fig.latency_ms["ttft"]["median"] == pytest.approx(200.0)
    assert fig.latency_ms["ttft"]["mean"] == pytest.approx(400.0)
    assert fig.latency_ms["e2e"]["p90"] == pytest.approx(1400.0)
    assert fig.latency_ms["itl"]["median"] == pytest.approx(100.0)
    flat = fig.flat()
    assert flat["errors"] == 1 and flat["timeouts"] == 1 and "goodput" in flat
    assert fig.token_sources == {"server usage": 3}


def test_nothing_measured_is_not_zero() -> None:
    fig = level_figures([RequestTiming(index=0, start_s=0.0, ok=False, error="connect failed")])
    assert fig.request_throughput is None
    flat = fig.flat()
    assert "request_throughput" not in flat and "ttft_median_ms" not in flat
    assert flat["errors"] == 1


def test_parse_slo_units_and_errors() -> None:
    assert parse_slo("ttft=500,tpot=50ms,e2e=2s") == {"ttft": 0.5, "tpot": 0.05, "e2e": 2.0}
    assert parse_slo(None) == {}
    with pytest.raises(ConfigError, match="--slo"):
        parse_slo("latency=5")
    with pytest.raises(ConfigError, match="--slo"):
        parse_slo("ttft=fast")
    with pytest.raises(ConfigError, match="--slo"):
        parse_slo("ttft=-1")
