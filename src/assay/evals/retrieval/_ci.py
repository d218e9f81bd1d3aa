"""The CI jobs of ``assay eval retrieval`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval retrieval`` arguments, an optional committed
baseline to gate against, and why the job is in that tier."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "retrieval-rag": {
        "pr": {
            "args": ["--component", "rag", "--suite", "pr", "--iterations", "3"],
            "baseline": "tests/fixtures/baselines/retrieval-rag-pr",
            "reason": "document retrieval on the shipped labelled documents, offline",
        },
        "full": {
            "args": ["--component", "rag", "--suite", "pr", "--scale-tiers", "100,1000"],
            "reason": "the same questions with the scale tiers",
        },
    },
    "retrieval-code": {
        "full": {
            "args": ["--component", "code", "--suite", "pr", "--iterations", "3"],
            "baseline": "tests/fixtures/baselines/retrieval-code-pr",
            "reason": "code search over the pinned repository snapshots, offline, gated against its committed baseline; it embeds about 1,200 chunks per repository with the local embedder (minutes on two cores), too slow for every pull request",
        }
    },
    "retrieval-code-jinja": {
        "full": {
            "args": ["--component", "code", "--suite", "jinja"],
            "reason": "the same code search on a second real history (23 changes between five pinned Jinja2 sdists), so a ranking that only suits click is seen; about 2,000 chunks per release with the local embedder",
        }
    },
}
