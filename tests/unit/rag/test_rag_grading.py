from __future__ import annotations

import asyncio

import pytest

from assay.evals.retrieval._rag_answers import grade_answer
from assay.evals.retrieval._rag_data import Evidence, Question
from assay.evals.retrieval._rag_score import grade_exact, grade_numeric, is_hit, normalise_answer, numbers_in
from assay.models import ModelOutput
from assay.rag import Chunk


@pytest.mark.parametrize(
    ("answer", "value", "unit", "ok"),
    [
        ("Revenue was EUR 182.5 million [2].", 182_500_000, "EUR", True),
        ("About 182.6m euros.", 182_500_000, "EUR", True),  # within 1%
        ("EUR 185 million.", 182_500_000, "EUR", False),  # 1.4% off
        ("2,400,000 passengers", 2_400_000, "passengers", True),
        ("23%", 23, "%", True),
        ("0.23 of operating costs", 23, "%", True),  # a fraction for a percentage
        ("23 percent", 23, "%", True),
        ("It was 0.5 m/s.", 0.5, "m/s", True),
        ("seven directors", 7, "directors", True),
        ("In 2025 it was 14.8", 11_300_000, "EUR", False),
        ("I don't know.", 64, "people", False),
        ("64 people.\nLater, 12 more were rescued.", 12, "people", False),  # only the first sentence counts
    ],
)
def test_numeric_grading(answer: str, value: float, unit: str, ok: bool) -> None:
    assert grade_numeric(answer, value, unit) is ok


def test_numbers_apply_scale_words() -> None:
    assert numbers_in("1.5 billion and 3k and 12%") == [
        (1.5e9, False),
        (3.0, False),
        (3000.0, False),
        (12.0, True),
    ]


@pytest.mark.parametrize(
    ("answer", "expected", "ok"),
    [
        ("The Lakeshore Walk [2].", ["Lakeshore Walk"], True),
        ("lakeshore walk", ["Lakeshore Walk"], True),
        ("Green.", ["green"], True),
        ("Evergreen containers", ["green"], False),
        ("Room B-214, on this floor.", ["room B-214", "B-214"], True),
        ("The blue ones.", ["green"], False),
        ("14:00", ["14:00", "2 pm"], True),
    ],
)
def test_exact_grading(answer: str, expected: list[str], ok: bool) -> None:
    assert grade_exact(answer, expected) is ok


def test_normalise() -> None:
    assert normalise_answer("  The Port-Aven route, 93.4%! ") == "port aven route 93.4%"


def _chunk(doc: str, start: int, end: int, page: int = 1) -> Chunk:
    return Chunk(doc, 0, start, end, page, page, "", "x" * (end - start), 1)


def test_hit_rule_half_the_quote_or_the_labelled_page() -> None:
    ev = Evidence("d", "q" * 100, None, span=(100, 200))
    assert is_hit(_chunk("d", 150, 400), ev)  # covers exactly half
    assert not is_hit(_chunk("d", 151, 400), ev)
    assert not is_hit(_chunk("other", 100, 200), ev)
    page_only = Evidence("d", None, 3)
    assert is_hit(_chunk("d", 900, 1000, page=3), page_only)
    assert not is_hit(_chunk("d", 900, 1000, page=2), page_only)


def test_a_labelled_quote_is_not_found_by_another_chunk_on_its_page() -> None:
    quoted = Evidence("d", "q" * 100, 3, span=(100, 200))
    assert is_hit(_chunk("d", 100, 200, page=3), quoted)
    assert not is_hit(_chunk("d", 900, 1000, page=3), quoted)  # same page, not the quote
    with pytest.raises(ValueError, match="never placed"):
        is_hit(_chunk("d", 100, 200, page=3), Evidence("d", "q" * 100, 3))


class _Judge:
    name = "judge"

    def __init__(self, reply: str) -> None:
        self.reply = reply

    async def generate(self, messages, tools=None, stream=False, **kw) -> ModelOutput:
        return ModelOutput(text=self.reply)


def test_judge_questions_are_unscored_without_a_judge() -> None:
    q = Question("q", "What?", "Between April and June.", "judge", [Evidence("d", "x")])
    assert asyncio.run(grade_answer(q, "April to June", None))[:2] == ("unscored", None)
    assert asyncio.run(grade_answer(q, "April to June", _Judge("CORRECT")))[:2] == ("correct", True)
    assert asyncio.run(grade_answer(q, "In May", _Judge("INCORRECT: wrong months")))[:2] == ("wrong", False)
    numeric = Question("n", "How many?", "64", "numeric", [Evidence("d", "x")], value=64)
    assert asyncio.run(grade_answer(numeric, "64 people drowned.", None))[:2] == ("correct", True)
