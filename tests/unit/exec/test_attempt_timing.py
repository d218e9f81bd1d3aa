"""An attempt is timed from when its work starts, and a --timeout really stops the work.

A benchmark whose cases take turns on a lock of its own times each case from its turn (`ctx.exclusive`);
work in a thread that a timeout cancels is told to stop and is waited for while the lock is still held.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from assay.evals import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.evals.retrieval._code import CodeRetrievalBenchmark
from assay.exec import RunOptions, check_stop, run_benchmark, run_stoppable
from assay.runs import Status


class _TakesTurns(Benchmark):
    """Three cases that take turns on one lock, 0.35 s of work each: ``third`` waits ~0.7 s for its turn."""

    name = "turns"

    def __init__(self, options: dict) -> None:
        super().__init__(options)
        self.lock = asyncio.Lock()

    def load_suite(self, suite: str) -> Suite:
        return Suite(suite, "1", [Case("first"), Case("second"), Case("third")])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        await asyncio.sleep({"first": 0.0, "second": 0.02, "third": 0.04}[case.id])  # queue in order
        async with ctx.exclusive(self.lock):
            await asyncio.sleep(0.35)
        return Outcome(Status.PASS)


def test_elapsed_and_timeout_count_the_work_not_the_wait_for_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    opts = RunOptions(out=tmp_path / "run", timeout_s=0.5, max_concurrency=3, command_line=["t"])
    card = run_benchmark(_TakesTurns, {}, opts).scorecard
    # ``third`` waited longer than --timeout for the lock, then worked 0.35 s: it did not time out
    for case in card.cases:
        assert case.counts == {"PASS": 1}, case
        assert case.mean_elapsed_s is not None and case.mean_elapsed_s < 0.47, case


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_timed_out_code_search_case_stops_before_the_lock_is_released(tmp_path: Path) -> None:
    log = tmp_path / "worktree.log"

    def slow_case(case: Case) -> Outcome:  # stands in for checkout + re-index of a shared worktree
        for i in range(40):
            check_stop()
            with log.open("a") as fh:
                fh.write(f"step {i}\n")
            time.sleep(0.05)
        return Outcome(Status.PASS)

    bench = CodeRetrievalBenchmark({"component": "code", "embedder": "hash"})
    bench._work = tmp_path  # set up already
    bench._run_sync = slow_case  # type: ignore[method-assign]

    async def scenario() -> tuple[int, int]:
        ctx = AttemptContext(run_dir=str(tmp_path), iteration=0, seed=0, timeout_s=None)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(bench.run_case(Case("q:x", "query", {}), ctx), 0.3)
        async with bench._lock:  # the next case's turn: nothing may change the worktree any more
            before = _lines(log)
            await asyncio.sleep(0.3)
            return before, _lines(log)

    before, after = asyncio.run(scenario())
    assert before == after and 0 < before < 40


def test_run_stoppable_returns_the_result_when_not_cancelled() -> None:
    assert asyncio.run(run_stoppable(lambda a, b: a + b, 2, 3)) == 5
