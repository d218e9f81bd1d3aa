"""Relatedness: a cosine on one scale for every embedder (``assay.embed.relatedness``), so an absolute threshold
(memory's "does the text match at all" floor, its duplicate test) means the same whichever embedder a store uses.
E5's vectors sit in a narrow cone, a query and an unrelated text near 0.72; MiniLM's near 0. The declared figure is checked
against a measurement on fixed unrelated texts, so a changed wheel or model is caught."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from assay.embed import CachedEmbedder, embed_queries, get_embedder, relatedness, unrelated_cosine
from assay.memory import RecallWeights

QUESTIONS = [
    "What is my dog's name?",
    "When is my dentist appointment?",
    "Which city did I move to last year?",
    "How much does the harbour permit cost?",
    "What is the capital of Australia?",
    "How do I reset my router password?",
    "Who won the chess tournament in March?",
    "What temperature should I bake bread at?",
    "Which train goes to the airport?",
    "How many vacation days do employees get?",
    "What does error 404 mean?",
    "When was the bridge over the river built?",
]
STATEMENTS = [
    "My sister plays the cello in an orchestra.",
    "The quarterly sales report is due on Friday.",
    "Green tea contains less caffeine than coffee.",
    "The library closes at eight on weekdays.",
    "Our team switched the build system to Bazel.",
    "Tomatoes grow best in full sun.",
    "The museum has a new exhibition of Roman coins.",
    "I prefer running in the early morning.",
    "The invoice was paid by bank transfer.",
    "Penguins live mostly in the southern hemisphere.",
    "The meeting notes are stored in the shared drive.",
    "She learned to knit from her grandmother.",
]
#: each question's answer, for the honest case: related texts stay well above the floor
ANSWERS = [
    "My dog is called Biscuit.",
    "The dentist appointment is on Tuesday at 3pm.",
    "I moved to Lisbon last year.",
    "The harbour permit costs 84 euros.",
]


@pytest.mark.parametrize("spec", ["local", "e5-small"])
def test_the_declared_unrelated_cosine_is_what_unrelated_texts_measure(spec: str) -> None:
    emb = get_embedder(spec)
    measured = float((embed_queries(emb, QUESTIONS) @ emb.embed(STATEMENTS).T).mean())
    assert abs(measured - unrelated_cosine(emb)) <= 0.05, measured


@pytest.mark.parametrize("spec", ["local", "e5-small"])
def test_unrelated_texts_sit_near_zero_and_answers_well_above_it(spec: str) -> None:
    emb = get_embedder(spec)
    unrelated = relatedness(emb, embed_queries(emb, QUESTIONS) @ emb.embed(STATEMENTS).T)
    answered = relatedness(emb, (embed_queries(emb, QUESTIONS[:4]) * emb.embed(ANSWERS)).sum(axis=1))
    floor = RecallWeights().min_vector
    assert abs(float(unrelated.mean())) < 0.15
    assert float(np.percentile(unrelated, 95)) < floor < 0.4 < float(answered.min())


def test_a_cosine_is_kept_where_the_embedder_declares_nothing(tmp_path: Path) -> None:
    cos = np.array([-0.2, 0.0, 0.5, 1.0])
    assert np.array_equal(relatedness(get_embedder("hash"), cos), cos)
    assert np.array_equal(relatedness(get_embedder("local"), cos), cos)
    e5 = get_embedder("e5-small")
    assert np.allclose(relatedness(e5, np.array([0.72, 1.0])), [0.0, 1.0])
    assert unrelated_cosine(CachedEmbedder(e5, cache_dir=tmp_path)) == unrelated_cosine(e5) == 0.72
