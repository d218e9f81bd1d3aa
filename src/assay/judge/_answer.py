"""Reading a judge's reply: every JSON object in it, wherever the model put it (fences, prose around it)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_objects"]


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text`` (inside fences or prose), in order."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        i = text.find("{", end)
    return found
