"""`assay eval tasks run --suite swebench` end to end on the instance the tests build: the reference agent on a
scripted model fixes its isolated checkout, its diff becomes a line of predictions.jsonl, the local grader
resolves it (PASS, labelled grader: local); an agent that changes nothing fails at once; --grader official
without Docker is refused before anything runs."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import swebench_fixture as fx
import yaml
from click.testing import CliRunner

from assay.cli._tasks import tasks_run_command
from assay.errors import ConfigError
from assay.evals.tasks._swebench import RULES
from assay.runs._journal import latest_attempts, read_journal


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return fx.shared_world(tmp_path_factory.getbasetemp())


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, world: dict[str, Path], tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(world["wheels"]))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_SUITE", "ASSAY_INSTANCES", "ASSAY_GRADER"):
        monkeypatch.delenv(name, raising=False)
    yield


def run(
    tmp_path: Path, world: dict[str, Path], replies: list[dict[str, Any]], *extra: str
) -> tuple[int, str, Path]:
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump({"replies": replies}))
    args = [
        "--suite", "swebench", "--dataset", str(world["dataset"]), "--instances", fx.IID,
        "--repo-source", str(world["mirrors"]), "--repo-specs", str(world["specs"]),
        "--model", f"scripted/{tmp_path / 'agent.yaml'}", "--results-dir", str(tmp_path / "results"),
        "--work-root", str(world["work_root"]), "--no-judge", *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    found = [
        ln.split(": ", 1)[1].strip() for ln in result.output.splitlines() if ln.startswith("run directory: ")
    ]
    assert found, result.output
    return result.exit_code, result.output, Path(found[-1])


FIX = [
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "tinycalc/__init__.py", "old": "a - b", "new": "a + b"},
            }
        ]
    },
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "NOTES.md", "content": "add fixed\n"}}]},
    {"text": "Fixed add: it subtracted b."},
]


def test_the_agents_fix_is_predicted_and_resolved_by_the_local_grader(
    tmp_path: Path, world: dict[str, Path]
) -> None:
    code, out, run_dir = run(tmp_path, world, FIX, "--grader", "local")
    assert code == 0, out
    att = latest_attempts(read_journal(run_dir / "results.jsonl"))[(fx.IID, 0)]
    assert att.status == "PASS", att.details.get("reason")
    assert att.details["grader"] == "local" and att.details["grade"]["fail_to_pass"] == [1, 1]
    assert att.details["request"] == f"add(2, 3) returns -1 instead of 5.\n\n{RULES}"  # the issue + the rules
    (line,) = (run_dir / "predictions.jsonl").read_text().splitlines()
    pred = json.loads(line)
    assert set(pred) == {"instance_id", "model_name_or_path", "model_patch"}
    assert pred["instance_id"] == fx.IID and pred["model_name_or_path"].startswith("reference/scripted/")
    assert (
        "+    return a + b" in pred["model_patch"] and "+++ b/NOTES.md" in pred["model_patch"]
    )  # new file too
    assert att.details["venv_installed"] == [] and att.details["compliance"] == []
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["config"]["extra"]["grader"] == "local"
    settings = json.loads((run_dir / "swebench.json").read_text())
    assert settings["grader"] == "local" and settings["instances"] == [fx.IID]
    report = (run_dir / "report.md").read_text()  # the SWE-bench section, after the tasks summary
    assert report.index("## Tasks") < report.index("## SWE-bench")
    assert "- grader: local (a venv built from the swebench package's install and test specs)" in report
    assert "- Local and official verdicts are never compared" in report
    assert "- resolved: **100.0%** of 1 measured attempts (95% Wilson interval 20.7% – 100.0%)" in report
    assert f"| {fx.IID} | 0 | PASS | yes | yes | 1/1 | 1/1 | none | - |" in report
    # it counts because the grader was validated on the instance first (gold resolves, empty does not)
    assert att.details["validation"]["validated"] is True and att.details["grade"]["validated"] is True
    assert card["extra"]["swebench_validation"] == {
        "instances": 1, "validated": 1, "not_validated": {}, "not_asked": 0,
    }  # fmt: skip
    assert "- grader validated on **1 of 1** instances (gold resolves, empty does not, here" in report


def test_an_instance_whose_grader_is_not_validated_is_not_run(tmp_path: Path, world: dict[str, Path]) -> None:
    # the same instance with a gold patch that does not fix it: the grader cannot show it works there
    row = json.loads(world["dataset"].read_text())
    row["patch"] = fx.wrong_patch(world["root"])
    dataset = tmp_path / "wrong-gold.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump({"replies": FIX}))
    args = [
        "--suite", "swebench", "--dataset", str(dataset), "--instances", fx.IID, "--grader", "local",
        "--repo-source", str(world["mirrors"]), "--repo-specs", str(world["specs"]),
        "--model", f"scripted/{tmp_path / 'agent.yaml'}", "--results-dir", str(tmp_path / "results"),
        "--work-root", str(world["work_root"]), "--no-judge",
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    run_dir = next((tmp_path / "results").iterdir())
    att = latest_attempts(read_journal(run_dir / "results.jsonl"))[(fx.IID, 0)]
    assert att.status == "NOT_RUN", result.output
    why = "the grader is not validated on this instance: the gold patch does not resolve it here"
    assert (att.skip_reason or "").startswith(why)
    assert "diff" not in att.details and not (run_dir / "predictions.jsonl").exists()  # the agent never ran
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["summary"]["measured"] == 0 and card["extra"]["swebench_validation"]["validated"] == 0
    report = (run_dir / "report.md").read_text()
    assert "- grader validated on **0 of 1** instances" in report
    assert f"  - not validated: {fx.IID}: the gold patch does not resolve it here" in report
    assert "- resolved: nothing graded yet" in report


def test_every_swebench_artifact_is_scrubbed(
    tmp_path: Path, world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.cli._tasks_swebench import tasks_swebench_command

    secret = "s3cr3t-value-of-the-user-0123456789"
    monkeypatch.setenv("ASSAY_TEST_API_KEY", secret)
    leak = [{"tool_calls": [{"name": "write_file", "arguments": {
        "path": "LEAK.md", "content": f"key {secret}\nanthropic sk-ant-{'a' * 30}\n"}}]}]  # fmt: skip
    code, out, run_dir = run(tmp_path, world, leak + FIX, "--no-evaluate")
    assert code == 0, out
    graded = CliRunner().invoke(
        tasks_swebench_command, [str(run_dir), "--grader", "local"], catch_exceptions=False
    )
    assert graded.exit_code == 0, graded.output
    for name in ("predictions.jsonl", "grades-local.json", "swebench.json", "results.jsonl"):
        text = (run_dir / name).read_text()
        assert secret not in text and "sk-ant-aaaa" not in text, name
    assert "[REDACTED]" in (run_dir / "predictions.jsonl").read_text()


def test_an_empty_diff_fails_at_once(tmp_path: Path, world: dict[str, Path]) -> None:
    code, out, run_dir = run(tmp_path, world, [{"text": "Nothing to change."}], "--grader", "local")
    assert code == 0, out
    att = latest_attempts(read_journal(run_dir / "results.jsonl"))[(fx.IID, 0)]
    assert att.status == "FAIL" and att.details["reason"] == "the agent left no change (an empty diff)"
    assert "grade" not in att.details  # no grader ran
    assert json.loads((run_dir / "predictions.jsonl").read_text())["model_patch"] == ""
    report = (run_dir / "report.md").read_text()
    assert "- resolved: **0.0%** of 1 measured attempts (95% Wilson interval 0.0% – 79.3%)" in report
    assert (
        f"| {fx.IID} | 0 | FAIL | - | - | - | - | none | the agent left no change (an empty diff) |" in report
    )


def test_official_grader_without_docker_is_refused_before_anything_runs(
    tmp_path: Path, world: dict[str, Path]
) -> None:
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump({"replies": FIX}))
    args = [
        "--suite",
        "swebench",
        "--dataset",
        str(world["dataset"]),
        "--instances",
        fx.IID,
        "--grader",
        "official",
    ]
    args += ["--model", f"scripted/{tmp_path / 'agent.yaml'}", "--results-dir", str(tmp_path / "results")]
    with pytest.raises(
        ConfigError, match=r"^--grader official needs a Docker daemon: no Docker daemon socket at "
    ):
        CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    assert not (tmp_path / "results").exists()


def test_swebench_options_are_refused_on_a_toybox_suite(tmp_path: Path) -> None:
    args = ["--suite", "core", "--instances", fx.IID, "--model", "scripted/x.yaml"]
    with pytest.raises(ConfigError, match="--instances applies to --suite swebench, not core"):
        CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)


def test_the_judge_alone_reads_the_gold_patch_and_never_decides_the_pass(
    tmp_path: Path, world: dict[str, Path]
) -> None:
    row = json.loads(world["dataset"].read_text())
    marker = "# upstream-fix-7f3a"
    row["patch"] = row["patch"].replace("+    return a + b", f"+    return a + b  {marker}")
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text(json.dumps(row) + "\n")
    grade = {"task": fx.IID, "instructions": 1, "quality": 1, "reasoning": 1, "claims": 1, "note": "poor"}
    judge = {"replies": [{"regex": f"(?s)upstream fix.*{marker}", "text": json.dumps({"tasks": [grade]})}]}
    (tmp_path / "judge.yaml").write_text(yaml.safe_dump({**judge, "default": {"text": "?"}}))
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump({"replies": FIX}))
    args = [
        "--suite", "swebench", "--dataset", str(dataset), "--instances", fx.IID, "--grader", "local",
        "--repo-source", str(world["mirrors"]), "--repo-specs", str(world["specs"]),
        "--model", f"scripted/{tmp_path / 'agent.yaml'}", "--judge-model", f"scripted/{tmp_path / 'judge.yaml'}",
        "--results-dir", str(tmp_path / "results"), "--work-root", str(world["work_root"]),
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "results").iterdir()
    judged = json.loads((run_dir / "judge.json").read_text())
    assert [g["scores"]["quality"] for g in judged["grades"]] == [1]  # it saw the gold patch and graded
    att = latest_attempts(read_journal(run_dir / "results.jsonl"))[(fx.IID, 0)]
    assert att.status == "PASS"  # the tests decided; a poor grade changes nothing
    outside = "".join(p.read_text() for p in run_dir.iterdir() if p.is_file() and p.name != "judge.json")
    assert marker not in outside and marker not in json.dumps(att.details)


def test_under_the_fence_the_instance_cache_and_host_packages_are_hidden(
    tmp_path: Path, world: dict[str, Path]
) -> None:
    from assay.agents.fence import fence_available

    # bubblewrap: installed by tests/install-agent-programs.sh
    assert fence_available() is None, fence_available()
    grade_dir = world["work_root"] / "swebench" / "grade"
    grade_dir.mkdir(parents=True, exist_ok=True)
    # the paths go in encoded: the reference agent refuses a command naming a path outside its workdir
    paths = base64.b64encode(json.dumps([str(world["dataset"]), str(grade_dir)]).encode()).decode()
    check = (
        "import base64, json, os; d, c = json.loads(base64.b64decode('" + paths + "')); "
        "print('dataset-' + ('SEEN' if os.path.exists(d) else 'hidden')); "
        "print('cache-' + ('SEEN' if os.path.exists(c) else 'hidden'))"
    )
    probe = (
        f'{{ python -c "{check}"; '
        "python -c 'import yaml' 2>/dev/null && echo host-SEEN || echo host-hidden; } > probe.txt"
    )
    replies = [{"tool_calls": [{"name": "run_shell", "arguments": {"command": probe}}]}, {"text": "probed"}]
    code, out, run_dir = run(tmp_path, world, replies, "--fence", "--no-evaluate")
    assert code == 0, out
    att = latest_attempts(read_journal(run_dir / "results.jsonl"))[(fx.IID, 0)]
    assert att.status == "SKIPPED" and "--no-evaluate" in (att.skip_reason or ""), att.details
    assert "+dataset-hidden\n+cache-hidden\n+host-hidden" in att.details["diff"], att.details["diff"]


def test_grading_a_run_later_refolds_it_and_another_grader_is_refused(
    tmp_path: Path, world: dict[str, Path]
) -> None:
    from assay.cli._tasks_swebench import tasks_swebench_command
    from assay.evals.tasks._swebench import _check_refold
    from assay.gate import not_comparable_reasons
    from assay.runs.records import Scorecard

    code, out, run_dir = run(tmp_path, world, FIX, "--no-evaluate")
    assert code == 0, out
    before = json.loads((run_dir / "scorecard.json").read_text())
    report = (run_dir / "report.md").read_text()
    assert "- grader: none yet (--no-evaluate)" in report and "- resolved: nothing graded yet" in report
    assert "- not counted: 0 NOT_RUN (not validated, or not buildable here), 1 ungraded" in report
    assert f"| {fx.IID} | 0 | SKIPPED | - | - | - | - | none | not graded (--no-evaluate)" in report
    assert (
        before["summary"]["counts"].get("SKIPPED") == 1 and before["config"]["extra"]["grader"] == "ungraded"
    )
    graded = CliRunner().invoke(
        tasks_swebench_command, [str(run_dir), "--grader", "local"], catch_exceptions=False
    )
    assert graded.exit_code == 0, graded.output
    assert f"{fx.IID} [model] resolved (grader: local; FAIL_TO_PASS 1/1, PASS_TO_PASS 1/1)" in graded.output
    att = latest_attempts(read_journal(run_dir / "results.jsonl"))[(fx.IID, 0)]
    assert att.status == "PASS" and att.details["grader"] == "local"
    report = (run_dir / "report.md").read_text()  # ungraded before; the refold rewrote it
    assert "- grader: local (" in report and "- resolved: **100.0%** of 1 measured" in report
    assert f"| {fx.IID} | 0 | PASS | yes | yes | 1/1 | 1/1 | none | - |" in report
    after = json.loads((run_dir / "scorecard.json").read_text())
    assert after["summary"]["counts"].get("PASS") == 1 and after["config"]["extra"]["grader"] == "local"
    assert after["suite_version"] != before["suite_version"]  # the grader is part of what the run measured
    assert json.loads((run_dir / "grades-local.json").read_text())["grader"] == "local"
    cards = [Scorecard.model_validate(c) for c in (before, after)]
    assert any("suite version" in r for r in not_comparable_reasons(*cards))  # compare refuses the pair
    with pytest.raises(
        ConfigError, match="was graded by grader: local; grader: official verdicts are never mixed"
    ):
        _check_refold(run_dir, "official")


def test_local_and_official_suites_differ(world: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.evals.tasks import _swebench_grade
    from assay.evals.tasks._run import TasksBenchmark

    options = {
        "model": "scripted/x.yaml",
        "dataset": str(world["dataset"]),
        "instances": fx.IID,
        "seed": None,
    }
    local = TasksBenchmark({**options, "grader": "local"}).load_suite("swebench")
    monkeypatch.setattr(
        _swebench_grade, "docker_problem", lambda timeout_s=10.0: None
    )  # as if Docker answered
    official = TasksBenchmark({**options, "grader": "official"}).load_suite("swebench")
    assert [c.id for c in local.cases] == [c.id for c in official.cases] == [fx.IID]
    assert local.version != official.version


def _edit(old: str, new: str) -> list[dict[str, Any]]:
    call = {"name": "edit_file", "arguments": {"path": "tinycalc/__init__.py", "old": old, "new": new}}
    return [{"tool_calls": [call]}, {"text": "done"}]


def test_grading_a_run_with_repeats_grades_each_attempt_by_its_own_prediction(
    tmp_path: Path, world: dict[str, Path]
) -> None:
    from assay.cli._tasks_swebench import tasks_swebench_command

    # the first attempt fixes add; the second changes mul instead (a wrong fix): two lines, two patches
    replies = _edit("a - b", "a + b") + _edit("a * b", "a + b")
    code, out, run_dir = run(tmp_path, world, replies, "--no-evaluate", "--repeats", "2")
    assert code == 0, out
    lines = [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert [p["instance_id"] for p in lines] == [fx.IID, fx.IID] and len(
        {p["model_patch"] for p in lines}
    ) == 2
    graded = CliRunner().invoke(
        tasks_swebench_command, [str(run_dir), "--grader", "local"], catch_exceptions=False
    )
    assert graded.exit_code == 0, graded.output
    assert "resolved 1/2 graded on a validated grader (0 not run)" in graded.output
    atts = latest_attempts(read_journal(run_dir / "results.jsonl"))
    by_pass = {i: atts[(fx.IID, i)] for i in (0, 1)}
    fixed = next(i for i, a in by_pass.items() if "-    return a - b" in a.details["diff"])
    assert by_pass[fixed].status == "PASS" and by_pass[1 - fixed].status == "FAIL"  # neither left ungraded
    assert by_pass[1 - fixed].details["grade"]["fail_to_pass"] == [0, 1]
    card = json.loads((run_dir / "scorecard.json").read_text())
    assert card["summary"]["counts"].get("SKIPPED", 0) == 0
    assert "- resolved: **50.0%** of 2 measured attempts" in (run_dir / "report.md").read_text()


def test_a_sampled_run_records_its_seed_as_the_runs(tmp_path: Path, world: dict[str, Path]) -> None:
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump({"replies": [{"text": "Nothing to change."}]}))
    args = [
        "--suite", "swebench", "--dataset", str(world["dataset"]), "--sample", "1", "--seed", "7",
        "--repo-source", str(world["mirrors"]), "--model", f"scripted/{tmp_path / 'agent.yaml'}",
        "--results-dir", str(tmp_path / "results"), "--work-root", str(world["work_root"]),
        "--no-judge", "--no-evaluate",
    ]  # fmt: skip
    result = CliRunner().invoke(tasks_run_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "results").iterdir()
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["seed"] == 7 and meta["options"]["benchmark"]["seed"] == 7  # one seed, not the run's 0
    assert meta["case_ids"] == [fx.IID]
