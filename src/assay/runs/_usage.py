"""Token usage and cost of model calls, added up per attempt, case and run (a record of every attempt; the
models report it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

CostSource = Literal["harness_counts", "api_equivalent", "metered"]


class Usage(BaseModel):
    """Tokens a call (or a sum of calls) used, and what it cost.

    ``cost_usd`` is ``None`` when the cost is unknown (for example a call that reached the model but
    reported no tokens); it is never silently 0.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = None
    cost_source: CostSource | None = None
    unpriced_calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        sources = {s for s in (self.cost_source, other.cost_source) if s is not None}
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            calls=self.calls + other.calls,
            cost_usd=sum(costs) if costs else None,
            cost_source=sources.pop() if len(sources) == 1 else (None if not sources else "harness_counts"),
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens
