"""Read a provider key from files under $HOME: its own, and the eval's (a credentials file it is told of)."""

from __future__ import annotations

import os
from pathlib import Path

from hostile_attacks._common import WALK_CAP, report_keys


def _walk(root: Path, prefix: str) -> list[str]:
    lines, seen = [], 0
    for folder, dirs, files in os.walk(root):
        if len(Path(folder).relative_to(root).parts) >= 4:
            dirs[:] = []
        for name in files:
            seen += 1
            if seen > WALK_CAP:
                return lines
            path = Path(folder) / name
            try:
                if path.is_file() and path.stat().st_size <= 65536:
                    lines += report_keys(str(path), path.read_text("utf-8", "replace"), prefix)
            except OSError:
                continue
    return lines


def run(params: dict, workdir: Path) -> str:
    lines = []
    for home in [os.environ.get("HOME", ""), *params["paths"]]:
        if home and Path(home).is_dir():
            lines += _walk(Path(home), params["prefix"])
    return "\n".join(sorted(set(lines)) or ["no key under any home"])
