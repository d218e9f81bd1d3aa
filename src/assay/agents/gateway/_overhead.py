"""What the gateway costs per model call: time inside it beyond the upstream's, and the loopback hop.

``measure_overhead(upstream, calls=20)`` starts a gateway, makes the calls from a real HTTP client and returns
per-call figures; ``summarize_overhead(records)`` folds the call log of any run (e.g. an agent's) the same way.
``benchmarks/agent_overhead.py`` prints both in ms and as a share of the model call.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from assay.agents.gateway._log import CallRecord
from assay.agents.gateway.server import Gateway
from assay.models import ChatModel

__all__ = ["CallOverhead", "OverheadSummary", "measure_overhead", "summarize_overhead"]


@dataclass
class CallOverhead:
    """One call: the client's wall time, the gateway's, the upstream's, and what is left for each."""

    upstream_ms: float
    #: inside the gateway beyond the upstream (translation, SSE framing, logging)
    gateway_ms: float
    #: request arrival to last byte, inside the gateway
    latency_ms: float
    #: as the client saw it (None for records read from a log, where no client clock exists)
    client_ms: float | None = None

    @property
    def hop_ms(self) -> float | None:
        """The HTTP hop on loopback (connection, parsing): client time minus the gateway's own."""
        return None if self.client_ms is None else max(0.0, self.client_ms - self.latency_ms)

    @property
    def overhead_ms(self) -> float:
        """Everything the gateway adds to the model call: its own time plus the hop when known."""
        return self.gateway_ms + (self.hop_ms or 0.0)


@dataclass
class OverheadSummary:
    calls: list[CallOverhead] = field(default_factory=list)

    def _median(self, values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    @property
    def upstream_ms(self) -> float | None:
        return self._median([c.upstream_ms for c in self.calls])

    @property
    def gateway_ms(self) -> float | None:
        return self._median([c.gateway_ms for c in self.calls])

    @property
    def overhead_ms(self) -> float | None:
        return self._median([c.overhead_ms for c in self.calls])

    @property
    def hop_ms(self) -> float | None:
        return self._median([h for c in self.calls if (h := c.hop_ms) is not None])

    @property
    def share(self) -> float | None:
        """Median overhead as a fraction of the median upstream call."""
        up, over = self.upstream_ms, self.overhead_ms
        return None if not up or over is None else over / up

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": len(self.calls),
            "upstream_ms_median": self.upstream_ms,
            "gateway_ms_median": self.gateway_ms,
            "hop_ms_median": self.hop_ms,
            "overhead_ms_median": self.overhead_ms,
            "overhead_share": self.share,
        }


def summarize_overhead(records: list[CallRecord]) -> OverheadSummary:
    """The overhead of the answered calls of a call log."""
    return OverheadSummary(
        [CallOverhead(r.upstream_ms, r.gateway_ms, r.latency_ms) for r in records if r.status == "ok"]
    )


def _request(
    front: str, prompt: str, max_tokens: int, stream: bool
) -> tuple[str, dict[str, Any], dict[str, str]]:
    messages = [{"role": "user", "content": prompt}]
    body: dict[str, Any] = {
        "model": "assay",
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": stream,
    }
    if front == "anthropic":
        return "/v1/messages", body, {"anthropic-version": "2023-06-01", "x-api-key": "unused"}
    return "/v1/chat/completions", body, {}


def measure_overhead(
    upstream: str | ChatModel | Gateway,
    *,
    calls: int = 20,
    front: Literal["openai", "anthropic"] = "openai",
    stream: bool = False,
    prompt: str = "Say hello in one short sentence.",
    max_tokens: int = 16,
    warmup: int = 1,
) -> OverheadSummary:
    """Make ``calls`` calls through a gateway (started here unless one is given) and time each from the client.

    ``warmup`` calls first are left out (a local model's first call starts its server)."""
    own = not isinstance(upstream, Gateway)
    gateway = Gateway(upstream) if not isinstance(upstream, Gateway) else upstream
    if own:
        gateway.start()
    try:
        path, body, headers = _request(front, prompt, max_tokens, stream)
        out = OverheadSummary()
        with httpx.Client(base_url=gateway.url, headers=headers, timeout=300.0) as client:
            for i in range(warmup + calls):
                mark = gateway.mark()
                t0 = time.perf_counter()
                if stream:
                    with client.stream("POST", path, json=body) as response:
                        response.read()
                else:
                    response = client.post(path, json=body)
                client_ms = (time.perf_counter() - t0) * 1000.0
                if response.status_code != 200:
                    raise RuntimeError(f"gateway answered HTTP {response.status_code}: {response.text[:300]}")
                (record,) = gateway.calls(since=mark)
                if i >= warmup:
                    out.calls.append(
                        CallOverhead(record.upstream_ms, record.gateway_ms, record.latency_ms, client_ms)
                    )
        return out
    finally:
        if own:
            gateway.stop()
