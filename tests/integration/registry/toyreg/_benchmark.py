"""The toy benchmark: each case passes; ``--knob`` sets how many cases there are."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Flag, Outcome, Suite
from assay.runs import Status


class ToyRegOptions(BenchmarkOptions):
    knob: Annotated[
        int, Field(ge=1), Flag("--knob", envvar="TOYREG_KNOB", show_default=True, help="Cases.")
    ] = 2


class ToyRegBenchmark(Benchmark):
    """A toy benchmark registered from its own package."""

    name = "toyreg"
    help = "A toy benchmark registered from its own package."
    short_help = "Toy: registered from one package."
    subcommands: ClassVar[dict[str, str]] = {"hello": "toyreg._cli:hello_command"}
    case_view = "toyreg._view:toy_view"
    ci_jobs: ClassVar[dict[str, dict[str, dict[str, object]]]] = {
        "toyreg": {"full": {"args": ["--suite", "pr", "--knob", "3"], "reason": "the toy, whole"}}
    }
    Options = ToyRegOptions
    options: ToyRegOptions

    def load_suite(self, suite: str) -> Suite:
        return Suite(suite, "1", [Case(f"c{i}", input=i) for i in range(self.options.knob)])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        return Outcome(Status.PASS, score=1.0, details={"seen": case.input})
