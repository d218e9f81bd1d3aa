"""Writing a run's reports once: ``report.md``, ``report.html`` and their plots, with the verdict in them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from assay._util import Scrubber, write_scrubbed
from assay.report._source import ReportedBenchmark
from assay.report.failure_reasons import collect_failures
from assay.report.html import render_html
from assay.report.markdown import render_markdown
from assay.report.plotting import Plot, pass_rate_plot, save_plots
from assay.runs import Attempt, Scorecard, latest_attempts, read_journal
from assay.runs.rundir import JOURNAL, REPORT_HTML, REPORT_MD

if TYPE_CHECKING:
    from assay.gate import Verdict


def write_reports(
    run_dir: Path,
    card: Scorecard,
    bench: ReportedBenchmark,
    scrubber: Scrubber,
    *,
    verdict: Verdict | None = None,
    attempts: Iterable[Attempt] | None = None,
) -> None:
    """Write ``report.md``, ``report.html`` and their plots into ``run_dir``, once, with the verdict in them.

    The benchmark supplies its section (``report_section``), the reason each failing attempt failed
    (``failure_reason``) and its plots (``report_plots``); the rest is shared. ``attempts`` are each case's
    latest (read from the journal when not given).
    """
    if attempts is None:
        attempts = latest_attempts(read_journal(run_dir / JOURNAL)).values()
    attempts = list(attempts)
    plots: list[Plot] = []
    if bench.pass_fail and (p := pass_rate_plot(card)) is not None:
        plots.append(p)
    plots += bench.report_plots(card, attempts, run_dir)
    save_plots(run_dir, plots)
    failures = collect_failures(card, attempts, bench.failure_reason)
    md = render_markdown(card, bench.report_section(card), failures, plots, verdict)
    write_scrubbed(run_dir / REPORT_MD, md, scrubber)
    write_scrubbed(run_dir / REPORT_HTML, render_html(card, md, run_dir), scrubber)
