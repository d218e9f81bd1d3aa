"""The gateway's own cost per call, as ``benchmarks/agent_overhead.py`` reads it: upstream time, time inside
the gateway beyond it, and the loopback hop, from real calls of a real client against a scripted upstream
with a known latency."""

from __future__ import annotations

import statistics

import pytest
from gateway_fakes import closed_port

from assay.agents.gateway import Gateway, measure_overhead, summarize_overhead
from assay.models.scripted import ScriptedModel


@pytest.mark.parametrize(("front", "stream"), [("openai", False), ("openai", True), ("anthropic", True)])
def test_measured_overhead_splits_each_call(front: str, stream: bool) -> None:
    up = ScriptedModel({"default": {"text": "a few words back", "delay_s": 0.03}})
    summary = measure_overhead(up, calls=4, front=front, stream=stream)  # type: ignore[arg-type]
    assert len(summary.calls) == 4 and len(up.calls) == 5  # one warm-up call left out
    for call in summary.calls:
        assert call.upstream_ms >= 30.0
        assert call.client_ms is not None and call.client_ms >= call.latency_ms >= call.upstream_ms
        assert call.gateway_ms == pytest.approx(call.latency_ms - call.upstream_ms, abs=0.01)
        assert call.overhead_ms == pytest.approx(call.gateway_ms + (call.hop_ms or 0.0))
    figures = summary.as_dict()
    assert figures["calls"] == 4
    assert figures["overhead_share"] == pytest.approx(summary.overhead_ms / summary.upstream_ms)
    # a loopback hop plus translation stays far below the model call (it was 40 ms a call with Nagle on)
    assert summary.overhead_ms < 15.0


def test_summary_of_a_call_log_counts_answered_calls_only() -> None:
    with Gateway(ScriptedModel({"default": {"text": "ok", "delay_s": 0.01}})) as gw:
        measure_overhead(gw, calls=2, warmup=0)
        answered = gw.calls()
    with Gateway(
        f"openai-compat/m@http://127.0.0.1:{closed_port()}/v1", model_options={"max_retries": 0}
    ) as down:
        with pytest.raises(RuntimeError, match="HTTP 503"):
            measure_overhead(down, calls=1, warmup=0)
        failed = down.calls()
    summary = summarize_overhead(answered + failed)
    assert len(summary.calls) == 2 and all(c.client_ms is None and c.hop_ms is None for c in summary.calls)
    assert summary.upstream_ms is not None and summary.upstream_ms >= 10.0
    assert summary.gateway_ms == pytest.approx(statistics.median(r.gateway_ms for r in answered))
