"""Per-request timings and the figures of one load level, defined the way vLLM's serving benchmark does.

- TTFT: request sent -> first event carrying generated text.
- TPOT: (E2E - TTFT) / (output tokens - 1), per request with more than one output token.
- ITL: every gap between consecutive text-carrying events, pooled over requests.
- E2E: request sent -> last byte of the answer.
- Throughputs divide by the level's wall time (first measured send -> last measured answer).
- Goodput: requests per second that finished and met every SLO given with ``--slo``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from assay.errors import ConfigError

__all__ = [
    "LATENCIES",
    "STATS",
    "LevelFigures",
    "RequestTiming",
    "level_figures",
    "parse_slo",
]

#: latency families and the statistics reported for each (all in milliseconds)
LATENCIES = ("ttft", "tpot", "itl", "e2e")
STATS = ("mean", "median", "p90", "p99")

#: SLO keys -> RequestTiming attribute (seconds)
_SLO_KEYS = {"ttft": "ttft_s", "tpot": "tpot_s", "e2e": "e2e_s", "itl": "max_itl_s"}


@dataclass
class RequestTiming:
    """One measured request; times are seconds relative to the level's start."""

    index: int
    start_s: float
    ok: bool
    ttft_s: float | None = None
    e2e_s: float | None = None
    itl_s: list[float] = field(default_factory=list)
    input_tokens: int | None = None
    output_tokens: int | None = None
    token_source: str | None = None
    timed_out: bool = False
    error: str | None = None
    finish_reason: str | None = None
    warmup: bool = False
    #: workload-specific extras (e.g. the email id and whether the label was right)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tpot_s(self) -> float | None:
        if self.ttft_s is None or self.e2e_s is None or not self.output_tokens or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)

    @property
    def max_itl_s(self) -> float | None:
        return max(self.itl_s) if self.itl_s else None

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["tpot_s"] = self.tpot_s
        return doc


@dataclass
class LevelFigures:
    """The figures of one load level; latencies in ms, throughputs per second."""

    requests: int
    completed: int
    errors: int
    timeouts: int
    duration_s: float
    request_throughput: float | None
    output_throughput: float | None
    total_token_throughput: float | None
    goodput: float | None
    input_tokens: int
    output_tokens: int
    latency_ms: dict[str, dict[str, float | None]]
    token_sources: dict[str, int]

    def flat(self) -> dict[str, float]:
        """Name -> value for ``Outcome.metrics`` (None values are left out: unmeasured is not zero)."""
        out: dict[str, float] = {
            "requests": float(self.requests),
            "completed": float(self.completed),
            "errors": float(self.errors),
            "timeouts": float(self.timeouts),
            "duration_s": self.duration_s,
        }
        for name in ("request_throughput", "output_throughput", "total_token_throughput", "goodput"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        for family, stats in self.latency_ms.items():
            for stat, value in stats.items():
                if value is not None:
                    out[f"{family}_{stat}_ms"] = value
        return out

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parse_slo(text: str | None) -> dict[str, float]:
    """``ttft=500,tpot=50`` (milliseconds; ``ms``/``s`` suffixes allowed) -> key -> seconds."""
    if not text:
        return {}
    slo: dict[str, float] = {}
    for item in text.split(","):
        key, sep, value = item.strip().partition("=")
        key = key.strip().lower()
        if not sep or key not in _SLO_KEYS:
            raise ConfigError(
                f"--slo: {item.strip()!r} must be KEY=MS with KEY one of {', '.join(_SLO_KEYS)}"
            )
        value = value.strip().lower()
        scale = 1e-3
        if value.endswith("ms"):
            value = value[:-2]
        elif value.endswith("s"):
            value, scale = value[:-1], 1.0
        try:
            number = float(value)
        except ValueError:
            raise ConfigError(f"--slo: {item.strip()!r}: {value!r} is not a number") from None
        if not number > 0:
            raise ConfigError(f"--slo: {key} must be positive")
        slo[key] = number * scale
    return slo


def _stats_ms(values: list[float]) -> dict[str, float | None]:
    if not values:
        return dict.fromkeys(STATS)
    arr = np.asarray(values, dtype=float) * 1000.0
    return {
        "mean": float(arr.mean()),
        "median": float(np.median(arr)),
        "p90": float(np.percentile(arr, 90)),
        "p99": float(np.percentile(arr, 99)),
    }


def meets_slo(timing: RequestTiming, slo: dict[str, float]) -> bool:
    if not timing.ok:
        return False
    for key, limit in slo.items():
        value = getattr(timing, _SLO_KEYS[key])
        if value is None or value > limit:
            # a request with no TPOT (one output token) cannot break a TPOT SLO
            if value is None and key in ("tpot", "itl"):
                continue
            return False
    return True


def level_figures(timings: list[RequestTiming], slo: dict[str, float] | None = None) -> LevelFigures:
    """Fold the measured (non-warm-up) requests of one level into its figures."""
    measured = [t for t in timings if not t.warmup]
    done = [t for t in measured if t.ok]
    if measured:
        begin = min(t.start_s for t in measured)
        ends = [t.start_s + t.e2e_s for t in measured if t.e2e_s is not None]
        duration = (max(ends) - begin) if ends else 0.0
    else:
        duration = 0.0
    in_tok = sum(t.input_tokens or 0 for t in done)
    out_tok = sum(t.output_tokens or 0 for t in done)

    def per_s(count: float) -> float | None:
        return count / duration if duration > 0 else None

    goodput = None
    if slo:
        goodput = per_s(sum(1 for t in done if meets_slo(t, slo)))
    sources: dict[str, int] = {}
    for t in done:
        key = t.token_source or "unknown"
        sources[key] = sources.get(key, 0) + 1
    latency = {
        "ttft": _stats_ms([t.ttft_s for t in done if t.ttft_s is not None]),
        "tpot": _stats_ms([v for t in done if (v := t.tpot_s) is not None]),
        "itl": _stats_ms([gap for t in done for gap in t.itl_s]),
        "e2e": _stats_ms([t.e2e_s for t in done if t.e2e_s is not None]),
    }
    return LevelFigures(
        requests=len(measured),
        completed=len(done),
        errors=sum(1 for t in measured if not t.ok and not t.timed_out),
        timeouts=sum(1 for t in measured if t.timed_out),
        duration_s=duration,
        request_throughput=per_s(len(done)),
        output_throughput=per_s(out_tok),
        total_token_throughput=per_s(in_tok + out_tok),
        goodput=goodput,
        input_tokens=in_tok,
        output_tokens=out_tok,
        latency_ms=latency,
        token_sources=sources,
    )
