"""`assay eval retrieval --component rag|code`: one command, two components."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay.errors import ConfigError
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.runs._records import Attempt, MetricValue, Scorecard, SubjectConfig

if TYPE_CHECKING:
    from assay.report import Plot

COMPONENTS: dict[str, str] = {
    "rag": "assay.evals.retrieval._rag:RagRetrievalBenchmark",
    "code": "assay.evals.retrieval._code:CodeRetrievalBenchmark",
}


def component_class(component: str) -> type[Benchmark]:
    if component not in COMPONENTS:
        raise ConfigError(f"--component must be one of {', '.join(COMPONENTS)}, not {component!r}")
    module, _, attr = COMPONENTS[component].partition(":")
    return getattr(importlib.import_module(module), attr)


class RetrievalBenchmark(Benchmark):
    """Document retrieval (rag) or code search (code) quality, scale and robustness."""

    name = "retrieval"
    help = "Retrieval quality: --component rag (documents) or code (code search)."

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        component = options.get("component") or "rag"
        cls = component_class(component)
        own = {o.name for o in cls.cli_options()}
        for other in COMPONENTS:
            if other == component:
                continue
            for opt in component_class(other).cli_options():
                value = options.get(opt.name or "")
                if opt.name not in own and value not in (None, False, opt.default, ()):
                    flag = max(opt.opts, key=len)
                    raise ConfigError(f"{flag} applies to --component {other}, not {component}")
        self.inner = cls({k: v for k, v in options.items() if k in own or k == "component"})
        self.name = self.inner.name  # type: ignore[misc]
        self.metric_specs = self.inner.metric_specs  # type: ignore[misc]
        self.suites = self.inner.suites  # type: ignore[misc]
        self.pass_fail = self.inner.pass_fail  # type: ignore[misc]
        self.interruptible = self.inner.interruptible  # type: ignore[misc]

    @classmethod
    def cli_options(cls) -> list[click.Option]:
        merged: dict[str, click.Option] = {
            "component": click.Option(
                ["--component"],
                type=click.Choice(list(COMPONENTS)),
                default="rag",
                show_default=True,
                help="What to evaluate: documents (rag) or code.",
            )
        }
        for component in COMPONENTS:
            try:
                options = component_class(component).cli_options()
            except ImportError:
                continue
            for opt in options:
                merged.setdefault(opt.name or "", opt)
        return list(merged.values())

    def subject_config(self) -> SubjectConfig:
        return self.inner.subject_config()

    def load_suite(self, suite: str) -> Suite:
        return self.inner.load_suite(suite)

    async def preflight(self) -> None:
        await self.inner.preflight()

    async def setup(self, run_dir: str) -> None:
        await self.inner.setup(run_dir)

    async def teardown(self) -> None:
        await self.inner.teardown()

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        return await self.inner.run_case(case, ctx)

    def run_metrics(self, attempts: list[Attempt]) -> dict[str, MetricValue]:
        return self.inner.run_metrics(attempts)

    def report_section(self, scorecard: Scorecard) -> str:
        return self.inner.report_section(scorecard)

    def failure_reason(self, attempt: Attempt) -> str:
        return self.inner.failure_reason(attempt)

    def report_plots(self, scorecard: Scorecard, attempts: list[Attempt], run_dir: Path) -> list[Plot]:
        return self.inner.report_plots(scorecard, attempts, run_dir)
