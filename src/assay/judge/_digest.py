"""The judge's prompt digest: what a scorecard and a calibration record name the judge's prompt by."""

from __future__ import annotations

import hashlib

__all__ = ["prompt_digest"]


def prompt_digest(*parts: str) -> str:
    """sha256 (hex) of ``parts`` joined by newlines: the fixed system prompt, then whatever versions it (a
    rubric version). Calibration records are keyed by it: a prompt that changed is an uncalibrated judge."""
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()
