"""`assay.exec.refold`: a run's journal folded again into its scorecard and reports, after the benchmark's
`regrade` hook; the attempts it re-grades are appended to the journal, the others left as they are."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from assay.errors import ResumeError
from assay.exec import RunOptions, rebuild, refold, run_benchmark
from assay.runs import Attempt, Status, latest_attempts, load_scorecard, read_journal

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "spine"))
from toy import ToyBenchmark


class _Regrading(ToyBenchmark):
    """Passes every failed attempt on a re-grade."""

    def regrade(self, attempts: list[Attempt]) -> list[Attempt]:
        return [
            a.model_copy(update={"status": Status.PASS}) if a.status is Status.FAIL else a for a in attempts
        ]


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))


def test_the_default_regrade_changes_nothing_and_the_scorecard_is_folded_again(tmp_path: Path) -> None:
    run = run_benchmark(ToyBenchmark, {"cases": 6, "fail_every": 3}, RunOptions(out=tmp_path / "r"))
    lines = len(read_journal(run.run_dir / "results.jsonl"))
    (run.run_dir / "scorecard.json").unlink()
    (run.run_dir / "report.md").unlink()
    card = refold(run.run_dir)
    assert card.summary.counts == run.scorecard.summary.counts
    assert load_scorecard(run.run_dir).summary.counts == run.scorecard.summary.counts
    assert (run.run_dir / "report.md").is_file()
    assert len(read_journal(run.run_dir / "results.jsonl")) == lines  # nothing re-graded, nothing appended


def test_regraded_attempts_are_journaled_and_counted(tmp_path: Path) -> None:
    run = run_benchmark(_Regrading, {"cases": 6, "fail_every": 3}, RunOptions(out=tmp_path / "r"))
    failed = run.scorecard.summary.counts.get("FAIL", 0)
    assert failed > 0
    before = len(read_journal(run.run_dir / "results.jsonl"))
    card = refold(run.run_dir)  # the class the run recorded, rebuilt with its options
    assert card.summary.counts.get("FAIL", 0) == 0
    assert card.summary.counts["PASS"] == run.scorecard.summary.counts["PASS"] + failed
    journal = read_journal(run.run_dir / "results.jsonl")
    assert len(journal) == before + failed
    assert all(a.status is Status.PASS for a in latest_attempts(journal).values())


def test_a_given_benchmark_is_used_and_a_changed_suite_is_refused(tmp_path: Path) -> None:
    run = run_benchmark(ToyBenchmark, {"cases": 4, "fail_every": 2}, RunOptions(out=tmp_path / "r"))
    bench, suite, meta = rebuild(run.run_dir)
    assert type(bench) is ToyBenchmark and suite.case_ids() == meta.case_ids
    card = refold(run.run_dir, _Regrading({"cases": 4}), suite=suite)
    assert card.summary.counts.get("FAIL", 0) == 0
    with pytest.raises(ResumeError, match="changed since the run started"):
        refold(run.run_dir, ToyBenchmark({"cases": 5}))
