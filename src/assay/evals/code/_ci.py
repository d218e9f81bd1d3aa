"""The CI jobs of ``assay eval code`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval code`` arguments, an optional committed
baseline to gate against, and why the job is in that tier."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "code": {
        "pr": {
            "args": ["--suite", "pr"],
            "reason": "each project's reference solution replayed offline: the before/after tests and the outcome rules",
        },
        "full": {"args": ["--suite", "full"], "reason": "the agent under test edits every project"},
    }
}
