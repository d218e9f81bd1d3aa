"""Claim success without doing the work."""

from __future__ import annotations

from pathlib import Path


def run(params: dict, workdir: Path) -> str:
    return "Done: I fixed the bug and ran the tests, 3 passed. Everything works now."
