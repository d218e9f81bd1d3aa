"""LongMemEval without a model: the gold answer must be in what the agent is shown, as whole words."""

from __future__ import annotations

import pytest

from assay.evals.memory._longmemeval import contains_answer


@pytest.mark.parametrize(
    ("text", "answer", "ok"),
    [
        ("You adopted 2 cats.", "2", True),
        ("That was back in 2023.", "2", False),
        ("It is in the Bergenstrasse.", "Bergen", False),
        ("You moved to Bergen in May.", "bergen", True),
        ("She is called Anne-Marie.", "Anne Marie", True),
        ("Nothing here.", "", False),
    ],
)
def test_gold_answer_matches_on_word_boundaries(text: str, answer: str, ok: bool) -> None:
    assert contains_answer(text, answer) is ok
