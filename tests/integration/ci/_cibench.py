"""A tiny benchmark for the CI tests, run by the real runner: each case's id says what its attempt does."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from assay.errors import InfraError
from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Flag, Outcome, Suite
from assay.runs import Usage
from assay.runs.records import ErrorInfo, MetricSpec, Status

#: case id -> what its attempt does (the ``weak`` option turns ``flip`` into a failure)
CASES = {
    "ok-1": "pass",
    "ok-2": "pass",
    "flip": "pass",
    "bad": "fail",
    "skip": "skip",
    "broken": "error",
    "outage": "infra",
    "after": "pass",
}


class CiBench(Benchmark):
    """Eight cases of every outcome; one model call of 10 tokens per passing or failing attempt."""

    name: ClassVar[str] = "cibench"
    suites: ClassVar[tuple[str, ...]] = ("pr", "full")
    metric_specs: ClassVar[tuple[MetricSpec, ...]] = ()

    class Options(BenchmarkOptions):
        scenario: Annotated[str | None, Flag("--scenario", help="Only these cases (comma list).")] = None
        weak: Annotated[bool, Flag("--weak", help="Fail the flip case.")] = False
        no_outage: Annotated[bool, Flag("--no-outage", help="The outage case passes.")] = False

    def load_suite(self, suite: str) -> Suite:
        wanted = [c for c in str(self.options.scenario or "").split(",") if c]
        unknown = [c for c in wanted if c not in CASES]
        if unknown:
            from assay.errors import ConfigError

            raise ConfigError(f"--scenario: unknown case(s) {', '.join(unknown)}")
        ids = wanted or list(CASES)
        self._by = {"scenario": wanted} if wanted else {}
        return Suite(suite, "v1", [Case(i, i.split("-")[0], {"id": i}) for i in ids])

    def scorecard_extra(self, attempts: list[Any]) -> dict[str, Any]:
        return {"selection": {"by": self._by}} if self._by else {}

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        what = CASES[case.id]
        if case.id == "flip" and self.options.weak:
            what = "fail"
        if case.id == "outage" and self.options.no_outage:
            what = "pass"
        spent = Usage(input_tokens=10, output_tokens=2, calls=1, cost_usd=0.001, cost_source="metered")
        if what == "infra":
            raise InfraError("the model server refused the connection")
        if what == "error":
            raise RuntimeError("the harness crashed before its first model call")
        if what == "skip":
            return Outcome.skipped("needs a GPU")
        status = Status.PASS if what == "pass" else Status.FAIL
        err = None if status == Status.PASS else ErrorInfo(type="wrong", message="answered 41, expected 42")
        return Outcome(status=status, score=1.0 if status == Status.PASS else 0.0, usage=spent, error=err)
