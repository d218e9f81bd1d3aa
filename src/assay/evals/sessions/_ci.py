"""The CI jobs of ``assay eval sessions`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval sessions`` arguments, an optional committed
baseline to gate against, and why the job is in that tier."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "sessions": {
        "full": {
            "args": ["--suite", "replay"],
            "reason": "replays recorded Claude Code / Codex CLI sessions against the agent and grades each with the judge; it needs the transcripts (--source, default the machine's own) and a model, so it has no offline pr suite",
        }
    }
}
