"""LongMemEval grading: gold answers match whole words; an abstention must really decline to answer."""

from __future__ import annotations

import pytest

from assay.evals.memory._longmemeval import abstains, contains_answer


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


@pytest.mark.parametrize(
    ("reply", "ok"),
    [
        ("I don't know which gym you joined.", True),
        ("You never mentioned a sister, so I can't tell.", True),
        ("There is no information about your sister's job in my memory.", True),
        ("I cannot recall you telling me that.", True),
        ("I'm not sure.", True),
        ("You cannot park there; you said the garage is on 5th Street.", False),
        ("Your sister cannot stand cats, she works as a nurse.", False),
        ("I'm not sure, but I think it was Tuesday.", False),
        ("It was Tuesday.", False),
    ],
)
def test_abstention_means_declining_not_the_word_cannot(reply: str, ok: bool) -> None:
    assert abstains(reply) is ok
