"""`assay eval tasks propose` on three scripted runs, then `gate --enforce`: the runs meet the proposal, a
worse run misses it; expectations by model and suite, "not gated yet", and a named file that is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tasks_fixtures import agent_script, grades, run_tasks, write_script, write_tasks_dir

from assay.cli._tasks import tasks_gate_command, tasks_propose_command
from assay.evals.tasks._expect import expectations_path


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ASSAY_TASKS_EXPECTATIONS_DIR", str(tmp_path / "expectations"))
    for name in ("ASSAY_EXPECT", "ASSAY_ENFORCE", "ASSAY_PROPOSE", "ASSAY_PROPOSE_OUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """Three runs of one scripted agent and judge (the fix each time; the judge's grades differ)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASSAY_NO_LOCK", "1")
        tmp = tmp_path_factory.mktemp("runs")
        tasks_dir = write_tasks_dir(tmp)
        runs = [_one_run(tmp, tasks_dir, True, f, e) for f, e in ((4, 4), (5, 4), (4, 3))]
    return tmp, runs


def _one_run(tmp_path: Path, tasks_dir: Path, fix: bool, fix_grade: int, explain_grade: int) -> Path:
    # the same script paths every time: the runs are of one model and one judge (comparable)
    agent = write_script(tmp_path / "agent.yaml", agent_script(fix=fix))
    judge = write_script(tmp_path / "judge.yaml", [grades(fix_add=fix_grade, explain=explain_grade)])
    code, out, run_dir = run_tasks(tmp_path, tasks_dir, agent, judge)
    assert code == 0 and run_dir is not None, out
    return run_dir


def _invoke(command: object, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(command, [*args], catch_exceptions=False)  # type: ignore[arg-type]
    return result.exit_code, result.output


def test_propose_from_three_runs_then_gate_enforce(
    three_runs: tuple[Path, list[Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    tmp_path, runs = three_runs
    tasks_dir = tmp_path / "tasks"
    card = json.loads((runs[0] / "scorecard.json").read_text())
    out_file = expectations_path(card["config"]["model"], "core")
    code, out = _invoke(tasks_propose_command, *map(str, runs), "--out", str(out_file))
    assert code == 0, out
    exp = json.loads(out_file.read_text())
    limits = exp["limits"]
    # the worst of the three runs, plus headroom: one task may flip, one more change unverified,
    # quality -0.5 (worst run: (4 + 3) / 2), tokens and steps +35%, wall time +50%
    assert limits["min_passed"] == 1 and limits["max_unverified"] == 1
    assert limits["max_misreported"] == 0  # a claim the checks deny has no headroom
    # each task's measured results over the three runs, for a later run's report to show beside its own
    assert exp["tasks"]["fix-add"] == {"attempts": 3, "passed": 3, "verified": 3, "misreported": 0}
    assert limits["min_quality"] == pytest.approx(3.0)
    tokens = [m["values"]["tokens"] for m in exp["measured"]]
    assert limits["max_tokens"] == pytest.approx(max(tokens) * 1.35, abs=1e-3)
    assert [m["run_id"] for m in exp["measured_on"]] == [r.name for r in runs]
    assert all(m["commit"] and m["machine"] for m in exp["measured_on"])
    for run in runs:  # found by model and suite, no --expect needed
        code, out = _invoke(tasks_gate_command, str(run), "--enforce")
        assert code == 0 and "gate met" in out, out
    worse = _one_run(tmp_path, tasks_dir, False, 1, 1)  # no fix, a claim anyway, graded 1
    code, out = _invoke(tasks_gate_command, str(worse), "--enforce")
    assert code == 2, out
    assert "MISS" in out and "passed 0 >= 1" in out and "quality 1 >= 3" in out
    assert "misreported 1 <= 0" in out  # "Fixed add; pytest: 1 passed." with no fix and no test run
    report = (worse / "report.md").read_text()
    assert "- misreported 1 of 2 answers" in report
    # the run beside main's measured results, per task: this run, then main's three runs
    assert "| fix-add | 0/1 | 3/3 | 0 | 3 | 1 | 0 |" in report and str(out_file) in report
    code, out = _invoke(tasks_gate_command, str(worse))  # not enforced: reported, exit 0
    assert code == 0 and "gate missed" in out


def test_not_gated_yet_a_missing_named_file_and_gate_propose(
    tmp_path: Path, three_runs: tuple[Path, list[Path]]
) -> None:
    run = three_runs[1][0]
    code, out = _invoke(tasks_gate_command, str(run), "--enforce")
    assert code == 0 and "not gated yet" in out and ".core.json" in out
    result = CliRunner().invoke(tasks_gate_command, [str(run), "--expect", str(tmp_path / "nope.json")])
    assert result.exit_code != 0 and "nope.json" in str(result.exception)
    proposed = tmp_path / "p.json"
    code, out = _invoke(tasks_gate_command, str(run), "--propose", str(proposed))
    assert code == 0 and proposed.is_file()
    code, out = _invoke(tasks_gate_command, str(run), "--expect", str(proposed), "--enforce")
    assert code == 0 and "measured on commit" in out


def test_an_expectations_file_without_measured_on_is_refused(
    tmp_path: Path, three_runs: tuple[Path, list[Path]]
) -> None:
    run = three_runs[1][0]
    bare = tmp_path / "bare.json"
    card = json.loads((run / "scorecard.json").read_text())
    key = {"benchmark": "tasks", "suite": "core", "model": card["config"]["model"]}
    bare.write_text(
        json.dumps({**key, "judge_model": card["config"]["judge_model"], "limits": {"min_passed": 1}})
    )
    result = CliRunner().invoke(tasks_gate_command, [str(run), "--expect", str(bare)])
    assert "measured_on" in str(result.exception) and "bare.json" in str(result.exception)


def test_propose_needs_out_naming_the_variable(tmp_path: Path) -> None:
    result = CliRunner().invoke(tasks_propose_command, [str(tmp_path)])
    assert "--out" in str(result.exception) and "ASSAY_PROPOSE_OUT" in str(result.exception)
