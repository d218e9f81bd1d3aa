"""What a run can show: the smallest change of a proportion its items can detect, and the items a change needs.

Both use the gate's own noise rule for a proportion (:func:`assay.stats.tolerance.binomial_tolerance` at
:func:`~assay.gate._metrics.metric_alpha`) between two runs of the same size and rate. Unpaired, so an upper
bound: a comparison paired by item is tighter where items flip together.
"""

from __future__ import annotations

from assay.gate._metrics import metric_alpha
from assay.runs import Scorecard
from assay.stats.tolerance import binomial_tolerance

#: the most items :func:`items_to_detect` looks for
MAX_ITEMS = 10_000_000


def detectable_change(rate: float, items: int) -> float | None:
    """The smallest change of a proportion at ``rate`` over ``items`` items that the gate calls a change."""
    if items < 1 or not 0.0 <= rate <= 1.0:
        return None
    return binomial_tolerance(rate, items, rate, items, metric_alpha(1))


def items_to_detect(rate: float, change: float) -> int | None:
    """How many items a proportion at ``rate`` needs for the gate to see a change of ``change`` (None: more
    than :data:`MAX_ITEMS`, or a change no count of items can show)."""
    if change <= 0.0 or not 0.0 <= rate <= 1.0:
        return None
    lo, hi = 1, 1
    while (detectable_change(rate, hi) or 1.0) > change:
        if hi >= MAX_ITEMS:
            return None
        lo, hi = hi, min(hi * 2, MAX_ITEMS)
    while lo < hi:  # the smallest n whose detectable change is at most ``change``
        mid = (lo + hi) // 2
        if (detectable_change(rate, mid) or 1.0) <= change:
            hi = mid
        else:
            lo = mid + 1
    return hi


def detect_line(name: str, rate: float | None, items: int, change: float | None = None) -> str | None:
    """One report line: the smallest change ``name`` can show with its items, and the items ``change`` needs."""
    if rate is None or (smallest := detectable_change(rate, items)) is None:
        return None
    line = (
        f"{name}: {rate:.3g} over {items} items; the smallest change the gate can detect is ±{smallest:.3f}"
    )
    if change is not None:
        need = items_to_detect(rate, change)
        line += (
            f"; a change of {change:g} needs about {need} items"
            if need
            else f"; a change of {change:g} cannot be seen"
        )
    return line


def detect_lines(card: Scorecard, change: float | None = None) -> list[str]:
    """What a run can show, one line per proportion the gate holds: the pass rate over the measured cases (the
    items: repeats of one case are not independent), then each gated proportion metric over its ``n`` items;
    with ``change`` (``--detect``) each says how many items that change needs. Empty when nothing is measured."""
    s = card.summary
    cases = sum(1 for c in card.cases if c.measured)
    found = [detect_line("pass rate", s.pass_rate, cases, change)]
    for name, mv in sorted(s.metrics.items()):
        if mv.kind == "proportion" and mv.gated:
            found.append(detect_line(name, mv.value, mv.n, change))
    return [line for line in found if line]
