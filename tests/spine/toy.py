"""A tiny benchmark used only by the spine's tests (loaded with ASSAY_PLUGINS=toy:ToyBenchmark)."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path

import click

from assay.errors import InfraError
from assay.evals import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.runs import MetricSpec, Status, SubjectConfig


class ToyBenchmark(Benchmark):
    """Cases pass with a fixed probability; knobs make attempts slow, fail, leak secrets or hit an outage."""

    name = "toy"
    help = "Test-only benchmark."
    metric_specs = (MetricSpec(name="quality", direction="higher", tolerance=0.05),)

    @classmethod
    def cli_options(cls) -> list[click.Option]:
        return [
            click.Option(["--cases"], type=int, default=10),
            click.Option(["--delay"], type=float, default=0.0),
            click.Option(["--outage-after"], type=int, default=-1),
            click.Option(["--outage-file"], type=str, default=""),
            click.Option(["--answer"], type=str, default=""),
            click.Option(["--fail-every"], type=int, default=0),
            click.Option(["--model"], type=str, default="scripted/toy"),
        ]

    def __init__(self, options: dict) -> None:
        super().__init__(options)
        self.started = 0

    def subject_config(self) -> SubjectConfig:
        return SubjectConfig(subject="toy", model=self.options.get("model", "scripted/toy"))

    def load_suite(self, suite: str) -> Suite:
        n = int(self.options.get("cases", 10))
        cats = ["alpha", "beta"]
        return Suite(
            name=suite, version="1", cases=[Case(id=f"c{i:03d}", category=cats[i % 2]) for i in range(n)]
        )

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        self.started += 1
        outage_after = int(self.options.get("outage_after", -1))
        outage_file = self.options.get("outage_file") or ""
        if (outage_after >= 0 and self.started > outage_after) or (
            outage_file and Path(outage_file).exists()
        ):
            raise InfraError("connection refused: http://127.0.0.1:9/v1 (backend down)")
        delay = float(self.options.get("delay", 0.0))
        if delay:
            await asyncio.sleep(delay)
        idx = int(case.id[1:])
        fail_every = int(self.options.get("fail_every", 0))
        passed = not (fail_every and idx % fail_every == 0)
        rng = random.Random(f"{case.id}-{ctx.iteration}-{ctx.seed}")
        return Outcome(
            status=Status.PASS if passed else Status.FAIL,
            score=1.0 if passed else 0.0,
            metrics={"quality": rng.random()},
            details={"answer": self.options.get("answer", ""), "pid": os.getpid()},
        )
