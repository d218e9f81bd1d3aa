"""``assay health`` over the registry: the generic health report, with the runs' benchmark's CI tier moves."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from assay.errors import ConfigError
from assay.evals._registry import get_benchmark
from assay.gate import HealthReport, MoveAdvisor
from assay.gate import health as gate_health


def move_advisor(benchmark: str) -> MoveAdvisor | None:
    """The registered benchmark's move advisor (None: it has no CI tiers, or is not registered here)."""
    try:
        cls = get_benchmark(benchmark)
    except ConfigError:
        return None
    return cls.move_advisor()


def health(
    run_dirs: Sequence[Path | str],
    out: Path | str | None = None,
    *,
    strong: Sequence[Path | str] = (),
    weak: Sequence[Path | str] = (),
    tiers: Path | str | None = None,
) -> HealthReport:
    """:func:`assay.gate.health` with the move suggestions of the runs' benchmark (its CI tiers)."""
    return gate_health(run_dirs, out, strong=strong, weak=weak, tiers=tiers, advisor_for=move_advisor)
