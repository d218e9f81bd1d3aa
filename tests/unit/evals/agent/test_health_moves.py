"""Health's CI tier moves and the judged headroom, on folded scorecards of the agent benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.evals import health
from assay.gate import health_markdown
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.gate._simulate import simulated_meta
from assay.runs.records import SubjectConfig

CATS = {"easy": "qa", "hard": "qa", "wob": "qa", "old": "qa", "gone": "qa"}
TIERS = {
    "tiers": {
        "smoke": {"scenarios": ["easy", "wob"]},
        "full": {"scenarios": ["easy", "hard", "wob"]},
        "backlog": {"scenarios": {"old": "used to fail"}},
    },
    "excluded": {"gone": "retired"},
}


def agent_run(
    root: Path, name: str, model: str, outcomes: dict[str, str], scenarios_dir: Path | None = None
) -> Path:
    cfg = SubjectConfig(subject="reference", model=model, judge_model="j")
    sc = card(outcomes, config=cfg, categories=CATS, run_id=name, benchmark="agent")
    meta = simulated_meta(list(outcomes), sc.iterations, run_id=name, benchmark="agent", config=cfg)
    meta = meta.model_copy(update={"options": {"benchmark": {"scenarios_dir": str(scenarios_dir or "")}}})
    d = root / name
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    (d / "meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return d


@pytest.fixture
def suite_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no eval/ci_tiers.json here
    (tmp_path / "suite" / "scenarios").mkdir(parents=True)
    (tmp_path / "suite" / "ci_tiers.json").write_text(json.dumps(TIERS))
    return tmp_path / "suite" / "scenarios"


def test_moves_from_the_tiers_file_next_to_the_recorded_scenarios(tmp_path: Path, suite_dir: Path) -> None:
    big = agent_run(
        tmp_path,
        "big",
        "big",
        {"easy": "PPP", "hard": "FFF", "wob": "PFP", "old": "PPP", "gone": "FFF"},
        suite_dir,
    )
    small = agent_run(
        tmp_path,
        "small",
        "small",
        {"easy": "PPP", "hard": "FFF", "wob": "FFF", "old": "FFF", "gone": "FFF"},
        suite_dir,
    )
    rep = health([], strong=[big], weak=[small])
    assert rep.tiers_file == str(suite_dir.parent / "ci_tiers.json")
    assert [(m.scenario, m.flag, m.target) for m in rep.moves] == [
        ("easy", "saturated", "backlog"),
        ("hard", "always-fail", "backlog"),
        ("wob", "flaky", "full"),
        ("old", "stable-pass", "full"),
    ]  # "gone" always fails too, but it is excluded: it runs in no tier
    assert rep.moves[1].reason == "fails every attempt of the strongest model (big 0/3)"
    # one model passing every attempt says nothing about separating models: flagged, not moved
    solo = health([big])
    assert solo.flagged("saturated") == ["easy", "old"]
    assert [(m.scenario, m.flag) for m in solo.moves] == [("hard", "always-fail"), ("wob", "flaky")]
    # the same flags with the scenarios already where they belong: nothing to move
    placed = tmp_path / "placed.json"
    placed.write_text(
        json.dumps(
            {
                "tiers": {
                    "full": {"scenarios": ["wob", "old"]},
                    "backlog": {"scenarios": {"easy": "saturated", "hard": "out of reach"}},
                },
                "excluded": {"gone": "retired"},
            }
        )
    )
    again = health([], strong=[big], weak=[small], tiers=placed)
    assert again.moves == [] and "No scenario needs a move." in health_markdown(again)


def test_no_tiers_file_and_non_agent_runs_say_so(tmp_path: Path, suite_dir: Path) -> None:
    lone = agent_run(tmp_path, "lone", "m", {"easy": "PP"}, tmp_path / "elsewhere" / "scenarios")
    rep = health([lone])
    assert rep.moves == [] and rep.tiers_file is None
    assert rep.moves_note == (
        f"no move suggestions: no tiers file at {tmp_path / 'elsewhere' / 'ci_tiers.json'} "
        "(name one with --tiers FILE)"
    )
    assert rep.moves_note in health_markdown(rep)
    other = agent_run(tmp_path, "other", "n", {"easy": "PP"}, suite_dir)
    with pytest.raises(ConfigError, match="different scenarios folders"):
        health([lone, other])
    sim = tmp_path / "sim"
    sim.mkdir()
    (sim / "scorecard.json").write_text(card({"easy": "PP"}).model_dump_json())
    rep = health([sim])
    assert rep.moves_note == "no move suggestions: the 'sim' benchmark has no CI tiers file"
    with pytest.raises(ConfigError, match="--tiers: the 'sim' benchmark has no CI tiers"):
        health([sim], tiers=suite_dir.parent / "ci_tiers.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"tiers": ')
    with pytest.raises(ConfigError, match="invalid JSON") as exc:
        health([other], tiers=bad)
    assert str(bad) in str(exc.value)


def test_agent_headroom_is_over_judged_attempts(tmp_path: Path, suite_dir: Path) -> None:
    # the agent broke (ERROR) on one attempt of "easy": never judged, so not in the judged pass rate
    run = agent_run(tmp_path, "r", "m", {"easy": "PPE", "hard": "PFF"}, suite_dir)
    (qa,) = health([run]).categories
    assert qa.rate_over == "judged" and qa.strongest_pass_rate == pytest.approx(3 / 5)
    assert "strongest model's judged pass rate" in health_markdown(health([run]))
    sim = tmp_path / "sim"
    sim.mkdir()
    (sim / "scorecard.json").write_text(card({"easy": "PPE", "hard": "PFF"}).model_dump_json())
    (cat,) = health([sim]).categories
    assert cat.rate_over == "measured" and cat.strongest_pass_rate == pytest.approx(3 / 6)
