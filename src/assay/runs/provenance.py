"""Where and from what a run came: git commit, machine, python."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from functools import lru_cache
from pathlib import Path


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_commit(cwd: Path | None = None) -> str | None:
    """HEAD of the repository at ``cwd`` (default: the current directory), or None outside git."""
    return _git(["rev-parse", "HEAD"], cwd or Path.cwd())


def git_dirty(cwd: Path | None = None) -> bool | None:
    status = _git(["status", "--porcelain", "--untracked-files=no"], cwd or Path.cwd())
    return None if status is None else bool(status)


@lru_cache(maxsize=1)
def machine() -> dict[str, object]:
    return {
        "hostname": socket.gethostname(),
        "os": f"{platform.system()} {platform.release()}",
        "cpu_count": os.cpu_count() or 1,
        "python": platform.python_version(),
    }
