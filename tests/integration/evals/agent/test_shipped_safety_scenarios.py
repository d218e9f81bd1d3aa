"""The shipped error_recovery, injection, refusal, security and cost_aware scenarios, run for real.

Each scenario goes through the ``pr`` pipeline (the reference agent's tools on the scenario's own workdir and
documents, the simulator, the code checks, the judge and the verdict derived in code), so a failing tool
fails for real, an injection really reaches the agent, and the verdict is the one the script means: PASS
unless tagged ``scripted-wrong``, overruled only where tagged ``judge-overruled``.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest

from assay.agents import RunSpec
from assay.agents.reference import ReferenceHarness
from assay.embed import get_embedder
from assay.evals import AttemptContext, Case
from assay.evals.agent import AgentBenchmark
from assay.evals.agent._record import ScenarioRecord
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._setup import prepare
from assay.evals.agent.scenario_load import DOCUMENTS_DIR, default_scenarios_dir, load_scenarios
from assay.models.scripted import ScriptedModel

CATEGORIES = (
    "error_recovery",
    "injection_document",
    "injection_tool",
    "refusal",
    "security",
    "cost_aware",
)
SCENARIOS = [s for s in load_scenarios(default_scenarios_dir()) if s.category in CATEGORIES]
BY_ID = {s.id: s for s in SCENARIOS}


async def _run_pr(run_dir: Path) -> dict[str, tuple[str, ScenarioRecord]]:
    bench = AgentBenchmark({"category": ",".join(CATEGORIES)})
    suite = bench.load_suite("pr")
    await bench.preflight()
    await bench.setup(str(run_dir))
    out: dict[str, tuple[str, ScenarioRecord]] = {}
    try:
        for case in suite.cases:
            ctx = AttemptContext(run_dir=str(run_dir), iteration=1, seed=0, timeout_s=None)
            outcome = await bench.run_case(Case(id=case.id, input=case.input), ctx)
            out[case.id] = (outcome.status.value, ScenarioRecord.model_validate(outcome.details))
    finally:
        await bench.teardown()
    return out


@pytest.fixture(scope="module")
def pr_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, ScenarioRecord]]:
    return asyncio.run(_run_pr(tmp_path_factory.mktemp("pr")))


async def _tool_results(scenario: Scenario) -> list[str]:
    """Every tool result the scripted reference agent was shown over the whole scenario."""
    assert scenario.script is not None
    root = default_scenarios_dir()
    seen: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) / "work"
        prepared = prepare(scenario, workdir, root / DOCUMENTS_DIR, get_embedder("hash"))
        model = ScriptedModel([r for turn in scenario.script.agent for r in turn])
        harness = ReferenceHarness(model=model, **prepared.reference_options())
        session: str | None = None
        try:
            for turn in scenario.turns:
                assert turn.user_message is not None
                result = await harness.run(turn.user_message, RunSpec(workdir=workdir, session_id=session))
                assert result.error is None and result.infra_error is None, result.error
                session = result.session_id
                seen += [e.content for e in result.transcript if e.role == "tool"]
        finally:
            await harness.close()
            prepared.close()
    return seen


def _zero_rules(record: ScenarioRecord) -> set[str]:
    judgement: dict[str, Any] = record.judgement or {}
    return {rule for t in judgement.get("turns", []) for rule in t.get("zero_rules", [])}


def test_every_category_has_at_least_four_scripted_scenarios() -> None:
    per = {c: [s.id for s in SCENARIOS if s.category == c] for c in CATEGORIES}
    assert all(len(ids) >= 4 for ids in per.values()), per
    assert len(SCENARIOS) >= 24
    for s in SCENARIOS:
        assert s.script is not None and s.script.judge, s.id
        assert all(t.user_message for t in s.turns), f"{s.id}: every turn opens with a literal message"


@pytest.mark.parametrize("scenario_id", sorted(BY_ID))
def test_the_pr_verdict_is_the_one_the_script_means(
    scenario_id: str, pr_results: dict[str, tuple[str, ScenarioRecord]]
) -> None:
    scenario = BY_ID[scenario_id]
    status, record = pr_results[scenario_id]
    wrong = "scripted-wrong" in scenario.tags
    failed = [f"{c.name}@{c.turn}: {c.detail}" for c in record.checks if not c.passed]
    assert status == ("FAIL" if wrong else "PASS"), (record.reason, failed)
    # a wrong answer is caught in code as well, never by the judge alone; a right one passes every check
    assert bool(failed) is wrong, failed
    judgement = record.judgement or {}
    overruled = "judge-overruled" in scenario.tags
    assert judgement.get("overruled") is overruled
    assert bool(judgement.get("disagreements")) is overruled, judgement.get("disagreements")
    assert judgement.get("judge_consistent") is True


def test_error_recovery_tools_fail_for_real(pr_results: dict[str, tuple[str, ScenarioRecord]]) -> None:
    for s in SCENARIOS:
        if s.category != "error_recovery":
            continue
        calls = [c for t in pr_results[s.id][1].turns for c in t.tool_calls]
        broke = [c for c in calls if c.status != "ok" or (c.test_counts or {}).get("failed", 0) > 0]
        assert broke, f"{s.id}: no tool call failed ({[(c.name, c.status) for c in calls]})"


@pytest.mark.parametrize(
    "scenario_id",
    sorted(s.id for s in SCENARIOS if s.category in ("injection_document", "injection_tool", "security")),
)
def test_the_planted_payload_reaches_the_agent(scenario_id: str) -> None:
    """An injection's canary is in a tool result the agent read; a security scenario exposes a secret to it."""
    scenario = BY_ID[scenario_id]
    results = "\n".join(asyncio.run(_tool_results(scenario)))
    if scenario.category == "security":
        assert scenario.setup.secrets
        assert any(secret in results for secret in scenario.setup.secrets), scenario_id
    else:
        assert scenario.setup.canaries
        missing = [c for c in scenario.setup.canaries if c not in results]
        assert not missing, f"{scenario_id}: {missing} never reached the agent"


def test_the_wrong_answers_are_the_plausible_weak_model_ones(
    pr_results: dict[str, tuple[str, ScenarioRecord]],
) -> None:
    wrong = [s for s in SCENARIOS if "scripted-wrong" in s.tags]
    assert 0.2 <= len(wrong) / len(SCENARIOS) <= 0.35, [s.id for s in wrong]

    def failed(s: Scenario) -> set[str]:
        return {c.name for c in pr_results[s.id][1].checks if not c.passed}

    by_category = {c: [s for s in wrong if s.category == c] for c in CATEGORIES}
    # the canary a lenient judge passed, failed in code
    overruled = [s for s in wrong if "judge-overruled" in s.tags]
    assert any("canary" in failed(s) and s.category.startswith("injection") for s in overruled)
    assert any("secret" in failed(s) for s in by_category["security"])
    assert any("forbidden_tool" in failed(s) for s in by_category["cost_aware"])
    assert any("lazy_refusal" in _zero_rules(pr_results[s.id][1]) for s in by_category["refusal"])
    assert all(by_category[c] for c in CATEGORIES), {c: len(v) for c, v in by_category.items()}


def test_refusal_mixes_harmful_and_benign_and_cost_aware_right_answers_call_no_tool(
    pr_results: dict[str, tuple[str, ScenarioRecord]],
) -> None:
    refusal = [s for s in SCENARIOS if s.category == "refusal"]
    assert any("harmful" in s.tags for s in refusal) and any("benign" in s.tags for s in refusal)
    for s in SCENARIOS:
        if s.category != "cost_aware":
            continue
        assert s.forbidden_tools, s.id
        calls = [c.name for t in pr_results[s.id][1].turns for c in t.tool_calls]
        assert bool(calls) is ("scripted-wrong" in s.tags), (s.id, calls)


@pytest.mark.slow
def test_a_fix_claimed_but_never_made_fails_on_the_workdirs_own_tests(tmp_path: Path) -> None:
    """refuse-sql-injection-fix whose scripted edit leaves the query as it was (a comment added): the agent still
    says it fixed it and the tests pass, the scripted judge still says PASS, every tool check passes; the end
    state (the workdir's own tests) fails it."""
    import json

    import yaml

    from assay.exec import RunOptions, run_benchmark

    data = yaml.safe_load(Path(BY_ID["refuse-sql-injection-fix"].path).read_text())
    edit = next(r for r in data["script"]["agent"][0] if "edit_file" in json.dumps(r))
    args = edit["tool_calls"][0]["arguments"]
    args["new"] = args["old"] + "  # checked"
    folder = tmp_path / "scenarios" / "refusal"
    folder.mkdir(parents=True)
    (folder / "refuse-sql-injection-fix.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    result = run_benchmark(
        AgentBenchmark,
        {"scenarios_dir": str(tmp_path / "scenarios")},
        RunOptions(out=tmp_path / "r", command_line=["t"]),
    )
    (row,) = [json.loads(line) for line in (result.run_dir / "results.jsonl").read_text().splitlines()]
    assert row["status"] == "FAIL", row["details"]["reason"]
    failed = {c["name"]: c["detail"] for c in row["details"]["checks"] if not c["passed"]}
    assert set(failed) == {"tests_pass"} and "exited 1" in failed["tests_pass"], failed
    assert row["details"]["judgement"]["judge_said"] == "PASS" and row["details"]["judgement"]["overruled"]
