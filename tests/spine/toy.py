"""A tiny benchmark used only by the spine's tests (loaded with ASSAY_PLUGINS=toy:ToyBenchmark)."""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from pathlib import Path
from typing import Annotated

from assay._util import phase, run_process
from assay.errors import InfraError
from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Flag, Outcome, Suite
from assay.runs import MetricSpec, Status, SubjectConfig


class ToyBenchmark(Benchmark):
    """Cases pass with a fixed probability; knobs make attempts slow, fail, leak secrets or hit an outage."""

    name = "toy"
    help = "Test-only benchmark."
    metric_specs = (MetricSpec(name="quality", kind="continuous", direction="higher", tolerance=0.05),)

    class Options(BenchmarkOptions):
        cases: Annotated[int, Flag("--cases")] = 10
        delay: Annotated[float, Flag("--delay")] = 0.0
        outage_after: Annotated[int, Flag("--outage-after")] = -1
        outage_file: Annotated[str, Flag("--outage-file")] = ""
        answer: Annotated[str, Flag("--answer")] = ""
        fail_every: Annotated[int, Flag("--fail-every")] = 0
        model: Annotated[str, Flag("--model")] = "scripted/toy"
        # Ctrl-C: after the first --work-after attempts, each one works in a thread (ticking a progress
        # phase), runs a child process, or blocks without ever looking at the cancel flag; --setup-work
        # keeps the event loop's own thread busy in setup; --work-marker is touched when work starts
        work_after: Annotated[int, Flag("--work-after")] = 0
        thread_work: Annotated[float, Flag("--thread-work")] = 0.0
        child_work: Annotated[float, Flag("--child-work")] = 0.0
        block_work: Annotated[float, Flag("--block-work")] = 0.0
        setup_work: Annotated[float, Flag("--setup-work")] = 0.0
        work_marker: Annotated[str, Flag("--work-marker")] = ""

    def __init__(self, options: dict | None = None) -> None:
        super().__init__(options)
        self.started = 0

    def subject_config(self) -> SubjectConfig:
        return SubjectConfig(subject="toy", model=self.options.model)

    def load_suite(self, suite: str) -> Suite:
        n = int(self.options.cases)
        cats = ["alpha", "beta"]
        return Suite(
            name=suite, version="1", cases=[Case(id=f"c{i:03d}", category=cats[i % 2]) for i in range(n)]
        )

    def _mark(self, text: str) -> None:
        if self.options.work_marker:
            Path(self.options.work_marker).write_text(text)

    def _tick(self, label: str, seconds: float) -> None:
        """Work in steps of 50 ms, each one a progress tick (which checks for Ctrl-C)."""
        steps = max(1, int(seconds / 0.05))
        with phase(label, total=steps, unit="steps") as ph:
            self._mark(str(os.getpid()))
            for _ in range(steps):
                time.sleep(0.05)
                ph.advance()

    def _child(self, seconds: float) -> None:
        code = f"import os, pathlib, time; pathlib.Path({self.options.work_marker!r}).write_text(str(os.getpid())); time.sleep({seconds})"
        run_process([sys.executable, "-c", code])

    def _block(self, seconds: float) -> None:
        self._mark(str(os.getpid()))
        time.sleep(seconds)  # never looks at the cancel flag

    async def setup(self, run_dir: str) -> None:
        seconds = float(self.options.setup_work or 0.0)
        if seconds:
            self._tick("toy setup", seconds)  # synchronous, in the event loop's thread

    async def _work(self) -> None:
        for knob, fn in (
            ("thread_work", self._tick),
            ("child_work", self._child),
            ("block_work", self._block),
        ):
            seconds = float(getattr(self.options, knob) or 0.0)
            if seconds:
                args = ("toy work", seconds) if fn == self._tick else (seconds,)
                await asyncio.to_thread(fn, *args)

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        self.started += 1
        if self.started > int(self.options.work_after or 0):
            await self._work()
        outage_after = int(self.options.outage_after)
        outage_file = self.options.outage_file or ""
        if (outage_after >= 0 and self.started > outage_after) or (
            outage_file and Path(outage_file).exists()
        ):
            raise InfraError("connection refused: http://127.0.0.1:9/v1 (backend down)")
        delay = float(self.options.delay)
        if delay:
            await asyncio.sleep(delay)
        idx = int(case.id[1:])
        fail_every = int(self.options.fail_every)
        passed = not (fail_every and idx % fail_every == 0)
        rng = random.Random(f"{case.id}-{ctx.iteration}-{ctx.seed}")
        return Outcome(
            status=Status.PASS if passed else Status.FAIL,
            score=1.0 if passed else 0.0,
            metrics={"quality": rng.random()},
            details={"answer": self.options.answer, "pid": os.getpid()},
        )
