"""Reports: markdown and self-contained HTML with plots, and why each failing case failed.

:func:`write_reports` renders a run's scorecard and its :class:`~assay.gate.Verdict` once.
"""

from __future__ import annotations

from assay.report._source import ReportedBenchmark
from assay.report._write import write_reports
from assay.report.failure_reasons import Failures, collect_failures
from assay.report.html import markdown_to_html, render_html
from assay.report.markdown import render_markdown
from assay.report.plotting import Plot

__all__ = [
    "Failures",
    "Plot",
    "ReportedBenchmark",
    "collect_failures",
    "markdown_to_html",
    "render_html",
    "render_markdown",
    "write_reports",
]
