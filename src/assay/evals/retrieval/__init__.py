"""`assay eval retrieval --component rag|code`: one command, two components."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError
from assay.evals.retrieval._options import RetrievalOptions
from assay.exec import AttemptContext, Benchmark, Case, Outcome, Suite, option_specs
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

    Options = RetrievalOptions
    options: RetrievalOptions

    def __init__(self, options: RetrievalOptions | Mapping[str, Any] | None = None) -> None:
        super().__init__(options)
        component = self.options.component
        cls = component_class(component)
        own = set(cls.Options.model_fields)
        for other in COMPONENTS:
            if other == component:
                continue
            for spec in option_specs(component_class(other).Options):
                value = getattr(self.options, spec.name)
                if spec.name not in own and value not in (None, False, spec.default, ()):
                    flag = max((s for s, _ in spec.spellings()), key=len)
                    raise ConfigError(f"{flag} applies to --component {other}, not {component}")
        self.inner = cls(self.options.model_dump(include=own))
        self.name = self.inner.name  # type: ignore[misc]
        self.metric_specs = self.inner.metric_specs  # type: ignore[misc]
        self.suites = self.inner.suites  # type: ignore[misc]
        self.pass_fail = self.inner.pass_fail  # type: ignore[misc]
        self.interruptible = self.inner.interruptible  # type: ignore[misc]

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
