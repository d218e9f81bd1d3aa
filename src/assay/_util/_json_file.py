"""Reading a whole JSON file as a user's input: a missing, unreadable or malformed file is one ConfigError
naming the file (and the line where the JSON breaks), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

__all__ = ["read_json_file"]


def read_json_file(path: Path, *, missing: str | None = None) -> Any:
    """The parsed contents of ``path``. ``missing`` is the message for a file that is not there (default: the
    operating system's reason, as for any unreadable file)."""
    if missing is not None and not path.is_file():
        raise ConfigError(missing, path=str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc
