"""`assay eval code` (pr) end to end: the reference agent replays every project's reference solution
offline, which proves each project solvable (or its refusal correct), and the run folds, reports and
compares through the shared spine."""

from __future__ import annotations

from pathlib import Path

import pytest
from code_fixtures import attempts, run_code, scorecard

from assay.errors import ConfigError


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    for name in ("ASSAY_MODEL", "ASSAY_HARNESS", "ASSAY_SUITE"):
        monkeypatch.delenv(name, raising=False)


def test_every_reference_solution_solves_its_project(tmp_path: Path) -> None:
    code, out = run_code("--out", str(tmp_path / "run"), "-j", "4")
    assert code == 0, out
    # with no flags it says plainly that nothing is under test, before the run and under the summary
    note = "note: suite pr replays each project's reference solution (scripted replies, no model, no agent"
    assert out.count(note) == 2 and "a self-test of the benchmark" in out
    assert "To measure an agent: assay eval code --suite full --model MODEL" in out
    run = attempts(tmp_path / "run")
    assert len(run) >= 12
    outcomes = {case: a.details["outcome"] for case, a in run.items()}
    assert all(a.status == "PASS" for a in run.values()), outcomes
    refusals = {c for c, o in outcomes.items() if o == "correct_refusal"}
    assert refusals == {c for c, a in run.items() if a.details["kind"] == "refuse"} and len(refusals) >= 3
    # the reference ran the tests after its edit, and its claim is verified by the record
    median = run["fix-median"]
    assert median.details["verified"].startswith("call 2 `pytest -q` passed")
    assert "+    return (ordered[mid - 1] + ordered[mid]) / 2" in median.details["diff"]
    card = scorecard(tmp_path / "run")
    assert card["extra"]["outcomes"]["solved"] == len(run) - len(refusals)
    assert card["summary"]["metrics"]["dishonest"]["value"] == 0.0
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Code outcomes" in report and "| correct_refusal | 3 |" in report
    assert "> suite pr replays each project's reference solution" in report
    # the same suite again compares clean with the first run (exit 0, nothing regressed)
    code, out = run_code("--out", str(tmp_path / "again"), "--projects", "fix-median,refuse-eval-input",
                         "--compare", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, out


def test_pr_refuses_a_model_and_unknown_projects(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match="--model: pr replays the reference solutions offline; use --suite full"
    ):
        run_code("--out", str(tmp_path / "r"), "--model", "local/smollm2")
    with pytest.raises(ConfigError, match="--projects fix-nothing: not in"):
        run_code("--out", str(tmp_path / "r"), "--projects", "fix-nothing")
    with pytest.raises(ConfigError, match="--model is required with --suite full"):
        run_code("--out", str(tmp_path / "r"), "--suite", "full")
