"""An imported run as a benchmark the shared fold, gate and reports understand; it never runs a case."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from assay.errors import ConfigError
from assay.exec import AttemptContext, Benchmark, BenchmarkOptions, Case, Outcome, Suite
from assay.runs import Attempt, MetricSpec, MetricValue, Scorecard, SubjectConfig


class ImportOptions(BenchmarkOptions):
    """What ``meta.json`` records of an import, so that a refold rebuilds the run from it alone."""

    tool: str = ""
    source: list[str] = Field(default_factory=list)
    task: str = ""
    task_version: str = ""
    model: str | None = None
    subject: str | None = None
    scorers: list[str] = Field(default_factory=list)
    #: each case as [id, category], in the tool's order
    cases: list[list[str]] = Field(default_factory=list)
    metrics: list[MetricSpec] = Field(default_factory=list)
    run_metrics: dict[str, MetricValue] = Field(default_factory=dict)
    status: str | None = None
    #: why the result has no items (aggregates only), None when it has them
    no_items: str | None = None
    notes: list[str] = Field(default_factory=list)


class ImportedRun(Benchmark):
    """A result of another tool (``assay import``): its cases are read, never run."""

    name: ClassVar[str] = "import"
    help: ClassVar[str] = "A result imported from another eval tool."
    Options = ImportOptions

    def __init__(self, options: Any = None) -> None:
        super().__init__(options)
        # per run: the scorers of the tool's result, declared once so fold, gate and report read them
        self.metric_specs = tuple(self.options.metrics)  # type: ignore[misc]

    def subject_config(self) -> SubjectConfig:
        o = self.options
        return SubjectConfig(
            subject=o.subject, model=o.model, extra={"imported_from": o.tool, "scorers": o.scorers}
        )

    def load_suite(self, suite: str) -> Suite:
        o = self.options
        return Suite(suite, o.task_version, [Case(id=cid, category=cat) for cid, cat in o.cases])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        raise ConfigError(
            f"{case.id}: an imported run cannot be run or resumed; import the tool's result again"
        )

    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        return dict(self.options.run_metrics)

    def scorecard_extra(self, attempts: list[Attempt]) -> dict[str, Any]:
        """An import of aggregates only says why it has no items (``compare`` repeats it)."""
        o = self.options
        return {"no_items": o.no_items} if o.no_items else {}

    def report_section(self, scorecard: Scorecard) -> str:
        o = self.options
        lines = [
            "## Imported result",
            "",
            f"- tool: {o.tool} · task: {o.task} · model: {o.model or 'unknown'} · subject: {o.subject or 'unknown'}",
            f"- scorers: {', '.join(o.scorers) or 'none'} · the tool's status: {o.status or 'not recorded'}",
            f"- from: {', '.join(o.source)}",
        ]
        lines += [f"- {n}" for n in o.notes]
        if o.no_items:
            lines.append(f"- no items: {o.no_items}")
        return "\n".join(lines) + "\n"
