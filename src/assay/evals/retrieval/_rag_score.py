"""Scoring for the rag benchmark: the hit rule, rank metrics, standard IR metrics and answer grading."""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence

from assay.evals.retrieval._rag_data import Evidence, Question
from assay.rag import Chunk

__all__ = [
    "RECALL_KS",
    "first_hit_rank",
    "grade_exact",
    "grade_numeric",
    "is_hit",
    "mrr_at_k",
    "ndcg_at_k",
    "normalise_answer",
    "numbers_in",
    "rank_metrics",
    "recall_at_k",
]

RECALL_KS = (1, 3, 5, 10, 20)


def is_hit(chunk: Chunk, evidence: Evidence) -> bool:
    """A chunk covering at least half of the evidence quote; for a page-only label, one on the labelled page.

    A labelled quote is the evidence: a chunk elsewhere on the same page does not hold it, so the page is
    the rule only where no quote was labelled.
    """
    if chunk.doc_id != evidence.doc:
        return False
    if evidence.quote:
        if evidence.span is None:
            raise ValueError(f"evidence quote in {evidence.doc!r} was never placed (run verify_labels first)")
        a, b = evidence.span
        overlap = min(b, chunk.end) - max(a, chunk.start)
        return overlap * 2 >= (b - a)
    return evidence.page is not None and chunk.page <= evidence.page <= chunk.page_end


def first_hit_rank(chunks: Sequence[Chunk], question: Question) -> int | None:
    for rank, chunk in enumerate(chunks, start=1):
        if any(is_hit(chunk, e) for e in question.evidence):
            return rank
    return None


def rank_metrics(
    prefix: str, rank: int | None, doc_ranking: Sequence[str], question: Question
) -> dict[str, float]:
    """recall@1/3/5/10/20, reciprocal rank and document recall@5 of one question."""
    out = {f"{prefix}_recall@{k}": float(rank is not None and rank <= k) for k in RECALL_KS}
    out[f"{prefix}_mrr"] = 1.0 / rank if rank else 0.0
    wanted = {e.doc for e in question.evidence}
    out[f"{prefix}_doc_recall@5"] = len(wanted & set(doc_ranking[:5])) / len(wanted)
    return out


# ------------------------------------------------------------------------------------- IR metrics


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    """nDCG@k with linear gains, as trec_eval computes ``ndcg_cut``."""
    dcg = sum(
        qrels.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]) if qrels.get(doc, 0) > 0
    )
    ideal = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 100) -> float:
    relevant = {d for d, r in qrels.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranking[:k])) / len(relevant)


def mrr_at_k(ranking: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranking[:k], start=1):
        if qrels.get(doc, 0) > 0:
            return 1.0 / i
    return 0.0


# --------------------------------------------------------------------------------- answer grading

_SCALE = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "millions": 1e6, "m": 1e6, "mn": 1e6,
    "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12,
}  # fmt: skip
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_NUMBER = re.compile(
    r"(?<![\w.])(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)\s*(%|percent\b|per cent\b)?\s*"
    r"(thousand|millions?|billion|trillion|bn|mn|k|m|b)?(?![a-z])",
    re.IGNORECASE,
)


def numbers_in(text: str) -> list[tuple[float, bool]]:
    """Numbers in ``text`` with their scale words applied, each with whether it was a percentage.

    A one-letter scale (k, m, b) is ambiguous with units (m for metres), so both readings are returned.
    """
    out: list[tuple[float, bool]] = []
    for m in _NUMBER.finditer(text):
        value = float(m.group(1).replace(",", ""))
        percent = bool(m.group(2))
        scale = (m.group(3) or "").lower()
        if len(scale) == 1:  # "540 m" may be metres, "182.5m" millions: keep both readings
            out.append((value, percent))
        out.append((value * _SCALE.get(scale, 1.0), percent))
    for word, value in _WORDS.items():
        if re.search(rf"\b{word}\b", text, re.IGNORECASE):
            out.append((float(value), False))
    return out


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n", text.strip(), maxsplit=1)[0]
    return first or text


def grade_numeric(answer: str, value: float, unit: str = "", rel_tol: float = 0.01) -> bool:
    """True when a number in the answer's first sentence is within ``rel_tol`` of ``value``.

    Scale words (thousand, million, bn, k) are applied; for a percentage a fraction (0.23) also matches 23%.
    """
    candidates = numbers_in(_first_sentence(answer))
    for got, percent in candidates:
        options = [got]
        if unit == "%" and not percent and abs(got) <= 1.0:
            options.append(got * 100)
        if unit != "%" and percent:
            options.append(got / 100)
        for x in options:
            if value == 0 and abs(x) < 1e-9:
                return True
            if value != 0 and abs(x - value) <= rel_tol * abs(value):
                return True
    return False


_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise_answer(text: str) -> str:
    """Lower case, no punctuation (except inside numbers), no articles, single spaces."""
    text = text.lower().strip()
    text = "".join(" " if ch in string.punctuation and ch not in "%." else ch for ch in text)
    text = re.sub(r"\.(?!\d)", " ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def grade_exact(answer: str, expected: Sequence[str]) -> bool:
    """True when the normalised answer equals, or its first sentence contains, a normalised expected form."""
    got = normalise_answer(answer)
    first = normalise_answer(_first_sentence(answer))
    for option in expected:
        want = normalise_answer(option)
        if not want:
            continue
        if got == want or re.search(rf"(?<!\w){re.escape(want)}(?!\w)", first):
            return True
    return False
