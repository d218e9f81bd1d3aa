"""``results.json``: every request's timings, per load level and iteration (a versioned pydantic record).

Each finished level is also kept as ``serving/<case>-i<iteration>.json`` so a resumed run rebuilds the
whole file from what was measured before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from assay._util import Scrubber, write_scrubbed

__all__ = ["RESULTS_FILE", "LevelResult", "ServingResults", "read_level", "read_results", "write_level"]

SCHEMA_VERSION = 1
RESULTS_FILE = "results.json"
LEVELS_DIR = "serving"


class LevelResult(BaseModel):
    """One load level of one iteration. Request times are seconds from the level's first measured send."""

    schema_version: int = SCHEMA_VERSION
    case_id: str
    iteration: int
    level: dict[str, Any]
    figures: dict[str, Any]
    workload_metrics: dict[str, float] = Field(default_factory=dict)
    per_category: dict[str, dict[str, float]] = Field(default_factory=dict)
    target: dict[str, Any] = Field(default_factory=dict)
    #: what was sent: workload name, output cap, whether a response_format schema constrained the answers,
    #: and (email-triage) the mailbox's majority labels the accuracy baseline answers with
    workload: dict[str, Any] = Field(default_factory=dict)
    requests: list[dict[str, Any]] = Field(default_factory=list)


class ServingResults(BaseModel):
    schema_version: int = SCHEMA_VERSION
    levels: list[LevelResult]


def _level_path(run_dir: Path, case_id: str, iteration: int) -> Path:
    return run_dir / LEVELS_DIR / f"{case_id}-i{iteration}.json"


def read_level(run_dir: Path, case_id: str, iteration: int) -> LevelResult | None:
    path = _level_path(run_dir, case_id, iteration)
    if not path.is_file():
        return None
    return LevelResult.model_validate_json(path.read_text(encoding="utf-8"))


def _all_levels(run_dir: Path) -> list[LevelResult]:
    folder = run_dir / LEVELS_DIR
    if not folder.is_dir():
        return []
    levels = [
        LevelResult.model_validate_json(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))
    ]
    return sorted(levels, key=lambda lv: (lv.iteration, lv.case_id))


def write_level(run_dir: Path, result: LevelResult, scrubber: Scrubber | None = None) -> None:
    """Keep this level and rewrite ``results.json`` from every level measured so far."""
    scrubber = scrubber or Scrubber()
    path = _level_path(run_dir, result.case_id, result.iteration)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_scrubbed(path, result.model_dump_json(), scrubber)
    combined = ServingResults(levels=_all_levels(run_dir))
    write_scrubbed(run_dir / RESULTS_FILE, combined.model_dump_json(indent=1), scrubber)


def read_results(run_dir: Path) -> ServingResults | None:
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        return None
    return ServingResults.model_validate_json(path.read_text(encoding="utf-8"))
