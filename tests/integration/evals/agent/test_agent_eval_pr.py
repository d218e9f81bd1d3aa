"""`assay eval agent --suite pr` end to end on the fixture scenarios (every role scripted, all else real).

The fixture folder (tests/fixtures/agent_scenarios) has five scenarios in two categories: two the scripted
agent answers right, one it answers wrong (50 EUR for 40), one whose agent leaks an injected canary while the
scripted judge passes it, and one without a script (pr skips it with the reason).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest

from assay.cli import main
from assay.evals.agent import AgentBenchmark
from assay.evals.agent._scenario import Scenario
from assay.exec import RunOptions, run_benchmark
from assay.models import ChatModel
from assay.models.scripted import ScriptedModel
from assay.runs.records import FINAL_STATUSES, Status

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "agent_scenarios" / "scenarios"
EXPECTED = {
    "leave-follow-up": "PASS",
    "parking-fee": "FAIL",
    "vacation-days": "PASS",
    "leaky-summary": "FAIL",
    "unscripted-summary": "SKIPPED",
}
#: what changes from one run to the next by nature (when, how long, which run)
_VOLATILE = {"run_id", "created_at", "mean_elapsed_s", "started_at", "elapsed_s", "finished_at"}


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    code = exc.value.code
    out = capsys.readouterr()
    return (code if isinstance(code, int) else 1), out.out, out.err


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _journal(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def _run_pr(out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code, stdout, err = cli(
        ["eval", "agent", "--suite", "pr", "--scenarios", str(FIXTURE), "--out", str(out), *extra], capsys
    )
    return code, stdout + err


def test_pr_is_identical_twice_and_the_canary_fails_in_code(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code1, out1 = _run_pr(tmp_path / "one", capsys)
    code2, _ = _run_pr(tmp_path / "two", capsys, "-j", "1")
    assert code1 == code2 == 0, out1
    card1 = json.loads((tmp_path / "one" / "scorecard.json").read_text())
    card2 = json.loads((tmp_path / "two" / "scorecard.json").read_text())
    assert _stable(card1) == _stable(card2)
    rows = {r["case_id"]: r for r in _journal(tmp_path / "one")}
    assert {cid: r["status"] for cid, r in rows.items()} == EXPECTED
    assert "no script" in rows["unscripted-summary"]["skip_reason"]
    leak = rows["leaky-summary"]["details"]
    # the scripted judge said PASS with top scores; the canary check in code fails the scenario anyway
    assert leak["judgement"]["judge_said"] == "PASS" and leak["judgement"]["overruled"] is True
    assert any(c["name"] == "canary" and not c["passed"] for c in leak["checks"])
    assert rows["leaky-summary"]["score"] == 1.0 and leak["judged"] is True
    fee = rows["parking-fee"]
    assert fee["details"]["failed_turn"] == 1 and fee["metrics"]["code_checks_passed"] < 1
    for r in rows.values():
        if r["status"] in ("PASS", "FAIL"):
            assert set(r["details"]["cost"]) == {"agent", "simulator", "judge"}
            assert r["usage"]["calls"] == sum(c["usage"]["calls"] for c in r["details"]["cost"].values())
            assert {"judged_score", "code_checks_passed", "turns", "tokens_agent"} <= set(r["metrics"])
    assert card1["config"]["judge_model"] == card1["config"]["model"] == "scripted:scenario-scripts"
    assert "selection" not in card1["extra"]
    report = (tmp_path / "one" / "report.md").read_text()
    section = report.split("## Agent scenarios", 1)[1]
    assert section.index("**Pass rate 50.0%**") < section.index("### Failing scenarios")
    assert "| leaky-summary | injection_document | FAIL | 1 |" in section  # failing first, with the turn
    assert "It gave 50 EUR where the handbook says 40 EUR" in section  # the judge's own words
    assert "| document_qa | 3 | 66.7% |" in section
    assert "| judge | scripted:scenario-scripts |" in section
    assert "overruled (its verdict differed" in section and "1 of 4 (leaky-summary)" in section
    assert "code/judge disagreements: 1 in 1 scenario(s)" in section
    assert "Weak model" not in section and "Targeted run" not in section


class Recording(AgentBenchmark):
    """The pr benchmark, keeping the simulator's and the judge's scripted models to read what they were sent."""

    models: ClassVar[dict[str, list[ScriptedModel]]] = {"simulator": [], "judge": []}

    def simulator_model_for(self, scenario: Scenario) -> ChatModel:
        model = super().simulator_model_for(scenario)
        self.models["simulator"].append(model)  # type: ignore[arg-type]
        return model

    def judge_model_for(self, scenario: Scenario) -> ChatModel:
        model = super().judge_model_for(scenario)
        self.models["judge"].append(model)  # type: ignore[arg-type]
        return model


def _texts(model: ScriptedModel) -> list[str]:
    return [m.content for call in model.calls for m in call["messages"]]


def test_the_simulator_never_sees_the_judge_prompt_and_vice_versa(tmp_path: Path) -> None:
    from assay.evals.agent._judge_view import JUDGE_SYSTEM_PROMPT
    from assay.evals.agent._simulator import system_prompt
    from assay.evals.agent.scenario_load import load_scenarios

    Recording.models = {"simulator": [], "judge": []}
    result = run_benchmark(
        Recording, {"scenarios_dir": str(FIXTURE)}, RunOptions(out=tmp_path / "r", command_line=["t"])
    )
    assert result.exit_code == 0
    sims, judges = Recording.models["simulator"], Recording.models["judge"]
    assert len(sims) == len(judges) == 4 and all(m.calls for m in sims + judges)
    sim_prompts = [system_prompt(s, t) for s in load_scenarios(FIXTURE) for t in s.turns]
    judge_marker = JUDGE_SYSTEM_PROMPT.strip().splitlines()[0]
    for model in sims:
        texts = _texts(model)
        assert not any(JUDGE_SYSTEM_PROMPT in t or judge_marker in t for t in texts)
        assert not any("correctness" in t and "persona_constraints" in t for t in texts)  # no rubric either
    for model in judges:
        texts = _texts(model)
        assert texts[0] == JUDGE_SYSTEM_PROMPT or JUDGE_SYSTEM_PROMPT in texts[0]
        assert not any(p in t for p in sim_prompts for t in texts)
        assert not any("<<NEXT>>" in t for t in texts)  # the simulator's markers belong to its prompt only
    # each role's calls are capped (a weak model otherwise rambles to the end of its context)
    assert {c["options"].get("max_tokens") for m in sims for c in m.calls} == {256}
    assert {c["options"].get("max_tokens") for m in judges for c in m.calls} == {2048}


class JudgeOutage(AgentBenchmark):
    """The judge's backend goes down on the second scenario until the test brings it back."""

    down: ClassVar[bool] = True

    def judge_model_for(self, scenario: Scenario) -> ChatModel:
        if self.down and scenario.id == "parking-fee":
            return ScriptedModel([{"error": "infra", "message": "judge backend unreachable"}])
        return super().judge_model_for(scenario)


def test_a_judge_outage_stops_the_run_and_resume_measures_each_scenario_once(tmp_path: Path) -> None:
    JudgeOutage.down = True
    opts = RunOptions(out=tmp_path / "r", max_concurrency=1, command_line=["t"])
    first = run_benchmark(JudgeOutage, {"scenarios_dir": str(FIXTURE)}, opts)
    assert first.exit_code == 3 and "judge backend unreachable" in (first.stopped_reason or "")
    rows = _journal(first.run_dir)
    status = {r["case_id"]: r["status"] for r in rows}
    assert status == {
        "leave-follow-up": "PASS",
        "parking-fee": "INFRA_ERROR",
        "vacation-days": "NOT_RUN",
        "leaky-summary": "NOT_RUN",
        "unscripted-summary": "NOT_RUN",
    }
    cut = next(r for r in rows if r["status"] == "INFRA_ERROR")
    # the attempt cut by the outage keeps what the agent and simulator spent, and says the judge's is missing
    assert cut["usage"]["calls"] >= 2 and cut["details"]["partial"] is True
    assert cut["details"]["cost"]["judge"]["complete"] is False
    assert cut["details"]["turns"][0]["messages"][1]["text"].startswith("A staff garage permit costs 50 EUR")
    assert first.scorecard.complete is False

    JudgeOutage.down = False
    second = run_benchmark(None, None, RunOptions(resume=first.run_dir, command_line=["t"]))
    assert second.exit_code == 0
    rows = _journal(first.run_dir)
    measured: dict[str, int] = {}
    for r in rows:
        if Status(r["status"]) in FINAL_STATUSES:
            measured[r["case_id"]] = measured.get(r["case_id"], 0) + 1
    assert measured == dict.fromkeys(EXPECTED, 1)
    card = json.loads((first.run_dir / "scorecard.json").read_text())
    assert {c["case_id"]: next(s for s, n in c["counts"].items() if n) for c in card["cases"]} == EXPECTED


def test_compare_with_a_baseline_of_another_judge_model_is_not_comparable(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out = _run_pr(tmp_path / "base", capsys)
    assert code == 0, out
    card = json.loads((tmp_path / "base" / "scorecard.json").read_text())
    card["config"]["judge_model"] = "anthropic/claude-sonnet-4-5"
    other = tmp_path / "other-judge"
    shutil.copytree(tmp_path / "base", other)
    (other / "scorecard.json").write_text(json.dumps(card))
    code, out = _run_pr(tmp_path / "same", capsys, "--compare", str(tmp_path / "base"))
    assert code == 0, out
    code, out = _run_pr(tmp_path / "new", capsys, "--compare", str(other))
    assert code == 3, out
    assert "judge" in out.lower()


def test_an_unknown_scenario_is_refused_before_anything_runs(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out = _run_pr(tmp_path / "r", capsys, "--scenario", "vacation-days,no-such-scenario")
    assert code == 1
    assert "--scenario" in out and "no-such-scenario" in out
    assert not (tmp_path / "r" / "results.jsonl").exists()
    code, out = _run_pr(tmp_path / "r2", capsys, "--model", "local/smollm2")
    assert code == 1 and "--model apply to --suite full" in out


def test_a_targeted_run_is_labelled_and_compares_with_the_full_baseline(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out = _run_pr(tmp_path / "full", capsys)
    assert code == 0, out
    code, out = _run_pr(
        tmp_path / "t", capsys, "--category", "injection_document", "--compare", str(tmp_path / "full")
    )
    assert code == 0, out
    full = json.loads((tmp_path / "full" / "scorecard.json").read_text())
    card = json.loads((tmp_path / "t" / "scorecard.json").read_text())
    assert card["suite_version"] == full["suite_version"]
    assert card["extra"]["selection"] == {
        "by": {"category": ["injection_document"]},
        "selected": ["leaky-summary", "unscripted-summary"],
        "of": 5,
    }
    assert [c["case_id"] for c in card["cases"]] == ["leaky-summary", "unscripted-summary"]
    report = (tmp_path / "t" / "report.md").read_text()
    assert "**Targeted run**: 2 of 5 scenarios, selected by --category injection_document" in report


def test_agent_model_read_back_discards_a_scenario_that_ran_another(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out = _run_pr(tmp_path / "ok", capsys, "--agent-model", "scripted/scenario-scripts")
    assert code == 0, out
    assert {r["case_id"]: r["status"] for r in _journal(tmp_path / "ok")} == EXPECTED
    code, out = _run_pr(tmp_path / "other", capsys, "--agent-model", "openai/gpt-4o")
    rows = {r["case_id"]: r for r in _journal(tmp_path / "other")}
    assert {cid: r["status"] for cid, r in rows.items()} == {
        cid: ("SKIPPED" if s == "SKIPPED" else "INFRA_ERROR") for cid, s in EXPECTED.items()
    }
    bad = rows["vacation-days"]
    assert bad["error"]["type"] == "AgentModelMismatch"
    assert "--agent-model openai/gpt-4o: the agent ran scenario-scripts" in bad["error"]["message"]
    assert (
        "judged" not in bad["details"] and "judge" not in bad["details"]["cost"]
    )  # not judged: no judge spend
    card = json.loads((tmp_path / "other" / "scorecard.json").read_text())
    assert card["config"]["model"] == "openai/gpt-4o" and card["complete"] is False


class SlowUser(AgentBenchmark):
    """The simulated user takes a minute to answer in vacation-days, so --timeout cuts the scenario there."""

    def simulator_model_for(self, scenario: Scenario) -> ChatModel:
        if scenario.id == "vacation-days":
            return ScriptedModel({"replies": [], "default": {"text": "<<NEXT>>", "delay_s": 60}})
        return super().simulator_model_for(scenario)


class MumblingJudge(AgentBenchmark):
    """The judge never writes a usable answer for parking-fee and vacation-days (the first try and both
    retries)."""

    def judge_model_for(self, scenario: Scenario) -> ChatModel:
        if scenario.id in ("parking-fee", "vacation-days"):
            return ScriptedModel(
                [{"text": t} for t in ("It looks fine to me.", "PASS", '{"verdict": "FAIL"}')]
            )
        return super().judge_model_for(scenario)


def test_a_timeout_keeps_the_spend_and_the_conversation_so_far(tmp_path: Path) -> None:
    opts = RunOptions(out=tmp_path / "r", timeout_s=1.5, command_line=["t"])
    result = run_benchmark(SlowUser, {"scenarios_dir": str(FIXTURE), "scenario": "vacation-days"}, opts)
    assert result.exit_code == 0
    (row,) = _journal(result.run_dir)
    assert row["status"] == "TIMEOUT"
    d = row["details"]
    assert d["partial"] is True and "spend_missing" not in d
    assert d["cost"]["agent"]["calls"] == 1 and d["cost"]["agent"]["usage"]["calls"] == 2  # tool call, answer
    assert d["cost"]["simulator"]["complete"] is False  # its call was cut: its spend is unknown
    assert "judge" not in d["cost"]
    assert row["usage"]["calls"] == 2
    assert d["turns"][0]["messages"][1]["text"].startswith("The handbook says every employee gets 25")
    section = (result.run_dir / "report.md").read_text().split("## Agent scenarios", 1)[1]
    assert "| simulator | scripted:scenario-scripts | 0 | 0 | 0 | unknown | 1: vacation-days |" in section


def test_an_unparseable_judge_is_an_error_unless_a_code_check_failed(tmp_path: Path) -> None:
    opts = RunOptions(out=tmp_path / "r", command_line=["t"])
    result = run_benchmark(MumblingJudge, {"scenarios_dir": str(FIXTURE), "category": "document_qa"}, opts)
    rows = {r["case_id"]: r for r in _journal(result.run_dir)}
    # every code check passed: nothing decided the scenario, so the judge's failure leaves it unmeasured
    bad = rows["vacation-days"]
    assert bad["status"] == "ERROR" and bad["score"] is None and "judged_score" not in bad["metrics"]
    assert bad["error"]["type"] == "JudgeParseError" and "after 3 call(s)" in bad["error"]["message"]
    assert bad["details"]["cost"]["judge"]["calls"] == 3 and len(bad["details"]["judgement"]["raw"]) == 3
    # the number check failed (50 EUR for 40): FAIL whatever the judge says, its problem recorded beside it
    fee = rows["parking-fee"]
    assert fee["status"] == "FAIL" and fee["score"] is None and "judged_score" not in fee["metrics"]
    assert fee["error"] is None and fee["metrics"]["code_checks_passed"] < 1
    problem = fee["details"]["role_problem"]
    assert problem["role"] == "judge" and problem["type"] == "JudgeParseError"
    assert fee["details"]["reason"].startswith("code check number (turn 1): expected 40 EUR")
    assert "the judge problem beside it: the judge's answer stayed unparseable" in fee["details"]["reason"]
    assert rows["leave-follow-up"]["status"] == "PASS"


def test_the_shipped_pr_suite_is_identical_twice(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    codes, cards = [], []
    for name in ("one", "two"):  # the default folder: the checkout's eval/scenarios (cwd is a temp dir)
        code, stdout, err = cli(["eval", "agent", "--suite", "pr", "--out", str(tmp_path / name)], capsys)
        codes.append(code)
        cards.append(json.loads((tmp_path / name / "scorecard.json").read_text()))
    assert codes == [0, 0], stdout + err
    assert _stable(cards[0]) == _stable(cards[1])
    counts = cards[0]["summary"]["counts"]
    assert counts.get("PASS", 0) > counts.get("FAIL", 0) > 0
    assert not counts.get("ERROR") and not counts.get("INFRA_ERROR") and not counts.get("NOT_RUN")


def test_list_names_each_scenario_with_its_tier_and_a_tier_runs_only_its_scenarios(
    tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    code, stdout, _ = cli(["eval", "agent", "--list", "--scenarios", str(FIXTURE)], capsys)
    assert code == 0
    lines = {ln.split()[0]: ln.split() for ln in stdout.splitlines()[1:]}
    assert lines["vacation-days"][:5] == ["vacation-days", "document_qa", "smoke", "high", "synthetic"]
    assert lines["parking-fee"][2] == "backlog" and "[no script: full only]" in stdout
    code, out = _run_pr(tmp_path / "smoke", capsys, "--tier", "smoke")
    assert code == 0, out
    card = json.loads((tmp_path / "smoke" / "scorecard.json").read_text())
    assert card["extra"]["selection"]["by"] == {"tier": "smoke"}
    assert [c["case_id"] for c in card["cases"]] == ["vacation-days", "leaky-summary"]
    code, out = _run_pr(tmp_path / "x", capsys, "--tier", "nightly")
    assert code == 1 and "--tier 'nightly': unknown tier" in out and "ci_tiers.json" in out


def test_a_judge_script_too_short_for_its_retries_names_the_scenario(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "scenarios"
    shutil.copytree(FIXTURE, folder)
    path = folder / "document_qa" / "vacation-days.yaml"
    text = path.read_text()
    head, _, _ = text.partition("  judge:\n")
    path.write_text(head + "  judge:\n    - not an answer\n")
    code, _, err = cli(["eval", "agent", "--scenarios", str(folder), "--out", str(tmp_path / "r")], capsys)
    assert code == 1
    assert f"{path}: scenario vacation-days: its script: script ran out of replies" in err


class RefusingUser(AgentBenchmark):
    """The simulated user's backend refuses its request (as a model whose context is too short does)."""

    def simulator_model_for(self, scenario: Scenario) -> ChatModel:
        return ScriptedModel([{"error": "subject", "message": "maximum context length is 2048 tokens"}])


def test_a_role_whose_request_is_refused_is_an_error_that_keeps_the_spend(tmp_path: Path) -> None:
    opts = RunOptions(out=tmp_path / "r", command_line=["t"])
    result = run_benchmark(RefusingUser, {"scenarios_dir": str(FIXTURE), "scenario": "vacation-days"}, opts)
    assert result.exit_code == 0  # not an outage: the run goes on
    (row,) = _journal(result.run_dir)
    assert row["status"] == "ERROR" and row["details"]["failed_role"] == "simulator"
    assert row["error"]["message"].startswith("the simulator failed: ModelResponseError:")
    assert "maximum context length" in row["error"]["message"]
    assert row["details"]["cost"]["agent"]["usage"]["calls"] == 2 and row["usage"]["calls"] == 2
    assert row["details"]["cost"]["simulator"]["complete"] is False


def test_the_shipped_smoke_tier_runs_its_scenarios_and_they_pass(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from assay.evals.agent.scenario_load import default_scenarios_dir, load_scenarios
    from assay.evals.agent.tiers import load_tiers, tiers_path

    smoke = list(load_tiers(tiers_path(default_scenarios_dir())).tiers["smoke"].scenarios)
    tagged = {s.id for s in load_scenarios(default_scenarios_dir()) if "scripted-wrong" in s.tags}
    code, stdout, err = cli(["eval", "agent", "--tier", "smoke", "--out", str(tmp_path / "s")], capsys)
    assert code == 0, stdout + err
    card = json.loads((tmp_path / "s" / "scorecard.json").read_text())
    assert sorted(c["case_id"] for c in card["cases"]) == sorted(smoke)
    assert card["extra"]["selection"]["by"] == {"tier": "smoke"} and card["extra"]["selection"]["of"] > len(
        smoke
    )
    # every smoke scenario passes offline except the critical ones the scripted agent fails on purpose (their
    # checks are seen to catch it): those fail on every attempt, and only those
    failed = {c["case_id"] for c in card["cases"] if c["counts"].get("FAIL")}
    assert failed == tagged & set(smoke) and len(failed) == 5
    assert card["summary"]["counts"].get("PASS") == len(smoke) - len(failed)


class JudgeOutOfQuota(AgentBenchmark):
    """The judge's provider is out of quota and says when it resets (as a provider's reset header would)."""

    def judge_model_for(self, scenario: Scenario) -> ChatModel:
        return ScriptedModel([{"error": "quota", "message": "monthly quota used up", "retry_after": 7200}])


def test_a_judge_out_of_quota_stops_the_run_saying_when_it_resets(tmp_path: Path) -> None:
    opts = RunOptions(out=tmp_path / "q", max_concurrency=1, command_line=["t"])
    result = run_benchmark(JudgeOutOfQuota, {"scenarios_dir": str(FIXTURE)}, opts)
    assert result.exit_code == 3
    reason = result.stopped_reason or ""
    assert "monthly quota used up" in reason and "the provider says it resets at" in reason, reason
    assert result.resume_command and str(result.run_dir) in result.resume_command
    statuses = {r["status"] for r in _journal(result.run_dir)}
    assert statuses <= {"INFRA_ERROR", "NOT_RUN", "SKIPPED"} and "INFRA_ERROR" in statuses
