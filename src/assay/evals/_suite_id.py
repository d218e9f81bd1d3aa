"""One suite identity for every benchmark: a hash of what the suite really contains.

Two runs are comparable only when their suites are the same content, not the same name or size. The
version hashes each case's id, category and input, the bytes of the data files the suite reads, and any
setting that changes what is measured; the label in front is for people, the digest decides.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.exec import Case

__all__ = ["file_sha256", "suite_version"]

DIGEST_CHARS = 16


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def suite_version(
    label: str,
    cases: Sequence[Case],
    *,
    files: Iterable[Path] = (),
    extra: Mapping[str, Any] | None = None,
) -> str:
    """``<label>-<digest>``: the digest of the cases (id, category, input), data ``files`` and ``extra``.

    Files are keyed by name, so moving a dataset does not change its identity but editing it does.
    """
    payload = {
        "cases": [[c.id, c.category, c.input] for c in cases],
        "files": sorted([p.name, file_sha256(p)] for p in files),
        "extra": dict(extra or {}),
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return f"{label}-{hashlib.sha256(text.encode()).hexdigest()[:DIGEST_CHARS]}"
