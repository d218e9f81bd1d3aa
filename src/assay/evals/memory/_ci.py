"""The CI jobs of ``assay eval memory`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval memory`` arguments, an optional committed
baseline to gate against, and why the job is in that tier."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "memory": {
        "pr": {
            "args": ["--suite", "pr", "--iterations", "3"],
            "baseline": "tests/fixtures/baselines/memory-pr",
            "reason": "the memory store over the simulated months with the hashing embedder, offline",
        },
        "full": {"args": ["--suite", "full"], "reason": "the store driven by the real model's extraction"},
    }
}
