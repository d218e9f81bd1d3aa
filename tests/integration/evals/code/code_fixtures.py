"""Helpers of the eval code CLI tests: run `assay eval code` in process and read what it wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from assay.cli._eval import eval_group
from assay.runs._journal import latest_attempts, read_journal


def run_code(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(eval_group, ["code", *args], catch_exceptions=False)
    return result.exit_code, result.output


def attempts(run_dir: Path) -> dict[str, Any]:
    return {case: a for (case, _), a in latest_attempts(read_journal(run_dir / "results.jsonl")).items()}


def scorecard(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "scorecard.json").read_text())


def write_script(path: Path, replies: list[dict[str, Any]]) -> str:
    path.write_text(yaml.safe_dump({"replies": replies}))
    return f"scripted/{path}"
