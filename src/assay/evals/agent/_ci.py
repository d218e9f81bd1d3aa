"""The CI jobs of ``assay eval agent`` (``assay ci plan`` runs them; ``assay ci verify`` requires the ``full``
ones before a final tag): job name -> CI tier -> the ``assay eval agent`` arguments, an optional committed
baseline to gate against, and why the job is in that tier. The ``full`` jobs run every role on the tier's one
model, so they say ``--allow-self-judge`` (the report marks the run self-judged); a job that names a separate
``--judge-model`` and ``--simulator-model`` can drop it."""

from __future__ import annotations

from typing import Any

CI_JOBS: dict[str, dict[str, dict[str, Any]]] = {
    "agent": {
        "pr": {
            "args": ["--suite", "pr", "--iterations", "3"],
            "baseline": "tests/fixtures/baselines/agent-pr",
            "reason": "scripted agent, simulator and judge: every code check and the re-derived verdict, offline in seconds",
        },
        "smoke": {
            "args": ["--suite", "full", "--tier", "smoke", "--allow-self-judge"],
            "reason": "the smoke scenarios (security and honesty first) against the real model",
        },
        "full": {
            "args": ["--suite", "full", "--tier", "full", "--allow-self-judge"],
            "reason": "every scenario not in backlog, against the real model",
        },
        "backlog": {
            "args": ["--suite", "full", "--tier", "backlog", "--allow-self-judge", "--iterations", "3"],
            "reason": "the scenarios health flagged on real runs (always-fail or flaky), three times each, so a fix that holds can be moved out",
        },
    }
}
