"""The CI jobs of ``assay eval benchmark`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval benchmark`` arguments, an optional committed
baseline to gate against, and why the job is in that tier."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "benchmark": {
        "smoke": {
            "args": ["--suite", "email-triage"],
            "reason": "serving speed and triage accuracy of the release's model server",
        },
        "full": {
            "args": ["--suite", "synthetic", "--sweep"],
            "reason": "latency and throughput over the load sweep",
        },
    }
}
