"""`--suite full` offline: each role on a model of its own (scripted files stand in for real backends), the
agent reaching its model only through the gateway, and a harness without a documents tool given the files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from assay.agents import AgentResult, Harness, Route, RunSpec
from assay.evals.agent import AgentBenchmark
from assay.exec import RunOptions, run_benchmark
from assay.models.weak import is_weak_model
from assay.report.markdown import render_markdown
from assay.runs.records import Scorecard

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "agent_scenarios" / "scenarios"
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
    "reason": "right number, from the handbook",
}


def _scripts(tmp: Path) -> dict[str, str]:
    files = {
        "agent": {
            "replies": [
                {"tool_calls": [{"name": "query_documents", "arguments": {"query": "vacation days"}}]},
                {"text": "Every employee gets 25 vacation days per year."},
            ]
        },
        "simulator": {"default": {"text": "<<NEXT>>"}},
        "judge": {"default": {"text": json.dumps(JUDGE_PASS)}},
    }
    out = {}
    for role, script in files.items():
        (tmp / f"{role}.yaml").write_text(yaml.safe_dump(script))
        out[role] = f"scripted/{tmp / f'{role}.yaml'}"
    return out


class GatewaySpy(AgentBenchmark):
    """Keeps the gateway's call log when the run ends."""

    calls: ClassVar[list[Any]] = []

    async def teardown(self) -> None:
        if self._gateway is not None:
            GatewaySpy.calls = self._gateway.calls()
        await super().teardown()


def _journal(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def test_full_gives_each_role_its_model_and_the_agent_goes_through_the_gateway(tmp_path: Path) -> None:
    models = _scripts(tmp_path)
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "vacation-days",
        "model": models["agent"],
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
    }
    result = run_benchmark(
        GatewaySpy, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    assert result.exit_code == 0
    (row,) = _journal(result.run_dir)
    assert row["status"] == "PASS", row
    d = row["details"]
    # both agent model calls (the tool call, the answer) went through the gateway, tagged with the attempt
    assert [c.run for c in GatewaySpy.calls] == ["vacation-days-i0", "vacation-days-i0"]
    assert d["cost"]["agent"]["usage"]["calls"] == 2 and d["cost"]["judge"]["calls"] == 1
    assert d["model_ran"] and (d["agent_model"], d["judge_model"]) == (models["agent"], models["judge"])
    config = result.scorecard.config
    assert (config.model, config.judge_model, config.embedder) == (models["agent"], models["judge"], "local")
    assert config.extra["simulator_model"] == models["simulator"]
    gated = {n for n, m in result.scorecard.summary.metrics.items() if m.gated}
    assert gated == {"judged_score", "code_checks_passed"}  # full gates what it measures, as pr does

    # --agent-model: the model read back from the gateway is the one asked for
    again = run_benchmark(
        GatewaySpy,
        {**options, "agent_model": d["model_ran"]},
        RunOptions(suite="full", out=tmp_path / "r2", command_line=["t"]),
    )
    assert [r["status"] for r in _journal(again.run_dir)] == ["PASS"]


async def docs_agent(prompt: str, workdir: Path, route: Route) -> dict[str, Any]:
    """A harness-under-test stand-in without a documents tool: it reads ``documents/`` in its workdir."""
    text = (Path(workdir) / "documents" / "handbook.md").read_text()
    line = next(ln for ln in text.splitlines() if "vacation days" in ln)
    return {
        "answer": f"From the handbook: {line}",
        "tool_record": [
            {"name": "read_file", "kind": "read", "arguments": {"path": "documents/handbook.md"}}
        ],
        "model_ran": route.model,
    }


def test_another_harness_gets_the_documents_copied_into_its_workdir(tmp_path: Path) -> None:
    models = _scripts(tmp_path)
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "vacation-days",
        "model": models["agent"],
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
        "harness": f"python:{__name__}:docs_agent",
    }
    result = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    (row,) = _journal(result.run_dir)
    d = row["details"]
    assert "25 vacation days per year" in d["turns"][0]["messages"][1]["text"]
    # it read the copy, not the index: for a harness given the documents as files, reading them is the
    # documents kind the scenario expects, so a right answer from them passes
    assert row["status"] == "PASS", d["reason"]
    (tool,) = [c for c in d["checks"] if c["name"] == "expected_tool"]
    assert tool["passed"] and "kind:documents was called" in tool["detail"]
    # the harness reported no tokens: its spend is missing, and the cost table says so
    assert d["cost"]["agent"]["complete"] is False
    assert (
        "| agent |" in (result.run_dir / "report.md").read_text()
        and "1: vacation-days" in (result.run_dir / "report.md").read_text()
    )
    assert result.scorecard.config.subject == f"python:{__name__}:docs_agent"


def test_the_report_says_when_a_role_runs_the_weak_embedded_model(tmp_path: Path) -> None:
    assert is_weak_model("local/smollm2") and is_weak_model(
        "openai-compat/SmolLM2-360M@http://127.0.0.1:8080/v1"
    )
    assert not is_weak_model("anthropic/claude-sonnet-4-5") and not is_weak_model("scripted:scenario-scripts")
    result = run_benchmark(
        AgentBenchmark,
        {"scenarios_dir": str(FIXTURE), "scenario": "vacation-days"},
        RunOptions(out=tmp_path / "r", command_line=["t"]),
    )
    card: Scorecard = result.scorecard
    assert "Weak model" not in render_markdown(card)
    weak = card.model_copy(
        update={
            "config": card.config.model_copy(
                update={
                    "model": "anthropic/claude-sonnet-4-5",
                    "judge_model": "openai-compat/smollm2@http://127.0.0.1:8080/v1",
                    "extra": {**card.config.extra, "simulator_model": "local/smollm2"},
                }
            )
        }
    )
    text = render_markdown(weak)
    assert (
        "**Weak model** (judge `openai-compat/smollm2@http://127.0.0.1:8080/v1`, simulator `local/smollm2`)"
        in text
    )
    assert text.count("Weak model") == 1  # the common report says it once, for every benchmark


def test_the_scorecard_says_whether_its_judge_passed_its_controls(tmp_path: Path) -> None:
    """A judge that always writes one PASS turn fails `controls` for real; the run judged by it says so."""
    from assay.evals.agent import calibrate, default_controls_dir

    models = _scripts(tmp_path)
    results = tmp_path / "results"
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "vacation-days",
        "model": models["agent"],
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
    }
    # before any calibration: the report flags the judge as uncalibrated
    first = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", results_dir=results, command_line=["t"])
    )
    cal = first.scorecard.extra["judge_calibration"]
    assert cal["status"] == "uncalibrated" and cal["judge_model"] == models["judge"]
    assert "**Uncalibrated judge**" in (first.run_dir / "report.md").read_text()

    run, _ = calibrate([models["judge"]], repeats=2, controls_dir=default_controls_dir(), results_dir=results)
    assert not run.passed  # a yes-man: it passes the FAIL controls too
    second = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", results_dir=results, command_line=["t"])
    )
    cal = second.scorecard.extra["judge_calibration"]
    assert cal["status"] == "failed" and cal["agreement"] < 0.9 and cal["below"]
    report = (second.run_dir / "report.md").read_text()
    assert "**Uncalibrated judge**" in report and "failed its controls on rubric agent-1" in report


def test_agent_max_tokens_is_refused_for_a_harness_it_cannot_reach(tmp_path: Path) -> None:
    import pytest

    from assay.errors import ConfigError

    bench = AgentBenchmark({"scenarios_dir": str(FIXTURE), "harness": "claude-code", "agent_max_tokens": 256})
    with pytest.raises(ConfigError, match="--agent-max-tokens applies to the reference agent"):
        bench.load_suite("full")


@pytest.mark.parametrize("what", ["agent", "harness", "outage"])
def test_a_harness_or_agent_that_breaks_is_an_error_and_an_outage_is_infra(
    tmp_path: Path, breaking_harness: dict[str, str], what: str
) -> None:
    models = _scripts(tmp_path)
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "vacation-days",
        "model": models["agent"],
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
        "harness": breaking_harness[what],
    }
    result = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    (row,) = _journal(result.run_dir)
    if what == "outage":  # the backend behind the agent: never the subject getting worse
        assert row["status"] == "INFRA_ERROR" and row.get("broken_by") is None, row
        assert result.exit_code == 3
        return
    assert row["status"] == "ERROR" and row["broken_by"] == what, row
    assert row["details"]["reason"].startswith(f"the {what} broke")
    assert result.exit_code == 0


class _FirstThenBreaks(Harness):
    """Answers turn 1 (``first``), then on turn 2 the agent crashes (``agent``) or the harness raises."""

    first = ""
    breaks: str = "agent"

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        self.runs += 1
        if self.runs == 1:
            return AgentResult(harness="first-then-breaks", answer=self.first)
        if self.breaks == "harness":
            raise RuntimeError("a bug in the harness itself")
        return AgentResult(harness="first-then-breaks", error="the agent process died (signal 11)")


@pytest.mark.parametrize("breaks", ["agent", "harness"])
@pytest.mark.parametrize("first", ["Unused days expire on 30 June.", "Unused days expire on 31 March."])
def test_a_failed_code_check_is_fail_even_when_the_agent_breaks_after_it(
    tmp_path: Path, breaks: str, first: str
) -> None:
    """A wrong answer on a finished turn decides FAIL though the agent broke later (the break recorded beside
    it); a right one leaves the broken scenario ERROR (the turn it never finished decides nothing)."""
    from assay.agents import register_harness

    harness = type("H", (_FirstThenBreaks,), {"first": first, "breaks": breaks})
    register_harness("first-then-breaks", lambda **_: harness())
    models = _scripts(tmp_path)
    sim = tmp_path / "sim.yaml"
    sim.write_text(yaml.safe_dump({"replies": [{"text": "<<NEXT>>"}, {"text": "How many sick days?"}]}))
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "leave-follow-up",
        "model": models["agent"],
        "simulator_model": f"scripted/{sim}",
        "judge_model": models["judge"],
        "harness": "first-then-breaks",
    }
    result = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    (row,) = _journal(result.run_dir)
    assert row["broken_by"] == breaks, row
    if "30 June" in first:
        assert row["status"] == "FAIL" and row["error"] is None, row
        assert row["details"]["reason"].startswith(
            "code check fact (turn 1): '31 March' is not in the answer"
        )
        assert row["details"]["role_problem"]["role"] == breaks
    else:
        assert row["status"] == "ERROR" and "role_problem" not in row["details"], row


async def answer_only_agent(prompt: str, workdir: Path, route: Route) -> str:
    """A harness-under-test stand-in whose record is its answer alone (no tool record)."""
    text = (Path(workdir) / "documents" / "handbook.md").read_text()
    right = "25 vacation days per year" in text and "vacation" in prompt.lower()
    return "Every employee gets 25 vacation days per year." if right else "I think it is 20 days."


async def wrong_answer_only_agent(prompt: str, workdir: Path, route: Route) -> str:
    return "Every employee gets 20 vacation days per year."


@pytest.mark.parametrize(
    ("agent", "status"), [("answer_only_agent", "PASS"), ("wrong_answer_only_agent", "FAIL")]
)
def test_an_answer_only_record_leaves_the_tool_checks_not_measured(
    tmp_path: Path, agent: str, status: str
) -> None:
    models = _scripts(tmp_path)
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "vacation-days",
        "model": models["agent"],
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
        "harness": f"python:{__name__}:{agent}",
    }
    result = run_benchmark(
        AgentBenchmark, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    (row,) = _journal(result.run_dir)
    d = row["details"]
    # the expected documents tool is neither passed (vacuously) nor failed (by construction): not measured
    assert [c["name"] for c in d["checks"]] == ["fact", "number"]
    assert [(n["name"], n["detail"].split(": ")[0]) for n in d["not_measured"]] == [
        ("expected_tool", "kind:documents")
    ]
    # the verdict rests on the answer's checks and the judge: right answer PASS, wrong one FAIL
    assert row["status"] == status, d["reason"]
    report = (result.run_dir / "report.md").read_text()
    assert "tool checks not measured" in report and "vacation-days: kind:documents" in report


def _copies_of_vacation_days(tmp: Path, n: int) -> Path:
    """A scenarios folder holding ``n`` copies of vacation-days (distinct ids): enough items for the gate's
    paired rule to tell a regression of a proportion from noise."""
    import shutil

    folder = tmp / "copies"
    shutil.copytree(FIXTURE / "_documents", folder / "_documents")
    (folder / "document_qa").mkdir()
    text = (FIXTURE / "document_qa" / "vacation-days.yaml").read_text()
    for i in range(n):
        (folder / "document_qa" / f"vacation-days-{i}.yaml").write_text(
            text.replace("id: vacation-days", f"id: vacation-days-{i}")
        )
    return folder


@pytest.mark.slow
def test_full_gates_what_it_measures_a_wrong_number_regresses_against_its_baseline(tmp_path: Path) -> None:
    from assay.gate import compare

    models = _scripts(tmp_path)
    options = {
        "scenarios_dir": str(_copies_of_vacation_days(tmp_path, 8)),
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
    }
    agent = tmp_path / "agent-under-test.yaml"  # one model name across the runs, so they compare

    def run(name: str, answer: str) -> Path:
        agent.write_text(yaml.safe_dump({"default": {"text": answer}}))
        opts = RunOptions(suite="full", out=tmp_path / name, command_line=["t"])
        return run_benchmark(AgentBenchmark, {**options, "model": f"scripted/{agent}"}, opts).run_dir

    base = run("base", "Every employee gets 25 vacation days per year.")
    honest = compare(base, run("again", "You get 25 vacation days each year."))
    assert honest.exit_code == 0 and honest.regressions == [], honest.verdict
    wrong = compare(base, run("wrong", "Every employee gets 20 vacation days per year."))
    assert wrong.exit_code == 2 and "metric:code_checks_passed" in wrong.regressions, wrong.regressions
    assert {m.name for m in wrong.metrics if m.gated} == {"judged_score", "code_checks_passed"}


def test_a_judge_or_simulator_on_the_agents_own_model_is_refused_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.cli import main

    models = _scripts(tmp_path)
    own = tmp_path / "own.yaml"  # the agent's model, answering the judge's prompt too
    judge_reply = {"match": "Scenario: vacation-days", "text": json.dumps(JUDGE_PASS)}
    own.write_text(yaml.safe_dump({"replies": [judge_reply], "loop": True, "default": {"text": "25 days."}}))
    base = ["eval", "agent", "--suite", "full", "--scenarios", str(FIXTURE), "--scenario", "vacation-days"]
    base += ["--model", f"scripted/{own}"]

    def cli(*extra: str) -> tuple[int, str]:
        with pytest.raises(SystemExit) as exc:
            main([*base, *extra])
        out = capsys.readouterr()
        return int(exc.value.code or 0), out.out + out.err

    code, out = cli("--out", str(tmp_path / "r0"))  # neither given: both default to the agent's model
    assert code == 1
    assert f"the judge and the simulator would run the agent's own model scripted/{own}" in out
    assert "pass --judge-model and --simulator-model naming another model, or --allow-self-judge" in out
    code, out = cli("--simulator-model", models["simulator"], "--out", str(tmp_path / "r1"))
    assert code == 1 and "the judge would run the agent's own model" in out and "--simulator-model" not in out
    # a spec of the same model through another provider is the same model
    code, out = cli(
        "--simulator-model", models["simulator"], "--judge-model", f"openai-compat/{own}@http://h/v1"
    )
    assert code == 1 and "the judge would run" in out
    code, out = cli(
        "--simulator-model", models["simulator"], "--allow-self-judge", "--out", str(tmp_path / "r2")
    )
    assert code == 0, out
    card = json.loads((tmp_path / "r2" / "scorecard.json").read_text())
    assert card["config"]["extra"]["self_judged"] == ["judge"]
    report = (tmp_path / "r2" / "report.md").read_text()
    assert (
        f"**Self-judged** (--allow-self-judge): the judge ran the agent's own model `scripted/{own}`"
        in report
    )
    # separate roles: nothing to allow, and the report says nothing of it
    code, out = cli(
        "--simulator-model",
        models["simulator"],
        "--judge-model",
        models["judge"],
        "--out",
        str(tmp_path / "r3"),
    )
    assert code == 0, out
    assert "Self-judged" not in (tmp_path / "r3" / "report.md").read_text()
    with pytest.raises(SystemExit) as exc:
        main(["eval", "agent", "--scenarios", str(FIXTURE), "--allow-self-judge"])
    assert exc.value.code == 1 and "--allow-self-judge applies to --suite full" in capsys.readouterr().err


LOOPING_AGENT = Path(__file__).resolve().parents[3] / "fixtures" / "agents" / "looping_agent.py"


@pytest.mark.slow
@pytest.mark.parametrize(("calls", "cut"), [(0, True), (2, False)])
def test_max_steps_cuts_off_a_command_agent_at_the_gateway(tmp_path: Path, calls: int, cut: bool) -> None:
    """A command agent that calls its model forever is refused its 4th call at the gateway under --max-steps 3
    and the run is marked cut off; one that makes 2 calls and answers is left alone."""
    models = _scripts(tmp_path)
    agent = tmp_path / "answers-anything.yaml"
    agent.write_text(yaml.safe_dump({"default": {"text": "still thinking"}}))
    options = {
        "scenarios_dir": str(FIXTURE),
        "scenario": "vacation-days",
        "model": f"scripted/{agent}",
        "simulator_model": models["simulator"],
        "judge_model": models["judge"],
        "harness": f"command:python3 {LOOPING_AGENT} {calls}",
        "max_steps": 3,
    }
    result = run_benchmark(
        GatewaySpy, options, RunOptions(suite="full", out=tmp_path / "r", command_line=["t"])
    )
    (row,) = _journal(result.run_dir)
    turn = row["details"]["turns"][0]
    statuses = [c.status for c in GatewaySpy.calls]
    if cut:
        assert statuses == ["ok", "ok", "ok", "cut_off"], statuses
        assert turn["cut_off"] == "steps" and row["details"]["ended_by"] == "cut_off"
        assert turn["agent_error"] is None and row["status"] == "FAIL", row["details"]["reason"]
    else:
        assert statuses == ["ok", "ok"] and turn["cut_off"] is None, statuses
        assert "25 vacation days" in turn["messages"][1]["text"]
