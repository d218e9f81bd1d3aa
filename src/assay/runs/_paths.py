"""Where assay keeps machine-wide state (lock, caches, indexes)."""

from __future__ import annotations

import os
from pathlib import Path


def assay_home() -> Path:
    """``$ASSAY_HOME``, default ``~/.assay``; created on first use."""
    home = Path(os.environ.get("ASSAY_HOME") or Path.home() / ".assay").expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home
