"""Score fusion's normalisation rule, and the fusion rule as provenance (issue 38)."""

from __future__ import annotations

import numpy as np
import pytest

from assay.embed import get_embedder
from assay.errors import ConfigError
from assay.gate import compare
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.rag import DocumentIndex
from assay.ranking import HYBRID_ALPHA, HYBRID_NORMALIZE, convex, fusion_rule, hybrid_defaults
from assay.runs.records import SubjectConfig


def test_minmax_gives_a_narrow_cosine_band_its_weight() -> None:
    cos = np.array([0.90, 0.86, 0.84])  # E5-like: every candidate looks alike by cosine/max
    bm25 = np.array([0.0, 10.0, 5.0])
    by_max = convex(cos, bm25, 0.5, "max")
    by_minmax = convex(cos, bm25, 0.5, "minmax")
    assert int(np.argmax(by_max)) == 1  # BM25 decides alone: the dense term is nearly constant
    assert by_minmax.tolist() == pytest.approx([0.5, 0.5 * (0.02 / 0.06) + 0.5, 0.25])
    assert convex(np.array([0.3]), np.array([0.0]), 0.5, "minmax").tolist() == [0.5]
    assert convex(np.array([]), np.array([]), 0.5, "minmax").size == 0
    with pytest.raises(ValueError, match="normalize must be one of max, minmax"):
        convex(cos, bm25, 0.5, "z")  # type: ignore[arg-type]


def test_the_index_records_its_rule_and_refuses_a_bad_one(tmp_path) -> None:
    emb = get_embedder("hash")
    idx = DocumentIndex(emb, cache_dir=None, normalize="minmax", alpha=0.6)
    assert idx.fusion_rule == "convex/minmax/alpha=0.6" == fusion_rule("convex", 0.6, "minmax", 60)
    assert DocumentIndex(emb, cache_dir=None, fusion="rrf").fusion_rule == "rrf/k=60"
    idx.index_texts([("a", "the ferry carries cars across the bay every hour")])
    idx.save(tmp_path / "idx")
    assert DocumentIndex.load(tmp_path / "idx", emb, cache_dir=None).fusion_rule == idx.fusion_rule
    with pytest.raises(ConfigError, match="normalize must be one of max, minmax, got 'z'"):
        DocumentIndex(emb, cache_dir=None, normalize="z")  # type: ignore[arg-type]


class _Named:
    def __init__(self, name: str) -> None:
        self.name, self.dim, self.id = name, 4, name


def test_a_learned_embedder_gets_the_measured_rule_and_the_hash_stand_in_keeps_the_old_one() -> None:
    assert (HYBRID_NORMALIZE, HYBRID_ALPHA) == ("minmax", 0.7)
    assert hybrid_defaults("sentence-transformers/all-MiniLM-L6-v2") == ("minmax", 0.7)
    assert hybrid_defaults("hash") == ("max", 0.5)
    assert DocumentIndex(_Named("intfloat/multilingual-e5-small"), cache_dir=None).fusion_rule == (
        "convex/minmax/alpha=0.7"
    )
    assert DocumentIndex(get_embedder("hash"), cache_dir=None).fusion_rule == "convex/max/alpha=0.5"


def _run(rule: str | None):
    extra = {} if rule is None else {"fusion_rule": rule}
    return card({"q1": "PPP", "q2": "PFP"}, config=SubjectConfig(subject="assay.rag", extra=extra))


def test_runs_with_different_fusion_rules_are_not_compared() -> None:
    comp = compare(_run("convex/max/alpha=0.5"), _run("convex/minmax/alpha=0.5"))
    assert not comp.comparable and comp.exit_code == 3
    assert comp.not_comparable == [
        "retrieval fusion differs: baseline 'convex/max/alpha=0.5', current 'convex/minmax/alpha=0.5'"
    ]
    same = compare(_run("convex/minmax/alpha=0.5"), _run("convex/minmax/alpha=0.5"))
    assert same.comparable and same.not_comparable == []
    assert compare(_run(None), _run(None)).comparable  # benchmarks without retrieval record none
