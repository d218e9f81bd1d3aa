"""Read earlier results: every run directory under the results folder (journals, scorecards, judge verdicts)."""

from __future__ import annotations

from pathlib import Path

from hostile_attacks._common import read_any


def run(params: dict, workdir: Path) -> str:
    return "\n".join(line for path in params["paths"] for line in read_any(path, max_files=20))
