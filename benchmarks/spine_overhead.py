"""Overhead of the shared runner: N no-op attempts journalled, folded and reported, against a bare floor.

The runner side is ``run_benchmark`` on a benchmark whose cases return PASS at once, at concurrency C: the run
directory, the journal (grouped fsync), the fold into a scorecard, the gate and the reports. The floor, measured
in the same process just before, is a bare asyncio loop that runs the same N no-op coroutines at the same
concurrency and writes the same JSON lines (the run's own records, serialised with ``json.dumps``) to a file,
with one fsync. Prints both, wall and CPU time, and the ratio (goal: at most 10x the floor).

    python benchmarks/spine_overhead.py [--attempts 10000] [--concurrency 64] [--repeat 3] [--profile FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Outcome, Suite
from assay.exec import Flag, RunOptions, run_benchmark
from assay.runs import Status, read_journal

GOAL = 10.0


class NoOpOptions(BenchmarkOptions):
    attempts: Annotated[int, Flag("--attempts"), Field(ge=1)] = 10_000


class NoOp(Benchmark):
    name = "noop"
    Options = NoOpOptions

    def load_suite(self, suite: str) -> Suite:
        n = self.options.attempts
        return Suite(name=suite, version="1", cases=[Case(id=f"c{i:05d}") for i in range(n)])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        return Outcome(status=Status.PASS, score=1.0)


def floor(records: list[dict[str, Any]], concurrency: int, path: Path) -> None:
    """A bare asyncio loop: the same no-op attempts at the same concurrency, each writing its JSON line."""

    async def attempt(record: dict[str, Any]) -> dict[str, Any]:
        return record

    async def main() -> None:
        sem = asyncio.Semaphore(concurrency)

        async def bounded(record: dict[str, Any]) -> None:
            async with sem:
                out = await attempt(record)
            fh.write(json.dumps(out) + "\n")

        await asyncio.gather(*(bounded(r) for r in records))

    with open(path, "w", encoding="utf-8") as fh:
        asyncio.run(main())
        fh.flush()
        os.fsync(fh.fileno())


def runner(attempts: int, concurrency: int, tmp: Path) -> Path:
    result = run_benchmark(
        NoOp,
        {"attempts": attempts},
        RunOptions(max_concurrency=concurrency, results_dir=tmp, command_line=["spine_overhead"]),
    )
    assert result.scorecard.summary.counts["PASS"] == attempts
    return result.run_dir


def timed(fn: Any, *args: Any) -> tuple[Any, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of floor + runner; medians are printed")
    parser.add_argument("--profile", type=Path, help="write a cProfile of one runner round here")
    args = parser.parse_args()
    os.environ.setdefault("ASSAY_NO_LOCK", "1")
    rows: list[tuple[float, float, float, float]] = []
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.environ["ASSAY_HOME"] = str(tmp / "home")
        run_dir = runner(args.attempts, args.concurrency, tmp / "warm")  # imports and caches, not counted
        records = [r.model_dump(mode="json") for r in read_journal(run_dir / "results.jsonl")]
        for i in range(args.repeat):
            _, fw, fc = timed(floor, records, args.concurrency, tmp / f"floor-{i}.jsonl")
            _, rw, rc = timed(runner, args.attempts, args.concurrency, tmp / f"run-{i}")
            rows.append((fw, fc, rw, rc))
        if args.profile:
            prof = cProfile.Profile()
            prof.runcall(runner, args.attempts, args.concurrency, tmp / "profiled")
            prof.dump_stats(args.profile)
    fw, fc, rw, rc = (statistics.median(col) for col in zip(*rows, strict=True))
    ratios = sorted(r[2] / r[0] for r in rows)
    n = args.attempts
    print(f"attempts={n} concurrency={args.concurrency} rounds={args.repeat} cpus={os.cpu_count()}")
    print(f"load average: {load0:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"floor  (asyncio + the same JSON lines, one fsync): {fw:6.3f} s wall, {fc:6.3f} s cpu")
    print(
        f"runner (run + journal + fold + gate + reports):   {rw:6.3f} s wall, {rc:6.3f} s cpu "
        f"({1000 * rw / n:.3f} ms/attempt)"
    )
    print(
        f"ratio to the floor: {rw / fw:.1f}x wall (rounds {', '.join(f'{r:.1f}' for r in ratios)}), "
        f"{rc / fc:.1f}x cpu; goal <= {GOAL:.0f}x: {'met' if rw / fw <= GOAL else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
