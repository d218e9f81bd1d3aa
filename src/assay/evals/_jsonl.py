"""Reading a JSON Lines transcript whose every line is an object: a malformed line is a ConfigError naming the
file, the line and the column, never skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.errors import ConfigError

__all__ = ["json_objects"]


def json_objects(path: Path, text: str, what: str = "transcript") -> list[dict[str, Any]]:
    """The objects of ``text`` (the contents of ``path``), one per non-blank line."""
    out: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"malformed JSON ({exc.msg}, column {exc.colno})", path=str(path), line=n
            ) from exc
        if not isinstance(value, dict):
            raise ConfigError(f"a {what} line is a JSON object", path=str(path), line=n)
        out.append(value)
    return out
