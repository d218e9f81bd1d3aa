"""Plots for the reports: PNG bytes drawn with matplotlib (Agg), saved next to the report and inlined in HTML.

A benchmark returns its own plots from ``Benchmark.report_plots``; the shared code adds the per-category
pass rate of pass/fail benchmarks and writes, links and inlines them all the same way.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.runs import Scorecard

__all__ = ["Plot", "ecdf_plot", "finish", "pass_rate_bars", "pass_rate_plot", "save_plots", "subplots"]

PLOT_DPI = 90


@dataclass(frozen=True)
class Plot:
    """One finished plot: ``file`` is its name in the run directory (``*.png``)."""

    file: str
    title: str
    png: bytes


def subplots(size: tuple[float, float] = (6.5, 3.6), ncols: int = 1) -> tuple[Any, Any]:
    """A new figure (Agg backend) and its axes; hand it to ``finish`` when drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=size)


def finish(fig: Any, file: str, title: str) -> Plot:
    """The figure as a PNG ``Plot``; the figure is closed."""
    import matplotlib.pyplot as plt

    try:
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=PLOT_DPI)
    finally:
        plt.close(fig)
    return Plot(file=file, title=title, png=buf.getvalue())


def ecdf_plot(file: str, title: str, series: Mapping[str, Sequence[float]], xlabel: str) -> Plot | None:
    """An empirical CDF per named series (e.g. latencies per load level); None when every series is empty."""
    series = {k: sorted(v) for k, v in series.items() if v}
    if not series:
        return None
    fig, ax = subplots()
    for name, vals in series.items():
        ax.step(vals, [(i + 1) / len(vals) for i in range(len(vals))], where="post", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of requests")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return finish(fig, file, title)


def pass_rate_bars(file: str, title: str, groups: Mapping[str, tuple[int, int]]) -> Plot | None:
    """Pass rate per group, ``groups[name] = (passed, measured)``, with 95% Wilson intervals and n.

    None with fewer than two measured groups (one bar says no more than the summary line).
    """
    from assay.intervals import wilson_interval

    groups = {k: v for k, v in groups.items() if v[1] > 0}
    if len(groups) < 2:
        return None
    names = list(groups)
    rates, lows, highs = [], [], []
    for n in names:
        passed, measured = groups[n]
        lo, hi = wilson_interval(passed, measured)
        rates.append(passed / measured)
        lows.append(max(0.0, rates[-1] - lo))
        highs.append(max(0.0, hi - rates[-1]))
    fig, ax = subplots(size=(max(5.0, 0.7 * len(names) + 2), 3.4))
    ax.bar(names, rates, yerr=[lows, highs], capsize=4, color="#4c72b0")
    for i, n in enumerate(names):
        ax.annotate(f"n={groups[n][1]}", (i, 0.02), ha="center", fontsize=7, color="w")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("pass rate")
    ax.set_title(title, fontsize=9)
    ax.tick_params(axis="x", labelrotation=30)
    return finish(fig, file, title)


def pass_rate_plot(card: Scorecard) -> Plot | None:
    """Pass rate per category of a pass/fail benchmark (95% Wilson intervals)."""
    groups = {}
    for cat, v in card.summary.by_category.items():
        if v.get("pass_rate") is not None:
            measured = int(v["measured"] or 0)
            groups[cat] = (round(float(v["pass_rate"] or 0.0) * measured), measured)
    return pass_rate_bars("pass_rate_by_category.png", "pass rate by category (95% Wilson interval)", groups)


def save_plots(run_dir: Path, plots: Sequence[Plot]) -> list[Plot]:
    """Write each plot into ``run_dir`` (PNG files hold no text to scrub); returns those written."""
    for p in plots:
        if "/" in p.file or not p.file.endswith(".png"):
            raise ValueError(f"plot file name {p.file!r}: expected a bare *.png name")
        (run_dir / p.file).write_bytes(p.png)
    return list(plots)
