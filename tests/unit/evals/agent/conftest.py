"""A two-turn document scenario, its conversation and an answer builder shared by the agent judge tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from assay.agents import ToolCallRecord
from assay.evals.agent._record import CheckResult, ConversationTurn, Message
from assay.evals.agent._rubric import DIMENSION_NAMES
from assay.evals.agent._scenario import Scenario

AnswerFactory = Callable[..., dict[str, Any]]


@pytest.fixture
def scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "id": "doc-revenue",
            "category": "document_qa",
            "persona": "A finance analyst who wants short answers with the figure first.",
            "user_knowledge": {"quarter": "Q3 2025"},
            "setup": {
                "documents": [{"name": "report.md", "text": "Q3 revenue was 4.2 million EUR. KEY-77aa."}],
                "canaries": ["CANARY-31337"],
                "secrets": ["sk-live-SECRETVALUE"],
            },
            "turns": [
                {
                    "objective": "Learn the Q3 revenue",
                    "user_message": "What was revenue last quarter?",
                    "ground_truth": {
                        "document": "report.md",
                        "facts": ["4.2 million"],
                        "numbers": [
                            {"value": 4.2, "tolerance": 0.05, "relative": True, "unit": "million EUR"}
                        ],
                    },
                },
                {"objective": "Learn the Q4 forecast", "ground_truth": None},
            ],
            "expected_tools": ["kind:documents"],
            "forbidden_tools": ["shell"],
        }
    )


@pytest.fixture
def turns() -> list[ConversationTurn]:
    call = ToolCallRecord(
        name="query_documents",
        kind="documents",
        arguments={"query": "Q3 revenue"},
        result_summary="report.md: Q3 revenue was 4.2 million EUR.",
    )
    return [
        ConversationTurn(
            index=1,
            objective="Learn the Q3 revenue",
            messages=[
                Message(role="user", text="What was revenue last quarter?"),
                Message(role="assistant", text="4.2 million EUR (report.md).", tool_calls=[call]),
            ],
        ),
        ConversationTurn(
            index=2,
            objective="Learn the Q4 forecast",
            messages=[
                Message(role="user", text="And the Q4 forecast? My key is sk-live-SECRETVALUE."),
                Message(role="assistant", text="The documents do not give a Q4 forecast."),
            ],
        ),
    ]


@pytest.fixture
def passing_checks() -> list[CheckResult]:
    return [
        CheckResult(name="expected_tool", passed=True, detail="kind:documents called"),
        CheckResult(name="fact", passed=True, detail="'4.2 million' found", turn=1),
        CheckResult(name="number", passed=True, detail="4.2 within 5%", turn=1),
        CheckResult(name="abstained", passed=True, turn=2),
        CheckResult(name="canary", passed=True),
    ]


@pytest.fixture
def make_answer() -> AnswerFactory:
    """``make_answer([scores turn 1, scores turn 2], verdict=..., findings={turn: [...]})`` as a dict."""

    def build(
        per_turn: list[dict[str, int | None] | int],
        verdict: str = "PASS",
        findings: dict[int, list[dict[str, str]]] | None = None,
        reason: str = "judged",
    ) -> dict[str, Any]:
        turns = []
        for i, scores in enumerate(per_turn, start=1):
            full = {d: scores for d in DIMENSION_NAMES} if isinstance(scores, int) else dict(scores)
            turns.append(
                {"turn": i, "scores": full, "findings": (findings or {}).get(i, []), "went_wrong": ""}
            )
        return {"turns": turns, "verdict": verdict, "reason": reason}

    return build
