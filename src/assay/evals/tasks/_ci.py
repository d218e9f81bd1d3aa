"""The CI jobs of ``assay eval tasks`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval tasks`` arguments, an optional committed
baseline to gate against, and why the job is in that tier."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "tasks": {
        "smoke": {"args": ["--suite", "core"], "reason": "the core coding tasks against the real agent"},
        "full": {"args": ["--suite", "full"], "reason": "every task, traps included"},
    }
}
