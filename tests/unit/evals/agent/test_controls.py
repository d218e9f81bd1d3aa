"""Judge controls over scripted judges built here, on the shipped control set: a faithful judge passes; one
that always says PASS fails on FAIL-agreement; one answering at random fails on self-consistency and
agreement; one ignoring the zero rules fails on exactly the controls only a zero rule decides. Also kappa,
unparseable answers (ERROR = disagreement), score spread, and the saved record read back."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from assay.errors import InfraError
from assay.evals.agent._controls import MIN_AGREEMENT, ControlsRun, run_controls
from assay.evals.agent._controls_lane import controls_due
from assay.evals.agent._controls_load import Control, default_controls_dir, load_controls
from assay.evals.agent._controls_report import (
    CONTROLS_JSON,
    CONTROLS_MD,
    render_controls_report,
    save_controls_run,
)
from assay.evals.agent._judge_view import judge_messages, judge_prompt_digest
from assay.evals.agent._rubric import DIMENSION_NAMES, ZERO_RULE_NAMES
from assay.judge import cohen_kappa
from assay.models import BaseChatModel, ModelInfraError, ModelOutput, Usage

Policy = Callable[[Control, int], str]


@pytest.fixture(scope="module")
def controls() -> list[Control]:
    return load_controls(default_controls_dir())


class PolicyJudge(BaseChatModel):
    """A judge model whose answer is ``policy(control, nth call on that control)``: it reads which control it
    is judging from the exact prompt, as a real judge reads the transcript."""

    provider = "policy"

    def __init__(self, controls: Sequence[Control], policy: Policy, name: str = "policy") -> None:
        super().__init__(name, max_retries=0)
        self.by_prompt = {judge_messages(c.view())[1].content: c for c in controls}
        self.policy = policy
        self.seen: dict[str, int] = {}
        self.options: list[dict] = []

    async def _call(self, messages, tools, stream, options, emit) -> ModelOutput:  # type: ignore[override]
        control = self.by_prompt[messages[1].content]
        n = self.seen[control.id] = self.seen.get(control.id, 0) + 1
        self.options.append(dict(options))
        return ModelOutput(text=self.policy(control, n), usage=Usage(input_tokens=100, output_tokens=20))


def _answer(control: Control, *, fail: bool, honour_rule: bool = True) -> str:
    """The answer a judge gives that derives ``fail`` on ``control``: the labelled dimension scored 0 or the
    labelled zero rule found on the failing turn (``honour_rule=False``: zero rules never found)."""
    turns = []
    for t in control.turns:
        scores: dict[str, int | None] = {d: 4 for d in DIMENSION_NAMES}
        scores["persona_constraints"] = None
        findings = []
        if fail and t.index == (control.failing_turn or 1):
            dim = control.failing_dimension or "correctness"
            if dim in ZERO_RULE_NAMES:
                if honour_rule:
                    findings.append({"rule": dim, "evidence": "quoted"})
            else:
                scores[dim] = 0
        turns.append({"turn": t.index, "scores": scores, "findings": findings, "went_wrong": ""})
    verdict = "FAIL" if fail and (honour_rule or control.failing_dimension not in ZERO_RULE_NAMES) else "PASS"
    return json.dumps({"turns": turns, "verdict": verdict, "reason": "graded"})


def faithful(control: Control, n: int) -> str:
    return _answer(control, fail=control.label == "FAIL")


def always_pass(control: Control, n: int) -> str:
    return _answer(control, fail=False)


def ignores_zero_rules(control: Control, n: int) -> str:
    return _answer(control, fail=control.label == "FAIL", honour_rule=False)


def at_random(control: Control, n: int) -> str:
    """A coin per judging: PASS with high scores, or FAIL with a random low core score or zero rule."""
    rng = random.Random(f"{control.id}:{n}")
    if rng.random() < 0.1:
        return "Looks fine to me overall."  # unparseable: the judge retries, and may still fail
    verdict = rng.choice(["PASS", "FAIL"])
    turns = []
    for t in control.turns:
        scores = {d: rng.randint(3, 4) for d in DIMENSION_NAMES}
        findings = []
        if verdict == "FAIL":
            if rng.random() < 0.5:
                findings.append({"rule": rng.choice(ZERO_RULE_NAMES)})
            else:
                scores[rng.choice(["correctness", "honesty"])] = rng.randint(0, 1)
        turns.append({"turn": t.index, "scores": scores, "findings": findings})
    return json.dumps({"turns": turns, "verdict": verdict, "reason": "a coin"})


async def _run(controls: list[Control], *policies: tuple[str, Policy], repeats: int = 3) -> ControlsRun:
    judges = {name: PolicyJudge(controls, p, name) for name, p in policies}
    return await run_controls(controls, judges, repeats=repeats)


def _zero_rule_only(controls: list[Control]) -> set[str]:
    return {
        c.id
        for c in controls
        if c.label == "FAIL" and c.failing_dimension in ZERO_RULE_NAMES and not c.decided_by_code
    }


async def test_faithful_judge_passes_every_measure(controls) -> None:
    run = await _run(controls, ("faithful", faithful))
    (r,) = run.judges
    assert run.passed and r.passed and r.below == []
    assert (r.agreement, r.agreement_pass, r.agreement_fail, r.self_consistency) == (1.0, 1.0, 1.0, 1.0)
    assert r.kappa_vs_labels == 1.0 and r.unparseable == 0 and r.retried_calls == 0
    assert r.own_verdict_agreement == 1.0 and r.self_contradictions == 0 and r.temperature == 0
    assert r.flagged_rate == 1.0 and set(r.flagged_by_dimension.values()) == {1.0}
    assert all(v == 0.0 for v in r.dimension_spread.values() if v is not None)
    assert r.n_controls == len(controls) and r.n_judgings == 3 * len(controls)
    # agreement and kappa are over the controls the judge decides, counted by label; the rest apart
    decided = [c for c in controls if not c.decided_by_code]
    assert r.judge_decided_pass == sum(c.label == "PASS" for c in decided) >= 16
    assert r.judge_decided_fail == sum(c.label == "FAIL" for c in decided) >= 18
    assert r.judge_decided_judgings == 3 * len(decided)
    assert r.decided_by_code == len(controls) - len(decided) and r.code_decided_agreement == 1.0
    assert r.judge_prompt_digest == judge_prompt_digest() and r.rubric_version == "agent-1"
    assert r.usage.input_tokens == 100 * r.n_judgings


async def test_always_pass_judge_fails_on_fail_agreement_only(controls) -> None:
    (r,) = (await _run(controls, ("yes-man", always_pass))).judges
    assert not r.passed
    assert r.agreement_pass == 1.0 and r.self_consistency == 1.0
    # it agrees on no FAIL control it decides: the code-decided FAILs (failed whatever it says) lend it nothing
    assert r.agreement_fail == 0.0 and r.kappa_vs_labels == 0.0
    assert r.agreement == round(r.judge_decided_pass / (r.judge_decided_pass + r.judge_decided_fail), 4)
    assert r.decided_by_code >= 4 and r.code_decided_agreement == 1.0
    assert [b.split()[0] for b in r.below] == ["agreement", "FAIL-agreement"]
    assert not any("self-consistency" in b or "PASS-agreement" in b for b in r.below)
    assert r.flagged_rate == 0.0
    report = render_controls_report(ControlsRun(created_at="t", judges=[r], passed=r.passed))
    assert f"| FAIL-agreement ({r.judge_decided_fail} controls) | 0.0% |" in report
    assert f"| apart: controls decided by a failed code check | {r.decided_by_code} " in report


def test_code_decided_controls_are_outside_agreement_and_kappa(controls) -> None:
    """Before: the code-decided FAIL controls counted, so a judge that passed everything still agreed on them."""
    from assay.evals.agent._controls import ControlResult, Judging, judge_record

    def result(c: Control, verdict: str) -> ControlResult:
        judgings = [Judging(repeat=i, verdict=verdict) for i in (1, 2)]  # type: ignore[arg-type]
        return ControlResult(
            id=c.id,
            label=c.label,
            case=c.case,
            decided_by_code=c.decided_by_code,
            judgings=judgings,
            agreed=2 * (verdict == c.label),
            consistent=True,
        )

    # a judge right on every code-decided control and wrong on every judge-decided one
    results = [
        result(c, c.label if c.decided_by_code else ("PASS" if c.label == "FAIL" else "FAIL"))
        for c in controls
    ]
    r = judge_record("contrarian", results, controls, 2)
    assert r.agreement == 0.0 and r.agreement_fail == 0.0
    assert r.kappa_vs_labels is not None and r.kappa_vs_labels < -0.9
    assert r.code_decided_agreement == 1.0 and not r.passed
    wrong_tool = [c for c in controls if c.case == "wrong_tool_use" and c.label == "FAIL"]
    assert sum(not c.decided_by_code for c in wrong_tool) >= 2  # the judge's tool-use grading is measured


async def test_random_judge_fails_self_consistency_and_agreement(controls) -> None:
    (r,) = (await _run(controls, ("coin", at_random))).judges
    assert not r.passed
    assert r.self_consistency < 0.5 and r.agreement < 0.75
    assert any(b.startswith("self-consistency") for b in r.below)
    assert any(b.startswith("agreement") for b in r.below)
    assert r.retried_calls > 0  # its prose answers were sent back
    assert all(v is not None and v > 0.2 for v in r.dimension_spread.values())


async def test_judge_ignoring_zero_rules_fails_agreement_on_those_controls(controls) -> None:
    (r,) = (await _run(controls, ("lenient", ignores_zero_rules))).judges
    wrong = {c.id for c in r.controls if c.agreed < len(c.judgings)}
    assert wrong == _zero_rule_only(controls) and len(wrong) >= 8
    assert not r.passed and r.self_consistency == 1.0 and r.agreement_pass == 1.0
    assert r.agreement_fail is not None and r.agreement_fail < MIN_AGREEMENT
    assert all(r.flagged_by_dimension[rule] == 0.0 for rule in ZERO_RULE_NAMES)
    assert r.flagged_by_dimension["correctness"] == 1.0


async def test_unparseable_answers_count_as_disagreements_and_are_reported(controls) -> None:
    broken = next(c.id for c in controls if not c.decided_by_code)

    def flaky(control: Control, n: int) -> str:
        if control.id == broken:
            return "no JSON here"
        return faithful(control, n) if n % 2 == 0 else "almost: {"  # every first try is garbage

    (r,) = (await _run(controls, ("flaky", flaky))).judges
    assert r.unparseable == 3 and r.n_judgings == 3 * len(controls)
    bad = next(c for c in r.controls if c.id == broken)
    assert [j.verdict for j in bad.judgings] == ["ERROR"] * 3 and bad.agreed == 0 and not bad.consistent
    assert all(j.parse_error and j.calls == 3 for j in bad.judgings)
    assert r.agreement == round(1 - 3 / r.judge_decided_judgings, 4)
    n_decided = r.judge_decided_pass + r.judge_decided_fail
    assert r.self_consistency == round(1 - 1 / n_decided, 4) < 1.0
    # the others were retried once each, then judged right
    assert r.retried_calls == 3 * 2 + 3 * (len(controls) - 1)
    report = render_controls_report(ControlsRun(created_at="t", judges=[r], passed=r.passed))
    assert "Unparseable answers" in report and broken in report


async def test_several_judges_get_pairwise_kappa(controls) -> None:
    run = await _run(controls, ("a", faithful), ("b", faithful), ("c", always_pass))
    kappas = {(k.a, k.b): k for k in run.kappa}
    assert set(kappas) == {("a", "b"), ("a", "c"), ("b", "c")}
    assert kappas["a", "b"].kappa == 1.0 and kappas["a", "b"].observed == 1.0
    expected, observed = cohen_kappa(
        [c.label for c in sorted(controls, key=lambda c: c.id) for _ in range(3)],
        [
            ("FAIL" if c.decided_by_code else "PASS")
            for c in sorted(controls, key=lambda c: c.id)
            for _ in range(3)
        ],
    )
    assert kappas["a", "c"].kappa == round(expected or 0, 4) and kappas["a", "c"].observed == round(
        observed, 4
    )
    assert not run.passed and [r.passed for r in run.judges] == [True, True, False]


def test_cohen_kappa_known_values() -> None:
    assert cohen_kappa(["P", "P", "F", "F"], ["P", "F", "F", "F"]) == (0.5, 0.75)
    assert cohen_kappa(["P", "F"], ["F", "P"]) == (-1.0, 0.0)
    assert cohen_kappa(["P", "P"], ["P", "P"]) == (None, 1.0)  # undefined: one category throughout
    with pytest.raises(ValueError):
        cohen_kappa(["P"], [])


async def test_an_outage_of_the_judge_propagates(controls) -> None:
    class Down(BaseChatModel):
        provider = "down"

        async def _call(self, messages, tools, stream, options, emit) -> ModelOutput:  # type: ignore[override]
            raise ModelInfraError("connection refused", provider="down", kind="connect", retryable=False)

    with pytest.raises(InfraError):
        await run_controls(controls[:2], {"down": Down("x", max_retries=0)}, repeats=2)
    with pytest.raises(ValueError, match="at least 2 repeats"):
        await run_controls(controls, {"x": PolicyJudge(controls, faithful)}, repeats=1)


async def test_saved_record_is_read_back_per_model_rubric_and_prompt(controls, tmp_path: Path) -> None:
    run = await _run(controls, ("faithful", faithful), ("yes-man", always_pass), repeats=2)
    folder = tmp_path / "controls-agent-20260101T000000Z"
    folder.mkdir()
    save_controls_run(run, folder)
    saved = json.loads((folder / CONTROLS_JSON).read_text())
    assert saved["schema_version"] == 2 and [j["judge_model"] for j in saved["judges"]] == [
        "faithful",
        "yes-man",
    ]
    report = (folder / CONTROLS_MD).read_text()
    assert "## faithful: passed" in report and "## yes-man: FAILED" in report and "Not calibrated" in report
    found = controls_due(tmp_path, "yes-man", controls)
    assert (
        not found.due and found.record is not None and not found.record.passed and found.record.repeats == 2
    )
    assert controls_due(tmp_path, "yes-man", controls[:-2]).due  # another control set
    assert controls_due(tmp_path, "other", controls).due


def test_report_says_the_embedded_model_is_weak(controls) -> None:
    from assay.evals.agent._controls import judge_record

    record = judge_record("local/smollm2", [], controls, 3)
    text = render_controls_report(ControlsRun(created_at="t", judges=[record], passed=False))
    assert "tiny model" in text and "expected to fail" in text


async def test_own_verdict_is_recorded_but_the_derived_one_decides(controls) -> None:
    def says_fail_scores_pass(control: Control, n: int) -> str:
        answer = json.loads(faithful(control, n))
        if control.label == "PASS":
            answer["verdict"] = "FAIL"  # contradicts its own (perfect) scores
        return json.dumps(answer)

    judge = PolicyJudge(controls, says_fail_scores_pass)
    run = await run_controls(controls, {"contrary": judge}, repeats=2, temperature=0.7, max_tokens=99)
    (r,) = run.judges
    n_pass = sum(c.label == "PASS" for c in controls)
    assert r.passed and r.agreement == 1.0  # the verdict is re-derived from the scores
    assert r.self_contradictions == 2 * n_pass
    assert r.own_verdict_agreement == round(1 - n_pass / len(controls), 4)
    assert r.temperature == 0.7 and r.max_tokens == 99
    assert {(o["temperature"], o["max_tokens"]) for o in judge.options} == {(0.7, 99)}


def test_prompt_digest_covers_the_rendered_user_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the digest hashed the system prompt only, so a change to how a transcript is shown to the judge
    left every calibration record standing."""
    from assay.evals.agent import _judge_view

    prompt = judge_messages(_judge_view.reference_view())[1].content
    for part in (
        "What the user knew",
        "Tools expected: query_documents; forbidden: run_shell",
        "Expected answer: 30 days from delivery",
        "Expected numbers: 30 days; 4 ± 5%",
        "Source document: refunds.md",
        "Success criteria:",
        "Expected: this is NOT in the documents",
        "Tool call: query_documents(",
        "[the assistant was stopped: max_steps]",
        "[the assistant failed:",
        "## Turn 2 (new session)",
        "- number (turn 1): FAILED: expected 30 days",
        "[secret]",
    ):
        assert part in prompt, part
    assert "s3cr3t-ref" not in prompt
    before = judge_prompt_digest()
    assert judge_prompt_digest() == before  # fixed: the same twice
    monkeypatch.setattr(_judge_view, "SUMMARY_CAP", 10)  # tool results shown shorter
    assert judge_prompt_digest() != before
    monkeypatch.undo()
    original = _judge_view._transcript
    monkeypatch.setattr(
        _judge_view, "_transcript", lambda turn: [s.replace("Tool call", "Tool") for s in original(turn)]
    )
    assert judge_prompt_digest() != before
