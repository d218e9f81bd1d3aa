"""`assay hillclimb --benchmark tasks` end to end on a tiny tasks file (two coding tasks fixing the same bug, one
question task whose answers are ground truth) with the scripted agent of the eval tasks tests, and refusals.

The planted defect: the profile lacks tools/edit_file.md, so the scripted agent's edit is not run and both
tasks fail their tests and probe. Round 1 restores it but also quotes the question task's point: rejected by
the code check, never measured. Round 2 restores it alone: train and held-out go stable-fail -> stable-pass,
kept. The fixer's prompt shows the train task's request and commands, never the probe's expected value, the
pytest output or anything of the held-out task.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from assay.agents.reference._profile import DEFAULT_PROFILE
from assay.cli import main

if TYPE_CHECKING:
    from conftest import Climb

#: task copies and the cached toolchain (the eval tasks tests' folder: the venv with pytest is made once)
WORK_ROOT = Path(tempfile.gettempdir()) / f"assay-tasks-tests-{os.getuid()}"
POINT = "it subtracts b from a instead of adding"
PROBE = """import sys
from calc import add
got = add(2, 3)
if got != 5:
    print(f"PROBE-EXPECTED add(2, 3) == 5, got {got}")
    sys.exit(1)
print("ok")
"""
EXPECT = {"tests_pass": True, "probe": "add_probe.py", "unchanged": ["tests/test_calc.py"]}
HELD_REQUEST = "The sum helper in calc.py is wrong; repair it and check with the tests."
TRAIN_REQUEST = "add(2, 3) returns -1. Fix it and run the tests."


def _tasks(root: Path) -> Path:
    (root / "toybox" / "tests").mkdir(parents=True)
    (root / "probes").mkdir()
    (root / "toybox" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "toybox" / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (root / "probes" / "add_probe.py").write_text(PROBE)
    coding = {"kind": "coding", "category": "bug_fix", "scope": ["calc.py", "tests/"], "expect": EXPECT}
    question = {
        "id": "why-negative",
        "kind": "question",
        "category": "explain",
        "prompt": "Why does add(2, 3) give -1?",
        "must_establish": [POINT],
        "reference_answer": "add returns a - b.",
        "wrong_answers": ["the tests are wrong", "nothing needs to change"],
    }
    data = {
        "version": 1,
        "suites": {
            s: ["fix-add", "repair-sum", "why-negative"] for s in ("core", "adversarial", "full", "everyday")
        },
        "tasks": [
            {"id": "fix-add", "prompt": TRAIN_REQUEST, **coding},
            {"id": "repair-sum", "prompt": HELD_REQUEST, **coding},
            question,
        ],
    }
    (root / "tasks.json").write_text(json.dumps(data, indent=2))
    return root / "tasks.json"


@pytest.fixture
def tasks_climb(climb: Climb) -> Climb:
    """conftest's climb repo made a tasks one: the profile whole but for tools/edit_file.md, the tasks file."""
    c = climb
    (c.profile / "tools" / "query_documents.md").write_text(c.description)  # the agent climb's defect undone
    c.description = (DEFAULT_PROFILE / "tools" / "edit_file.md").read_text()
    (c.profile / "tools" / "edit_file.md").unlink()  # the planted defect
    _tasks(c.repo / "tasks")
    c.git("add", "-A")
    c.git("commit", "-q", "-m", "tasks")
    return c


def _agent(root: Path) -> str:
    """The scripted agent: an edit and a claim, for every task (one task runs at a time)."""
    edit = {"path": "calc.py", "old": "a - b", "new": "a + b"}
    replies = [
        {"tool_calls": [{"name": "edit_file", "arguments": edit}]},
        {"text": "Fixed add; the tests pass."},
    ]
    (root / "agent.yaml").write_text(yaml.safe_dump({"replies": replies, "loop": True}))
    return f"scripted/{root / 'agent.yaml'}"


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _args(c: Climb, fixer: str, *extra: str) -> list[str]:
    return ["hillclimb", "--benchmark", "tasks", "--suite", "core", "--tasks-file", str(c.repo / "tasks" / "tasks.json"),
            "--work-root", str(WORK_ROOT), "--model", _agent(c.root), "--profile", str(c.profile),
            "--fixer", fixer, "--out", str(c.out), *extra]  # fmt: skip


def test_a_planted_defect_is_fixed_and_kept_a_leak_rejected_the_view_withholds(
    tasks_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    c = tasks_climb
    restore = f"write:tools/edit_file.md={c.description}"
    fixer = c.fixer([[restore, f"append:When a sum is negative, {POINT}."], [restore]])
    caps = ["--run-timeout", "120", "--max-steps", "5", "--agent-max-tokens", "300"]
    judge = "scripted/judge-recorded.yaml"  # recorded: coding tasks are graded in code
    code, _, err = _cli(_args(c, fixer, "--rounds", "2", "--judge-model", judge, *caps), capsys)
    assert code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert h["benchmark"] == "tasks" and h["suite"] == "core"
    # the eval options reach every measurement: caps, judge model, the edited profile
    config = json.loads((Path(h["baseline_train"]["run_dir"]) / "scorecard.json").read_text())["config"]
    limits = config["extra"]["agent_limits"]
    assert (limits["wall_clock_s"], limits["max_steps"], config["extra"]["agent_max_tokens"]) == (
        120.0,
        5,
        300,
    )
    assert config["judge_model"] == judge and config["extra"]["profile"] == str(c.profile)
    # the question task is no case (a measurement runs no judge step); one coding task on each side
    train, held = h["split"]["train"], h["split"]["heldout"]
    assert sorted(train + held) == ["fix-add", "repair-sum"] and len(train) == 1
    assert h["baseline_train"]["pass_rate"] == 0.0 and h["baseline_heldout"]["pass_rate"] == 0.0
    r1, r2 = h["rounds"]
    assert r1["outcome"] == "rejected" and "quotes ground truth" in r1["reason"]
    assert r1["train_after"] is None  # never measured
    assert r2["outcome"] == "kept" and r2["commit"]
    assert r2["train_after"]["pass_rate"] == 1.0 and r2["heldout_after"]["pass_rate"] == 1.0
    assert (c.profile / "tools" / "edit_file.md").read_text() == c.description
    assert POINT not in (c.profile / "system.md").read_text()
    assert c.git("status", "--porcelain").strip() == ""
    # what the fixer saw: the train task's request, its commands and failed checks, values withheld
    prompt = (c.out / "round-1" / "fixer-prompt.md").read_text()
    requests = {"fix-add": TRAIN_REQUEST, "repair-sum": HELD_REQUEST}
    assert requests[train[0]] in prompt and requests[held[0]] not in prompt
    assert "edit_file(calc.py) -> " in prompt  # the agent's commands, its edit not run
    assert '"check": "probe"' in prompt and "(the expected value is withheld)" in prompt
    journal = (Path(h["baseline_train"]["run_dir"]) / "results.jsonl").read_text()
    assert "PROBE-EXPECTED" in journal  # the probe's evidence holds the expected value ...
    assert "PROBE-EXPECTED" not in prompt and "assert" not in prompt  # ... and the fixer never sees it
    assert not any(t in prompt for t in ("fix-add", "repair-sum", "why-negative", "add_probe.py"))


def test_realfix_and_swebench_are_refused_by_name(
    tasks_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    c = tasks_climb
    for suite in ("realfix", "swebench"):
        code, _, err = _cli([*_args(c, c.fixer([])), "--suite", suite], capsys)
        assert code == 1 and f"--suite {suite}: hillclimb climbs the toybox suites" in err
        assert "not for hillclimb" in err
    code, _, err = _cli([*_args(c, c.fixer([])), "--scenarios", str(c.root)], capsys)
    assert code == 1 and "--scenarios: options of --benchmark agent, not tasks" in err
    assert c.git("branch", "--show-current").strip() == "main"
