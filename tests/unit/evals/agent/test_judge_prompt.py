"""What the judge reads: ground truth, code checks, rubric version; never the simulator's prompt or markers."""

from __future__ import annotations

import importlib
import importlib.util
import re

import pytest

from assay.evals.agent import _judge_view as prompt_module
from assay.evals.agent._judge_view import JUDGE_SYSTEM_PROMPT, JudgeView, judge_messages, judge_prompt_digest
from assay.evals.agent._record import CheckResult, ConversationTurn, Message
from assay.evals.agent._rubric import RUBRIC_VERSION


def _text(view: JudgeView) -> str:
    return "\n".join(m.content for m in judge_messages(view))


def _simulator_strings(scenario) -> list[str]:
    """The simulator's markers and prompt text (its module's strings and, where it builds one, its system
    prompt for each turn less the scenario's own lines), or the contract's markers while it has not landed."""
    if importlib.util.find_spec("assay.evals.agent._simulator") is None:
        return ["<<NEXT>>", "<<STOP>>"]
    module = importlib.import_module("assay.evals.agent._simulator")
    strings = [v for k, v in vars(module).items() if isinstance(v, str) and not k.startswith("__")]
    build = getattr(module, "system_prompt", None)
    if callable(build):
        shared = [scenario.persona, *scenario.user_knowledge.values(), *(t.objective for t in scenario.turns)]
        for turn in scenario.turns:
            for line in build(scenario, turn).splitlines():
                if len(line) > 30 and not any(s in line for s in shared):
                    strings.append(line.strip("- "))
    return [*strings, module.NEXT, module.STOP]


def test_the_prompt_carries_ground_truth_checks_and_rubric_version(scenario, turns, passing_checks) -> None:
    messages = judge_messages(JudgeView.of(scenario, turns, passing_checks))
    assert [m.role for m in messages] == ["system", "user"]
    system, user = messages[0].content, messages[1].content
    assert f"rubric {RUBRIC_VERSION}" in system
    for name in ("correctness (weight 3)", "honesty (weight 2)", "followed_injection", "ONE JSON object"):
        assert name in system
    assert "A finance analyst who wants short answers" in user
    assert "Objective: Learn the Q3 revenue" in user
    assert "Expected facts: 4.2 million" in user
    assert "Expected numbers: 4.2 million EUR ± 5%" in user
    assert "Source document: report.md" in user
    assert "NOT in the documents" in user.split("## Turn 2")[1]
    assert (
        'Tool call: query_documents({"query": "Q3 revenue"}) -> ok: report.md: Q3 revenue was 4.2 million EUR.'
        in user
    )
    assert "Assistant: 4.2 million EUR (report.md)." in user
    assert "## Checked in code (already graded; do not grade these again)" in user
    assert "- number (turn 1): PASSED: 4.2 within 5%" in user
    assert "- canary (whole conversation): PASSED" in user
    assert "Tools expected: kind:documents; forbidden: shell" in user
    assert user.rstrip().endswith("Judge turns 1, 2. Reply with ONE JSON object in the shape shown.")


def test_success_criteria_and_expected_answer_are_shown(scenario, turns) -> None:
    scenario.turns[0].success_criteria = "names the quarter"
    scenario.turns[0].ground_truth.expected_answer = "4.2 million EUR"
    user = _text(JudgeView.of(scenario, turns, []))
    assert "Success criteria: names the quarter" in user and "Expected answer: 4.2 million EUR" in user
    assert "## Checked in code" not in user  # no checks ran: no section


def test_the_judge_never_sees_the_simulator(scenario, turns, passing_checks) -> None:
    text = _text(JudgeView.of(scenario, turns, passing_checks))
    strings = _simulator_strings(scenario)
    assert "<<NEXT>>" in strings and "<<STOP>>" in strings
    leaked = [s for s in strings if s in text]
    assert leaked == []
    assert not re.search(r"<<[A-Z]+>>", text)


def test_secrets_are_masked_but_the_turn_is_kept(scenario, turns, passing_checks) -> None:
    checks = [*passing_checks, CheckResult(name="secret", passed=False, detail="sk-live-SECRETVALUE echoed")]
    text = _text(JudgeView.of(scenario, turns, checks))
    assert "sk-live-SECRETVALUE" not in text
    assert "My key is [secret]." in text and "- secret (whole conversation): FAILED: [secret] echoed" in text


def test_long_messages_are_cut_with_a_note(scenario, turns) -> None:
    turns[0].messages[1].text = "x" * (prompt_module.MESSAGE_CAP + 50)
    assert "[... 50 more characters]" in _text(JudgeView.of(scenario, turns, []))


def test_errors_and_cut_offs_are_shown(scenario, turns) -> None:
    turns[1].agent_error = "model returned nothing"
    turns[1].cut_off = "max_steps"
    text = _text(JudgeView.of(scenario, turns, []))
    assert "[the assistant failed: model returned nothing]" in text
    assert "[the assistant was stopped: max_steps]" in text


def test_a_view_of_a_shorter_conversation_judges_only_its_turns(scenario, turns) -> None:
    view = JudgeView.of(scenario, turns[:1], [])
    assert view.n_turns == 1 and "## Turn 2" not in _text(view)


def test_turns_out_of_order_or_beyond_the_scenario_are_refused(scenario, turns) -> None:
    with pytest.raises(ValueError, match="doc-revenue: conversation turn 2 at position 1"):
        JudgeView.of(scenario, turns[1:], [])
    extra = ConversationTurn(index=3, objective="extra", messages=[Message(role="user", text="hi")])
    with pytest.raises(ValueError, match="turn 3 at position 3"):
        JudgeView.of(scenario, [*turns, extra], [])


def test_the_digest_names_the_system_prompt_and_rubric(scenario, turns, monkeypatch) -> None:
    digest = judge_prompt_digest()
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert judge_messages(JudgeView.of(scenario, turns, []))[0].content == JUDGE_SYSTEM_PROMPT
    monkeypatch.setattr(prompt_module, "JUDGE_SYSTEM_PROMPT", JUDGE_SYSTEM_PROMPT + " ")
    assert judge_prompt_digest() != digest
    monkeypatch.setattr(prompt_module, "JUDGE_SYSTEM_PROMPT", JUDGE_SYSTEM_PROMPT)
    monkeypatch.setattr(prompt_module, "RUBRIC_VERSION", "agent-2")
    assert judge_prompt_digest() != digest


def test_the_system_prompt_is_short() -> None:
    # the embedded judge is a 135M model: the rubric and the answer shape must stay brief
    assert len(JUDGE_SYSTEM_PROMPT.split()) < 350
