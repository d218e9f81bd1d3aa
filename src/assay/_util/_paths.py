"""Where assay keeps machine-wide state (lock, caches, indexes)."""

from __future__ import annotations

import os
from pathlib import Path

from assay.errors import ConfigError


def assay_home() -> Path:
    """``$ASSAY_HOME``, default ``~/.assay``; created on first use (ConfigError if it cannot be)."""
    env = os.environ.get("ASSAY_HOME")
    home = Path(env or Path.home() / ".assay").expanduser()
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        source = "ASSAY_HOME" if env else "the default ASSAY_HOME (~/.assay)"
        why = "it is a file" if home.exists() and not home.is_dir() else exc.strerror
        raise ConfigError(
            f"{source} cannot be used as a folder ({why}); set ASSAY_HOME to a writable folder",
            path=str(home),
        ) from exc
    return home
