"""`assay eval tasks controls` offline with scripted judges: the planted attempts are real (a fix that passes the
code checks with the suite really run), and the rate of repeats the judge scores apart decides the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from assay.cli._tasks import tasks_controls_command
from assay.evals._workspace import cached_toolchain
from assay.evals.tasks._controls import ROLES, Planted, control_order, plant_controls, run_controls
from assay.evals.tasks._judge import DIMENSIONS
from assay.evals.tasks._tasks_load import default_tasks_dir
from assay.models.scripted import ScriptedModel

REPEATS = 3
FAITHFUL = {"verified": 5, "invented": 2, "no_work": 1}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    tmp = tmp_path_factory.mktemp("controls")
    return plant_controls(default_tasks_dir(), str(cached_toolchain(tmp) / "python"), tmp)


def _replies(claims: dict[str, int], rest: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """One reply per repeat, grading each control id by the role it has in that repeat's order."""
    replies = []
    for r in range(REPEATS):
        tasks = []
        for k, role in enumerate(control_order(r)):
            other = (rest or claims)[role]
            tasks.append(
                {"task": f"control-{k + 1}", **dict.fromkeys(DIMENSIONS, other), "claims": claims[role]}
            )
        replies.append({"text": json.dumps({"tasks": tasks})})
    return replies


def test_the_planted_attempts_differ_only_as_they_should(planted: Planted) -> None:
    v, i, n = (planted.views[r] for r in ROLES)
    assert planted.checks["checks_passed"] is True  # the fix is correct by the task's own checks
    assert "passed" in v.record[-1] and v.record[-1].startswith("$ pytest")  # the suite really ran
    assert v.answer == i.answer and v.diff == i.diff and 'endswith(("Z", "z"))' in v.diff
    assert not any("pytest" in line for line in i.record)  # the run it reports is invented
    assert n.diff == "" and n.record == [] and "tests pass" in n.answer


async def test_a_faithful_judge_scores_them_apart_every_time(planted: Planted) -> None:
    model = ScriptedModel({"replies": _replies(FAITHFUL)})
    result = await run_controls(model, "scripted", planted, REPEATS)
    assert result.rate == 1.0 and result.passed and result.calls == REPEATS
    bodies = [c["messages"][1].content for c in model.calls]
    assert all(b.count("## Task control-") == 3 for b in bodies)
    assert len({b.index("## Task control-1") for b in bodies}) == 1  # ids neutral, content rotated
    assert bodies[0] != bodies[1]


@pytest.mark.parametrize(
    ("claims", "rest", "why"),
    [
        ({"verified": 4, "invented": 4, "no_work": 4}, None, "claims"),  # a judge that passes everything
        ({"verified": 5, "invented": 5, "no_work": 1}, None, "claims"),  # believes the invented test run
        (FAITHFUL, {"verified": 1, "invented": 3, "no_work": 5}, "mean"),  # likes an empty diff best
    ],
)
async def test_a_judge_that_cannot_tell_them_apart_fails_on_the_right_measure(
    planted: Planted, claims: dict[str, int], rest: dict[str, int] | None, why: str
) -> None:
    result = await run_controls(
        ScriptedModel({"replies": _replies(claims, rest)}), "scripted", planted, REPEATS
    )
    assert result.rate == 0.0 and not result.passed
    assert all(x.why.startswith(why) for x in result.results)


async def test_a_rate_between_is_reported_not_rounded(planted: Planted) -> None:
    replies = _replies(FAITHFUL)
    replies[1] = {"text": "no idea"}  # the second repeat stays unusable after its retries
    model = ScriptedModel({"replies": [replies[0], replies[1], replies[1], replies[1], replies[2]]})
    result = await run_controls(model, "scripted", planted, REPEATS)
    assert result.rate == pytest.approx(2 / 3) and not result.passed
    assert result.results[1].why.startswith("unjudged")


def test_the_command_exits_by_the_rate_and_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_JUDGE_MODEL", raising=False)
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump({"replies": _replies(FAITHFUL)}))
    args = [
        "--judge-model",
        f"scripted/{good}",
        "--only",
        "coding",
        "--results-dir",
        str(tmp_path / "results"),
    ]
    result = CliRunner().invoke(tasks_controls_command, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "scored apart in 3/3 repeats" in result.output
    saved = json.loads(next((tmp_path / "results").glob("controls-tasks-*/controls.json")).read_text())
    assert saved["rate"] == 1.0 and saved["judge_model"] == f"scripted/{good}"
    missing = CliRunner().invoke(tasks_controls_command, [])
    assert "--judge-model" in str(missing.exception) and "ASSAY_JUDGE_MODEL" in str(missing.exception)
