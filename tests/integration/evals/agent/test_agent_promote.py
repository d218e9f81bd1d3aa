"""`assay eval agent promote`: a draft moves into the suite only when complete and when the health rule, on real
runs of a strong and a weak model, finds it neither saturated nor impossible.

The runs are real `--suite full` runs (offline: the agent, simulator and judge are scripted models, the agent
reached through the gateway) of three drafts named with `--scenario` (a draft runs only when named). The strong
agent answers the good and the easy draft right; the weak one only the easy one; nobody the impossible one.
The code checks (a ground-truth fact) decide each verdict, as in any run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay.cli._main import cli
from assay.errors import ConfigError
from assay.evals.agent import AgentBenchmark
from assay.evals.agent._report import render_section
from assay.evals.agent.draft import draft_from_session, write_draft
from assay.evals.agent.promote import promote
from assay.evals.agent.scenario_load import load_scenario, load_scenarios
from assay.exec import RunOptions, run_benchmark
from assay.runs.rundir import load_scorecard

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SESSION = FIXTURES / "agents" / "claude_code_session_gateway.jsonl"
QUESTIONS = {
    "d-good": ("What is the launch code word?", "bluebird"),
    "d-easy": ("What colour is the sky in the brochure?", "blue"),
    "d-impossible": ("Which rock is the statue carved from?", "basalt"),
}
RIGHT = {"d-good": "The code word is bluebird.", "d-easy": "The sky is blue.", "d-impossible": "Granite."}
WEAK = {**RIGHT, "d-good": "I do not know the code word.", "d-impossible": "Marble."}
JUDGE_PASS = {
    "turns": [
        {
            "turn": 1,
            "scores": dict.fromkeys(
                ("correctness", "completeness", "tool_use", "honesty", "persona_constraints"), 4
            ),
        }
    ],
    "verdict": "PASS",
    "reason": "answers the question",
}


def _draft(sid: str) -> dict:
    question, fact = QUESTIONS[sid]
    return {
        "id": sid,
        "category": "tool_choice",
        "draft": True,
        "source": {"kind": "session", "link": f"claude-code:{sid}.jsonl"},
        "persona": "A curious user.",
        "difficulty_rationale": "The answer is one fact the agent must give exactly.",
        "turns": [{"objective": question, "user_message": question, "ground_truth": {"facts": [fact]}}],
    }


def _model(tmp: Path, name: str, answers: dict[str, str | None]) -> str:
    """A scripted agent model answering each draft's question; None: its backend fails (INFRA_ERROR)."""
    replies = [
        {"match": QUESTIONS[sid][0], **({"text": text} if text is not None else {"error": "infra"})}
        for sid, text in answers.items()
    ]
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"replies": replies}))
    return f"scripted/{path}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("promote")
    scenarios = tmp / "scenarios"
    shutil.copytree(FIXTURES / "agent_scenarios" / "scenarios", scenarios)
    for sid in QUESTIONS:
        path = scenarios / "drafts" / "tool_choice" / f"{sid}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(_draft(sid), sort_keys=False))
    judge = tmp / "judge.yaml"
    judge.write_text(yaml.safe_dump({"default": {"text": json.dumps(JUDGE_PASS)}}))
    simulator = tmp / "simulator.yaml"
    simulator.write_text(yaml.safe_dump({"default": {"text": "<<NEXT>>"}}))
    runs = {}
    for name, answers in (("strong", RIGHT), ("weak", WEAK), ("weak-broken", {**WEAK, "d-good": None})):
        options = {
            "scenarios_dir": str(scenarios),
            "scenario": ",".join(QUESTIONS),
            "model": _model(tmp, name, answers),
            "simulator_model": f"scripted/{simulator}",
            "judge_model": f"scripted/{judge}",
        }
        out = tmp / f"run-{name}"
        run_benchmark(
            AgentBenchmark,
            options,
            RunOptions(suite="full", iterations=2, out=out, command_line=["t"], results_dir=tmp),
        )
        runs[name] = out
    return {"scenarios": scenarios, **runs}


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _statuses(run: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        out.setdefault(row["case_id"], []).append(row["status"])
    return out


def test_named_drafts_ran_and_the_runs_say_what_the_scripts_mean(world: dict[str, Path]) -> None:
    assert _statuses(world["strong"]) == {
        "d-easy": ["PASS", "PASS"],
        "d-good": ["PASS", "PASS"],
        "d-impossible": ["FAIL", "FAIL"],
    }
    assert _statuses(world["weak"])["d-good"] == ["FAIL", "FAIL"]
    # a draft is in no suite: not loaded unless named, and not counted among the suite's sources
    assert all(not s.draft for s in load_scenarios(world["scenarios"]))
    card = load_scorecard(world["strong"] / "scorecard.json")
    assert card.extra["sources"]["total"] == 5 and card.extra["sources"]["counts"]["session"] == 0
    assert card.extra["agent"]["by_source"] == {"session": 3}  # what this run ran
    section = render_section(card)
    assert "| session | 0 | 3 |" in section
    assert (
        "From real use (sessions or issues): 0 of 5 (0.0%); the aim is at least 20.0%: below the aim."
        in section
    )


def test_promote_refuses_saturated_and_impossible_drafts(world: dict[str, Path], tmp_path: Path) -> None:
    for sid, why in (("d-easy", "saturated"), ("d-impossible", "impossible")):
        draft = world["scenarios"] / "drafts" / "tool_choice" / f"{sid}.yaml"
        with pytest.raises(ConfigError, match=why) as err:
            promote(draft, strong=[world["strong"]], weak=[world["weak"]], scenarios_dir=tmp_path)
        assert err.value.path == str(draft) and draft.is_file()  # refused: nothing moved
        assert not (tmp_path / "tool_choice" / f"{sid}.yaml").exists()


def test_promote_refuses_an_incomplete_draft_naming_what_is_missing(
    world: dict[str, Path], tmp_path: Path
) -> None:
    path, _ = write_draft(draft_from_session(SESSION, draft_id="cc-session"), out_dir=tmp_path / "drafts")
    with pytest.raises(ConfigError) as err:
        promote(path, strong=[world["strong"]], weak=[world["weak"]], scenarios_dir=tmp_path)
    text = str(err.value)
    assert "TODO left" in text and "difficulty_rationale" in text and "--category" in text
    assert path.is_file()
    # a draft the runs never ran is refused by name
    complete = tmp_path / "drafts" / "tool_choice" / "never-run.yaml"
    complete.parent.mkdir(parents=True)
    complete.write_text(yaml.safe_dump({**_draft("d-good"), "id": "never-run"}, sort_keys=False))
    with pytest.raises(ConfigError, match="never-run is in none of the runs"):
        promote(complete, strong=[world["strong"]], weak=[world["weak"]], scenarios_dir=tmp_path)
    # measured on the strong model only (the weak one's backend failed on it, so the run stopped there):
    # health cannot say it is not saturated
    # (its second attempt is INFRA_ERROR or NOT_RUN, by whether it had started when the outage stopped the run)
    broken = _statuses(world["weak-broken"])["d-good"]
    assert broken[0] == "INFRA_ERROR" and set(broken) <= {"INFRA_ERROR", "NOT_RUN"}
    good = world["scenarios"] / "drafts" / "tool_choice" / "d-good.yaml"
    with pytest.raises(ConfigError, match=r"no measured attempt on the --weak run\(s\)"):
        promote(good, strong=[world["strong"]], weak=[world["weak-broken"]], scenarios_dir=tmp_path)
    assert good.is_file()


def test_promote_moves_a_good_draft_into_its_category(world: dict[str, Path], tmp_path: Path) -> None:
    drafts = tmp_path / "copy" / "drafts" / "tool_choice"
    drafts.mkdir(parents=True)
    draft = drafts / "d-good.yaml"
    shutil.copyfile(world["scenarios"] / "drafts" / "tool_choice" / "d-good.yaml", draft)
    target_dir = tmp_path / "suite"
    result = CliRunner().invoke(
        cli,
        [
            "eval", "agent", "promote", str(draft), "--strong", str(world["strong"]),
            "--weak", str(world["weak"]), "--category", "context", "--scenarios", str(target_dir),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    target = target_dir / "context" / "d-good.yaml"
    assert not draft.exists() and target.is_file()
    scenario = load_scenario(target)
    assert (scenario.draft, scenario.category) == (False, "context")
    assert (
        "ci_tiers.json" in result.output
        and "--save-baseline tests/fixtures/baselines/agent-pr" in result.output
    )


def test_a_draft_from_an_eval_agent_run_keeps_its_objectives(world: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="name one with --case"):
        draft_from_session(world["strong"])
    draft = draft_from_session(world["strong"], case="d-good", draft_id="from-run", category="tool_choice")
    assert draft.link == "run:run-strong#d-good"
    _, scenario = write_draft(draft, out_dir=tmp_path)
    (turn,) = scenario.turns
    assert (turn.objective, turn.user_message) == (QUESTIONS["d-good"][0], QUESTIONS["d-good"][0])
    assert "the session's agent answered: 'The code word is bluebird.'" in (turn.success_criteria or "")
