"""What an importer reads from another tool's result: the run's provenance and one record per attempt."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.runs import Attempt, MetricSpec, MetricValue


class ForeignFileError(ConfigError):
    """A file that is not the result the importer reads: names the file and what was expected (exit 1)."""

    def __init__(self, path: Path | str, expected: str) -> None:
        super().__init__(f"not {expected}", path=str(path))


@dataclass
class Imported:
    """One foreign result read into assay's terms, before anything is written.

    ``task`` becomes the run's suite and ``task_version`` its suite version (with the scorer names, so two
    imports compare only when their task and scorers match); ``model`` the subject model, ``subject`` the
    agent or solver (what a comparison refuses to change unless asked).
    """

    tool: str
    tool_version: str
    task: str
    task_version: str
    model: str | None
    subject: str | None
    scorers: list[str]
    attempts: list[Attempt]
    #: every case in the order the tool lists them, with its category
    cases: list[tuple[str, str]]
    iterations: int
    started_at: datetime
    finished_at: datetime | None = None
    #: the tool's own status of the run (``success``, ``cancelled``, ``error``...), None where it has none
    status: str | None = None
    metric_specs: list[MetricSpec] = field(default_factory=list)
    #: run-level metrics the tool computed (lm-eval's aggregates when it logged no samples)
    run_metrics: dict[str, MetricValue] = field(default_factory=dict)
    #: provenance read from the file (the tool's run id, config, scaffold, ...): recorded in meta.json
    provenance: dict[str, Any] = field(default_factory=dict)
    #: why the result has no items to pair (aggregates only); None when it has them
    no_items: str | None = None
    #: what a reader should know about this import (one line each), shown in the report
    notes: list[str] = field(default_factory=list)


def digest(paths: list[Path]) -> str:
    """A short digest of the files' bytes: the same files give the same run id."""
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:12]
