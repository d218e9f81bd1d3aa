"""Reports: markdown and self-contained HTML with plots, and why each failing case failed.

:func:`write_reports` renders a run's scorecard and its :class:`~assay.gate.Verdict` once.
"""

from __future__ import annotations

from assay.report._failures import Failures, collect_failures
from assay.report._html import markdown_to_html, render_html
from assay.report._markdown import render_markdown
from assay.report._plots import Plot
from assay.report._source import ReportedBenchmark
from assay.report._write import write_reports

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
