"""Scripted subjects for the Ray executor's tests and benchmarks/ray_scaling.py (importable on the workers).

Each attempt waits ``--sleep`` seconds on I/O and passes with a metric derived from its case. Knobs make a
worker die: ``--crash-once CASE`` kills the worker (``os._exit``) on that case's first try only,
``--crash-always CASE`` on every try; ``--outage CASE`` raises InfraError there (a backend outage); ``--cases-env NAME`` reads the case count
from that environment variable (unset on the workers: a worker reading another suite). Every try
appends a line to ``<--marks>/<case>-i<iteration>``, so a test can count the tries a worker made.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Any

from assay.errors import InfraError
from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Flag, Outcome, Suite
from assay.runs import MetricSpec, Status


class SleepBenchmark(Benchmark):
    """Latency-bound scripted cases: each attempt sleeps, then passes with ``value`` = its case number."""

    name = "raysleep"
    help = "Test-only benchmark: attempts that wait on I/O."
    metric_specs = (MetricSpec(name="value", kind="continuous", direction="higher", tolerance=0.0),)

    class Options(BenchmarkOptions):
        cases: Annotated[int, Flag("--cases")] = 6
        sleep: Annotated[float, Flag("--sleep")] = 0.0
        marks: Annotated[str, Flag("--marks")] = ""
        crash_once: Annotated[str, Flag("--crash-once")] = ""
        crash_always: Annotated[str, Flag("--crash-always")] = ""
        outage: Annotated[str, Flag("--outage")] = ""
        cases_env: Annotated[str, Flag("--cases-env")] = ""
        #: as a fenced benchmark's option: each attempt asks for a ``sandbox``
        fence: bool = False

    def load_suite(self, suite: str) -> Suite:
        n = int(self.options.cases)
        if self.options.cases_env:  # the count from this process's environment (a differing checkout)
            n = int(os.environ.get(self.options.cases_env, n))
        return Suite(name=suite, version="1", cases=[Case(id=f"c{i:02d}", input=i) for i in range(n)])

    def _mark(self, case: Case, ctx: AttemptContext) -> int:
        """Record this try; return how many tries the attempt has had (this one included)."""
        marks = self.options.marks or ""
        if not marks:
            return 1
        path = Path(marks) / f"{case.id}-i{ctx.iteration}"
        with path.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        return len(path.read_text().splitlines())

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        tries = self._mark(case, ctx)
        if case.id == self.options.crash_always or (case.id == self.options.crash_once and tries == 1):
            os._exit(17)  # the worker process dies mid-attempt, as a lost node would
        if case.id == self.options.outage:
            raise InfraError(f"scripted backend outage at {case.id}")
        await asyncio.sleep(float(self.options.sleep))
        details: dict[str, Any] = {"input": case.input, "pid": os.getpid()}
        return Outcome(status=Status.PASS, score=1.0, metrics={"value": float(case.input)}, details=details)


class LiveStateBenchmark(SleepBenchmark):
    """The same cases, declared unable to run remotely."""

    name = "raylive"
    remote_refusal = "its subject is an object living in this process"
