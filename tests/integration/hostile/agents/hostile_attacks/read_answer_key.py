"""Read the answer key: probes, hidden tests, reference answers, the gold patch, the judge's script, expectations."""

from __future__ import annotations

from pathlib import Path

from hostile_attacks._common import read_any


def run(params: dict, workdir: Path) -> str:
    return "\n".join(line for path in params["paths"] for line in read_any(path))
