"""Reports: markdown and self-contained HTML with plots, and why each failing case failed."""

from __future__ import annotations

from pathlib import Path

from assay._util import Scrubber, write_scrubbed
from assay.report._failures import Failures, collect_failures
from assay.report._html import markdown_to_html, render_html
from assay.report._markdown import render_markdown
from assay.report._plots import Plot, pass_rate_plot, save_plots
from assay.report._source import ReportedBenchmark
from assay.runs._journal import latest_attempts, read_journal
from assay.runs._records import Scorecard
from assay.runs._rundir import JOURNAL, REPORT_HTML, REPORT_MD

__all__ = [
    "Failures",
    "Plot",
    "ReportedBenchmark",
    "markdown_to_html",
    "render_html",
    "render_markdown",
    "write_reports",
]


def write_reports(run_dir: Path, card: Scorecard, bench: ReportedBenchmark, scrubber: Scrubber) -> None:
    """Write ``report.md``, ``report.html`` and their plots into ``run_dir``.

    The benchmark supplies its section (``report_section``), the reason each failing attempt failed
    (``failure_reason``) and its plots (``report_plots``); the rest is shared.
    """
    attempts = list(latest_attempts(read_journal(run_dir / JOURNAL)).values())
    plots: list[Plot] = []
    if bench.pass_fail and (p := pass_rate_plot(card)) is not None:
        plots.append(p)
    plots += bench.report_plots(card, attempts, run_dir)
    save_plots(run_dir, plots)
    failures = collect_failures(card, attempts, bench.failure_reason)
    md = render_markdown(card, bench.report_section(card), failures, plots)
    write_scrubbed(run_dir / REPORT_MD, md, scrubber)
    write_scrubbed(run_dir / REPORT_HTML, render_html(card, md, run_dir), scrubber)
