"""`assay health` over real `assay eval agent` runs of two scripted agents on purpose-built scenarios.

tests/fixtures/health_scenarios/ holds six scenarios, their ci_tiers.json and the scripted roles: a strong
and a weak agent (keyed on each scenario's question), a simulated user that ends each objective, and a
faithful judge (an answer marked as a guess fails). Each health flag is meant for one scenario:

    scenario              strong  weak   flags                    tier now      move
    sat-capital           6/6     6/6    saturated                smoke, full   -> backlog
    fail-lottery          0/6     0/6    always-fail              full          -> backlog (with reason)
    inv-spider-legs       0/6     6/6    always-fail, inverted    full          stays: check grading
    flaky-nearest-planet  4/6     0/6    flaky                    smoke, full   out of smoke
    steady-boiling-point  6/6     0/6    -                        full          -
    back-mixed-colour     6/6     0/6    -                        backlog       -> full

Each model runs twice (3 iterations each): "inverted" needs the weaker model's pass rate above the
strongest's beyond their intervals, which 3/3 against 0/3 is not (one run of each flags no inversion).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli
from assay.errors import ConfigError
from assay.evals import health
from assay.evals.agent import AgentBenchmark
from assay.exec import RunOptions, run_benchmark

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "health_scenarios"
AGENTS = FIXTURE / "agents"
EXPECTED_FLAGS = {
    "sat-capital": ["saturated"],
    "fail-lottery": ["always-fail"],
    "inv-spider-legs": ["always-fail", "inverted"],
    "flaky-nearest-planet": ["flaky"],
    "steady-boiling-point": [],
    "back-mixed-colour": [],
}


def _eval(out: Path, agent: Path) -> Path:
    options = {
        "scenarios_dir": str(FIXTURE / "scenarios"),
        "model": f"scripted/{agent}",
        "simulator_model": f"scripted/{AGENTS / 'simulator.yaml'}",
        "judge_model": f"scripted/{AGENTS / 'judge.yaml'}",
    }
    result = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", out=out, iterations=3, command_line=["test"])
    )
    assert result.exit_code == 0 and result.scorecard.complete
    return result.run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    root = tmp_path_factory.mktemp("health-runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)  # the default tiers file (eval/ci_tiers.json of the cwd) must not be the one found
        mp.setenv("ASSAY_NO_LOCK", "1")
        mp.setenv("ASSAY_HOME", str(root / "home"))
        yield {
            "strong": _eval(root / "strong", AGENTS / "strong.yaml"),
            "weak": _eval(root / "weak", AGENTS / "weak.yaml"),
            "strong-again": _eval(root / "strong-again", AGENTS / "strong.yaml"),
            "weak-again": _eval(root / "weak-again", AGENTS / "weak.yaml"),
        }


def test_each_flag_lands_on_its_scenario_and_the_moves_name_them(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    both = {"strong": [runs["strong"], runs["strong-again"]], "weak": [runs["weak"], runs["weak-again"]]}
    rep = health([], **both, out=tmp_path / "h")
    strong, weak = rep.models
    assert (rep.strong, rep.weak) == (strong, weak) and strong.endswith("strong.yaml")
    assert {c.case_id: c.flags for c in rep.cases} == EXPECTED_FLAGS
    flaky = next(c for c in rep.cases if c.case_id == "flaky-nearest-planet")
    assert (flaky.by_model[strong].passed, flaky.by_model[strong].measured) == (4, 6)

    # the tiers file next to the scenarios folder the runs recorded, found without --tiers
    assert rep.tiers_file == str((FIXTURE / "ci_tiers.json").resolve()) and rep.moves_note is None
    moves = {m.scenario: m for m in rep.moves}
    assert {s: (m.flag, m.tiers, m.target) for s, m in moves.items()} == {
        "sat-capital": ("saturated", ["smoke", "full"], "backlog"),
        "fail-lottery": ("always-fail", ["full"], "backlog"),
        "inv-spider-legs": ("inverted", ["full"], None),
        "flaky-nearest-planet": ("flaky", ["smoke", "full"], "full"),
        "back-mixed-colour": ("stable-pass", ["backlog"], "full"),
    }
    assert moves["flaky-nearest-planet"].evidence == {strong: "4/6", weak: "0/6"}
    assert moves["inv-spider-legs"].evidence == {strong: "0/6", weak: "6/6"}
    assert moves["fail-lottery"].reason and f"{strong} 0/6" in moves["fail-lottery"].reason
    assert "grading" in moves["inv-spider-legs"].action

    saved = json.loads((tmp_path / "h" / "health.json").read_text())
    assert [m["scenario"] for m in saved["moves"]] == [m.scenario for m in rep.moves]
    md = (tmp_path / "h" / "health.md").read_text()
    assert "### CI tier moves (suggested, never applied)" in md
    assert "- **sat-capital** (saturated; smoke, full → backlog)" in md
    assert "- **flaky-nearest-planet** (flaky; out of smoke, stays in full)" in md
    assert "- **inv-spider-legs** (inverted; stays in full): check its grading" in md
    assert "steady-boiling-point**" not in md  # healthy: flagged nowhere, moved nowhere


def test_headroom_is_the_strong_agents_judged_pass_rate(runs: dict[str, Path]) -> None:
    rows = [json.loads(line) for line in (runs["strong"] / "results.jsonl").read_text().splitlines()]
    lottery = [r for r in rows if r["case_id"] == "fail-lottery"]
    # the judge passed the lottery answers; the fact check failed them, and the verdict says FAIL
    assert all(r["status"] == "FAIL" and r["details"]["judgement"]["overruled"] for r in lottery)
    rep = health([runs["weak"]], strong=[runs["strong"]])
    by_cat = {c.category: c for c in rep.categories}
    assert all(c.rate_over == "judged" for c in rep.categories)
    # document_qa: sat 3/3 + lottery 0/3 (failed on its code check); context: 2/3 + 3/3; tool_choice 0/3 + 3/3
    assert by_cat["document_qa"].strongest_pass_rate == pytest.approx(0.5)
    assert by_cat["context"].headroom == pytest.approx(1 / 6)
    assert by_cat["tool_choice"].strongest_pass_rate == pytest.approx(0.5)


def test_one_run_of_each_is_no_inversion_and_runs_of_one_agent_pool(runs: dict[str, Path]) -> None:
    # 0/3 against 3/3: within the intervals of three attempts each, so not an inversion yet
    once = health([], strong=[runs["strong"]], weak=[runs["weak"]])
    assert once.flagged("inverted") == [] and once.flagged("always-fail") == [
        "fail-lottery",
        "inv-spider-legs",
    ]
    # two runs of one agent pool as one model: its misses are flaky or always-fail, never inverted
    same = health([runs["strong"], runs["strong-again"]])
    assert len(same.models) == 1 and same.flagged("inverted") == []
    flaky = next(c for c in same.cases if c.case_id == "flaky-nearest-planet")
    assert (flaky.by_model[same.models[0]].passed, flaky.flags) == (4, ["flaky"])
    with pytest.raises(ConfigError, match="same model"):
        health([], strong=[runs["strong"]], weak=[runs["strong-again"]])


def test_health_command_with_tiers(runs: dict[str, Path], tmp_path: Path) -> None:
    tiers = tmp_path / "ci_tiers.json"
    data = json.loads((FIXTURE / "ci_tiers.json").read_text())
    data["tiers"]["smoke"]["scenarios"] = ["steady-boiling-point"]  # sat and flaky no longer in smoke
    tiers.write_text(json.dumps(data))
    args = ["health", "--strong", str(runs["strong"]), "--weak", str(runs["weak"]), "--tiers", str(tiers)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "CI tier moves" in res.output and str(tiers) in res.output.replace("\n", "")
    assert "flaky-nearest-planet (flaky" not in res.output  # flaky in full only: no move
    assert "sat-capital (saturated; full → backlog)" in res.output
    res = CliRunner().invoke(cli, [*args[:-1], str(tmp_path / "missing.json")])
    assert isinstance(res.exception, ConfigError) and "--tiers: no such tiers file" in str(res.exception)
