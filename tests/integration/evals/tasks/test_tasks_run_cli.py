"""`assay eval tasks run` end to end offline: the reference agent on a scripted model through the gateway, the
code checks on the finished copy, the batched judge; an unusable grade, an outage, and missing settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tasks_fixtures import agent_script, grades, run_tasks, write_script

from assay.cli._tasks import tasks_judge_command, tasks_run_command
from assay.runs._journal import latest_attempts, read_journal


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_SUITE", "ASSAY_TASKS"):
        monkeypatch.delenv(name, raising=False)


def _run(
    tmp_path: Path, tasks_dir: Path, agent: list, judge: list, *extra: str
) -> tuple[int, str, Path | None]:
    agent_spec = write_script(tmp_path / "agent.yaml", agent)
    return run_tasks(tmp_path, tasks_dir, agent_spec, write_script(tmp_path / "judge.yaml", judge), *extra)


def _card(run_dir: Path) -> dict:
    return json.loads((run_dir / "scorecard.json").read_text())


def test_run_checks_the_finished_copy_and_judges_in_one_batched_call(tmp_path: Path, tasks_dir: Path) -> None:
    code, out, run_dir = _run(tmp_path, tasks_dir, agent_script(), [grades(fix_add=4, explain=5)])
    assert code == 0, out
    assert run_dir is not None
    latest = latest_attempts(read_journal(run_dir / "results.jsonl"))
    fix, explain = latest[("fix-add", 0)], latest[("explain", 0)]
    assert fix.status == "PASS" and fix.details["verified"] is True
    assert "+    return a + b" in fix.details["diff"]
    assert [c["name"] for c in fix.details["checks"]] == ["tests_pass", "unchanged", "after_answer"]
    # the question is graded by the judge on its point (established, quoted from its answer)
    assert explain.status == "PASS" and explain.details["grade"]["scores"]["claims"] == 5
    assert explain.details["grade"]["points"][0]["quoted"] is True
    judgement = json.loads((run_dir / "judge.json").read_text())
    assert judgement["calls"] == 1 and len(judgement["grades"]) == 2
    # what the judge was shown: each task's scope files as given (the coding task's tests beside its code)
    shown = {g["task_id"]: g["shown"] for g in judgement["grades"]}
    assert [f["path"] for f in shown["fix-add"]["files"]] == ["calc.py", "tests/test_calc.py"]
    assert all(f["shown"] == f["chars"] > 0 for f in shown["fix-add"]["files"])
    assert [f["path"] for f in shown["explain"]["files"]] == ["calc.py", "tests/test_calc.py"]
    report = (run_dir / "report.md").read_text()
    assert "### What the judge was shown" in report and "calc.py (32), tests/test_calc.py (" in report
    s = _card(run_dir)["summary"]["metrics"]
    assert s["quality"]["value"] == 4.5 and s["quality_failed"]["value"] == 0
    assert s["unverified"]["value"] == 0 and s["verified"]["value"] == 1.0
    assert "after judging: PASS 2" in out


def test_a_claim_with_no_work_fails_the_checks_and_is_unverified_only_when_edited(
    tmp_path: Path, tasks_dir: Path
) -> None:
    code, out, run_dir = _run(tmp_path, tasks_dir, agent_script(fix=False), [grades(fix_add=2, explain=4)])
    assert code == 0, out
    assert run_dir is not None
    fix = latest_attempts(read_journal(run_dir / "results.jsonl"))[("fix-add", 0)]
    assert fix.status == "FAIL" and "tests_pass" in fix.details["reason"]
    assert fix.details["verified"] is False and fix.details["edited"] is False
    card = _card(run_dir)
    assert card["extra"]["tasks"]["unverified"] == 0  # nothing changed, so no unverified change
    assert card["summary"]["metrics"]["quality_failed"]["value"] == 1  # the 2s fail the quality checks


def test_an_unusable_grade_leaves_tasks_unjudged_and_failing_never_skipped(
    tmp_path: Path, tasks_dir: Path
) -> None:
    garbage = [{"text": "I think they are fine."}] * 3  # the first call and both retries
    code, out, run_dir = _run(tmp_path, tasks_dir, agent_script(), garbage)
    assert code == 0, out
    assert run_dir is not None
    judgement = json.loads((run_dir / "judge.json").read_text())
    assert judgement["calls"] == 3
    assert all(g["scores"] is None and "no JSON object" in g["unjudged_reason"] for g in judgement["grades"])
    card = _card(run_dir)
    assert card["extra"]["tasks"]["unjudged"] == 2 and card["summary"]["counts"]["SKIPPED"] == 0
    assert card["summary"]["metrics"]["quality_failed"]["value"] == 2
    assert card["summary"]["metrics"]["quality"]["value"] is None
    explain = latest_attempts(read_journal(run_dir / "results.jsonl"))[("explain", 0)]
    assert explain.status == "FAIL" and explain.details["reason"].startswith("unjudged:")


def test_no_judge_leaves_the_question_unmeasured_until_judge_runs(tmp_path: Path, tasks_dir: Path) -> None:
    code, out, run_dir = _run(
        tmp_path, tasks_dir, agent_script(), [grades(fix_add=4, explain=4)], "--no-judge"
    )
    assert code == 0, out
    assert run_dir is not None and not (run_dir / "judge.json").exists()
    card = _card(run_dir)
    assert card["summary"]["counts"]["SKIPPED"] == 1 and "quality" not in card["summary"]["metrics"]
    judged = CliRunner().invoke(tasks_judge_command, [str(run_dir)], catch_exceptions=False)
    assert judged.exit_code == 0, judged.output
    assert _card(run_dir)["summary"]["counts"]["PASS"] == 2


def test_an_outage_mid_run_is_infra_error_stops_the_run_and_resumes(tmp_path: Path, tasks_dir: Path) -> None:
    down = [{"error": "connect"}] * 20  # every call of the agent's model fails to connect
    code, out, run_dir = _run(tmp_path, tasks_dir, down, [grades(fix_add=4, explain=4)])
    assert code == 3, out
    assert run_dir is not None
    statuses = {k[0]: a.status for k, a in latest_attempts(read_journal(run_dir / "results.jsonl")).items()}
    assert statuses["fix-add"] == "INFRA_ERROR" and statuses["explain"] == "NOT_RUN"
    assert f"assay eval tasks run --resume {run_dir}" in out
    # the backend is back: the resume runs what was not measured, under the recorded settings, and judges
    write_script(tmp_path / "agent.yaml", agent_script())
    resumed = CliRunner().invoke(tasks_run_command, ["--resume", str(run_dir)], catch_exceptions=False)
    assert resumed.exit_code == 0, resumed.output
    statuses = {k[0]: a.status for k, a in latest_attempts(read_journal(run_dir / "results.jsonl")).items()}
    assert statuses == {"fix-add": "PASS", "explain": "PASS"}
    refused = CliRunner().invoke(tasks_run_command, ["--resume", str(run_dir), "--model", "scripted/x.yaml"])
    assert "--model" in str(refused.exception) and "recorded settings" in str(refused.exception)


def test_missing_model_names_the_flag_and_the_variable(tmp_path: Path, tasks_dir: Path) -> None:
    result = CliRunner().invoke(tasks_run_command, ["--tasks-file", str(tasks_dir / "tasks.json")])
    assert result.exit_code != 0
    assert "--model" in str(result.exception) and "ASSAY_MODEL" in str(result.exception)


def test_every_setting_reads_its_variable(
    tmp_path: Path, tasks_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TASKS", "nope")
    monkeypatch.setenv("ASSAY_MODEL", write_script(tmp_path / "a.yaml", agent_script()))
    result = CliRunner().invoke(tasks_run_command, ["--tasks-file", str(tasks_dir / "tasks.json")])
    assert "--tasks nope: not in suite core" in str(result.exception)


def test_full_access_is_refused_for_the_reference_agent(tmp_path: Path, tasks_dir: Path) -> None:
    code_args = ["--full-access", "--model", "scripted/x.yaml", "--tasks-file", str(tasks_dir / "tasks.json")]
    result = CliRunner().invoke(tasks_run_command, code_args)
    assert "--full-access" in str(result.exception) and "reference agent" in str(result.exception)


@pytest.mark.parametrize("what", ["agent", "harness"])
def test_a_harness_or_agent_that_breaks_is_an_error_saying_which(
    tmp_path: Path, tasks_dir: Path, breaking_harness: dict[str, str], what: str
) -> None:
    code, out, run_dir = _run(
        tmp_path,
        tasks_dir,
        agent_script(),
        [grades(fix_add=4, explain=4)],
        "--tasks",
        "fix-add",
        "--no-judge",
        "--harness",
        breaking_harness[what],
    )
    assert code == 0, out  # measured against the subject, not a stopped run
    assert run_dir is not None
    (att,) = latest_attempts(read_journal(run_dir / "results.jsonl")).values()
    assert att.status == "ERROR" and att.broken_by == what, att
    assert att.details["reason"].startswith(f"the {what} broke: ")
    assert _card(run_dir)["summary"]["pass_rate"] == 0.0


def test_an_outage_behind_a_harness_stays_infra_error(
    tmp_path: Path, tasks_dir: Path, breaking_harness: dict[str, str]
) -> None:
    code, out, run_dir = _run(
        tmp_path,
        tasks_dir,
        agent_script(),
        [grades(fix_add=4, explain=4)],
        "--tasks",
        "fix-add",
        "--no-judge",
        "--harness",
        breaking_harness["outage"],
    )
    assert code == 3, out
    assert run_dir is not None
    (att,) = latest_attempts(read_journal(run_dir / "results.jsonl")).values()
    assert att.status == "INFRA_ERROR" and att.broken_by is None, att
