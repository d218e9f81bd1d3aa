"""What the shared report reads of a benchmark (``assay.exec.Benchmark`` is one; typed by this protocol, the
report imports nothing above it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from assay.runs import Attempt, Scorecard

if TYPE_CHECKING:
    from assay.report.plotting import Plot


class ReportedBenchmark(Protocol):
    @property
    def pass_fail(self) -> bool: ...

    def report_section(self, scorecard: Scorecard) -> str: ...

    def failure_reason(self, attempt: Attempt) -> str: ...

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]: ...
