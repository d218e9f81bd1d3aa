"""Overhead of the shared runner: N no-op attempts at concurrency C, journalled and folded.

Prints attempts/s for the run (executor + journal with grouped fsync) and the fold + reports.
Goal: 10,000 attempts at concurrency 64 in under 5 s on a 2-core machine.

    python benchmarks/spine_overhead.py [--attempts 10000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from assay.evals import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.exec import RunOptions, run_benchmark
from assay.runs import Status, read_journal


class NoOp(Benchmark):
    name = "noop"

    def load_suite(self, suite: str) -> Suite:
        n = int(self.options["attempts"])
        return Suite(name=suite, version="1", cases=[Case(id=f"c{i:05d}") for i in range(n)])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        return Outcome(status=Status.PASS, score=1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    os.environ.setdefault("ASSAY_NO_LOCK", "1")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["ASSAY_HOME"] = str(Path(tmp) / "home")
        t0 = time.perf_counter()
        result = run_benchmark(
            NoOp,
            {"attempts": args.attempts},
            RunOptions(max_concurrency=args.concurrency, results_dir=Path(tmp)),
        )
        total = time.perf_counter() - t0
        records = read_journal(result.run_dir / "results.jsonl")
        assert len(records) == args.attempts and result.scorecard.summary.counts["PASS"] == args.attempts
    print(f"attempts={args.attempts} concurrency={args.concurrency} load={os.getloadavg()[0]:.2f}")
    print(f"total_s={total:.2f} (run + journal + fold + scorecard + reports)")
    print(f"attempts_per_s={args.attempts / total:.0f}")
    print(f"target_met={total < 5.0}")


if __name__ == "__main__":
    main()
