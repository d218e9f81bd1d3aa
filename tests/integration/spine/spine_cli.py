"""Run the real `assay` CLI in a subprocess (importable by name from the spine tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def assay(args: list[str], env: dict[str, str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        **kw,
    )


def start_assay(args: list[str], env: dict[str, str], cwd: Path, **kw: object) -> subprocess.Popen[str]:
    """Start the CLI in the background (output discarded unless ``kw`` says otherwise), to kill or interrupt it."""
    streams: dict[str, object] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, **kw}
    return subprocess.Popen([sys.executable, "-m", "assay", *args], env=env, cwd=cwd, text=True, **streams)
