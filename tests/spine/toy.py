"""A tiny benchmark used only by the spine's tests (loaded with ASSAY_PLUGINS=toy:ToyBenchmark)."""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from pathlib import Path

import click

from assay.errors import InfraError
from assay.evals import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.runs import MetricSpec, Status, SubjectConfig, phase, run_process


class ToyBenchmark(Benchmark):
    """Cases pass with a fixed probability; knobs make attempts slow, fail, leak secrets or hit an outage."""

    name = "toy"
    help = "Test-only benchmark."
    metric_specs = (MetricSpec(name="quality", kind="continuous", direction="higher", tolerance=0.05),)

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
            # Ctrl-C: after the first --work-after attempts, each one works in a thread (ticking a progress
            # phase), runs a child process, or blocks without ever looking at the cancel flag; --setup-work
            # keeps the event loop's own thread busy in setup; --work-marker is touched when work starts
            click.Option(["--work-after"], type=int, default=0),
            click.Option(["--thread-work"], type=float, default=0.0),
            click.Option(["--child-work"], type=float, default=0.0),
            click.Option(["--block-work"], type=float, default=0.0),
            click.Option(["--setup-work"], type=float, default=0.0),
            click.Option(["--work-marker"], type=str, default=""),
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

    def _mark(self, text: str) -> None:
        if self.options.get("work_marker"):
            Path(self.options["work_marker"]).write_text(text)

    def _tick(self, label: str, seconds: float) -> None:
        """Work in steps of 50 ms, each one a progress tick (which checks for Ctrl-C)."""
        steps = max(1, int(seconds / 0.05))
        with phase(label, total=steps, unit="steps") as ph:
            self._mark(str(os.getpid()))
            for _ in range(steps):
                time.sleep(0.05)
                ph.advance()

    def _child(self, seconds: float) -> None:
        code = f"import os, pathlib, time; pathlib.Path({self.options['work_marker']!r}).write_text(str(os.getpid())); time.sleep({seconds})"
        run_process([sys.executable, "-c", code])

    def _block(self, seconds: float) -> None:
        self._mark(str(os.getpid()))
        time.sleep(seconds)  # never looks at the cancel flag

    async def setup(self, run_dir: str) -> None:
        seconds = float(self.options.get("setup_work") or 0.0)
        if seconds:
            self._tick("toy setup", seconds)  # synchronous, in the event loop's thread

    async def _work(self) -> None:
        for knob, fn in (
            ("thread_work", self._tick),
            ("child_work", self._child),
            ("block_work", self._block),
        ):
            seconds = float(self.options.get(knob) or 0.0)
            if seconds:
                args = ("toy work", seconds) if fn == self._tick else (seconds,)
                await asyncio.to_thread(fn, *args)

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        self.started += 1
        if self.started > int(self.options.get("work_after") or 0):
            await self._work()
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
