"""Reports: markdown and self-contained HTML with plots."""

from __future__ import annotations

from pathlib import Path

from assay.report._html import markdown_to_html, render_html
from assay.report._markdown import render_markdown
from assay.runs._records import Scorecard
from assay.runs._rundir import REPORT_HTML, REPORT_MD
from assay.runs._scrub import Scrubber, write_scrubbed

__all__ = ["markdown_to_html", "render_html", "render_markdown", "write_reports"]


def write_reports(run_dir: Path, card: Scorecard, section: str, scrubber: Scrubber) -> None:
    """Write ``report.md`` and ``report.html`` into ``run_dir``."""
    md = render_markdown(card, section)
    write_scrubbed(run_dir / REPORT_MD, md, scrubber)
    write_scrubbed(run_dir / REPORT_HTML, render_html(card, md, run_dir), scrubber)
