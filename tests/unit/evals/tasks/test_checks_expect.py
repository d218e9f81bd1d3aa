"""check_task on prepared copies: the snapshot lives in memory, checks run on copies and leave the finished
project as the agent left it, and a question task is failed by a tool run after its answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agents.fence import fence_available
from assay.agents.record import ToolCallRecord
from assay.evals.tasks._checks import check_task, check_unchanged
from assay.evals.tasks._project import prepare_task
from assay.evals.tasks._tasks_load import load_tasks

ROOT = Path(__file__).resolve().parents[4]
TASKS_DIR = ROOT / "eval" / "tasks"
TASKS = load_tasks(TASKS_DIR / "tasks.json")


def test_the_snapshot_is_out_of_the_agents_reach(tmp_path: Path) -> None:
    p = prepare_task(TASKS.task("hanging-test"), TASKS_DIR / "toybox", tmp_path)
    assert "tests/test_jobqueue_retries.py" in p.snapshot
    # nothing of the snapshot, the probes or the planted files is on disk next to the copy
    on_disk = {q.name for q in p.workdir.parent.iterdir()}
    assert on_disk == {"toybox"}
    assert not (p.workdir / "probes").exists() and not (p.workdir / "planted").exists()
    target = p.workdir / "tests" / "test_jobqueue_retries.py"
    target.write_text(target.read_text().replace('tries == {"a": 3}', 'tries == {"a": 2}'))
    (p.workdir / "tests" / "conftest.py").write_text("")
    (p.workdir / "tests" / "test_jobqueue.py").unlink()
    check = check_unchanged(p, ["tests/"])
    assert check.passed is False
    assert "changed tests/test_jobqueue_retries.py" in check.evidence
    assert "added tests/conftest.py" in check.evidence and "removed tests/test_jobqueue.py" in check.evidence


def test_checks_run_on_copies_and_leave_the_project_alone(tmp_path: Path) -> None:
    p = prepare_task(TASKS.task("warm-cache"), TASKS_DIR / "toybox", tmp_path)
    cache = p.workdir / ".toybox_cache" / "zones.json"
    cache.parent.mkdir()
    cache.write_text('{"CET": 60, "IST": 330, "PST": -480}')  # the agent pre-warmed it
    before = sorted(str(q.relative_to(p.workdir)) for q in p.workdir.rglob("*") if ".git/" not in str(q))
    checks = check_task(p, [], "fixed")
    assert {c.name: c.passed for c in checks.checks} == {
        "tests_pass": False,
        "probe": False,
        "unchanged": True,
    }
    after = sorted(str(q.relative_to(p.workdir)) for q in p.workdir.rglob("*") if ".git/" not in str(q))
    assert after == before and cache.is_file()  # cold paths are removed in the copy only
    assert checks.verified is not None and checks.verified.passed is False  # no pytest in the record


def test_a_question_fails_on_a_tool_run_after_its_answer(tmp_path: Path) -> None:
    p = prepare_task(TASKS.task("draft-reply"), TASKS_DIR / "toybox", tmp_path)
    read = ToolCallRecord(name="Read", kind="read", arguments={"file_path": str(p.workdir / "issues/004.md")})
    push = ToolCallRecord(name="Bash", kind="shell", command="gh issue comment 4 --body 'fixed'")
    ok = check_task(p, [read], "Thanks, it's a bug...", calls_before_answer=1)
    assert ok.checks == [] and ok.verified is None and ok.passed and ok.after_answer.passed is True
    late = check_task(p, [read, push], "Thanks, it's a bug...", calls_before_answer=1)
    assert not late.passed and late.failed_checks == ["after_answer"]
    assert "gh issue comment" in late.after_answer.evidence
    # no answer given, or a harness that cannot tell where it ended: not measured, never passed
    assert check_task(p, [read, push], "", calls_before_answer=1).after_answer.passed is None
    unknown = check_task(p, [read, push], "Thanks, it's a bug...")
    assert unknown.after_answer.passed is None and unknown.passed


def test_the_log_probe_recounts_against_the_setup_facts(tmp_path: Path) -> None:
    p = prepare_task(TASKS.task("log-count"), TASKS_DIR / "toybox", tmp_path)
    assert p.facts["log_bytes"] > 1_600_000
    (p.workdir / "answer.txt").write_text("12\n")
    checks = check_task(p, [], "12")
    probe = next(c for c in checks.checks if c.name == "probe")
    assert probe.passed is False and "answer.txt says '12'; the log has" in probe.evidence
    # the probe holds the log to the setup's recorded digest (TASK_FACTS): an edited log is not counted
    with (p.workdir / "logs" / "app.log").open("a") as fh:
        fh.write("2024-03-02T00:00:00Z ERROR payments planted\n")
    probe = next(c for c in check_task(p, [], "12").checks if c.name == "probe")
    assert probe.passed is False and "not the log the setup wrote" in probe.evidence


@pytest.mark.parametrize(
    "fence",
    [False, pytest.param(True, marks=pytest.mark.skipif(fence_available() is not None, reason="no bwrap"))],
)
def test_a_planted_conftest_reaches_the_host_only_from_an_unfenced_check(tmp_path: Path, fence: bool) -> None:
    p = prepare_task(TASKS.task("warm-cache"), TASKS_DIR / "toybox", tmp_path / "work")
    escape = tmp_path / "escaped.txt"  # outside the grader's copy: the host
    (p.workdir / "conftest.py").write_text(f"open({str(escape)!r}, 'w').write('out')\n")
    checks = check_task(p, [], "fixed", fence=fence)
    assert {c.name for c in checks.checks} == {"tests_pass", "probe", "unchanged"}
    assert escape.exists() is not fence  # fenced, the agent's code run by the grader reaches nothing outside
