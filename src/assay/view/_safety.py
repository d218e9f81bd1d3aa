"""Path safety: the viewer serves only files it found under ``--dir``, never a path a request names.

A run is looked up by its key in the runs found by walking ``--dir``; a file of a run by its name in a short
allowlist of the artifacts assay writes (all scrubbed when written). Anything with ``..``, a separator, a
NUL, or a resolved path outside ``--dir`` (a symlink out) is refused.
"""

from __future__ import annotations

import re
from pathlib import Path

#: artifacts of a run directory the viewer may send as files (every one written through the scrubber)
SERVED_FILES = re.compile(r"^(report\.html|report\.md|comparison\.md|[A-Za-z0-9_.\-]+\.png)$")


def inside(root: Path, path: Path) -> bool:
    """Whether ``path``, symlinks resolved, is ``root`` or under it."""
    try:
        return path.resolve(strict=True).is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # missing, or a symlink loop
        return False


def safe_name(name: str) -> bool:
    """A single plain file name: no separator, no ``..``, no NUL, no leading dot."""
    return (
        bool(name) and "/" not in name and "\\" not in name and "\0" not in name and not name.startswith(".")
    )


def run_file(root: Path, run_dir: Path, name: str) -> Path | None:
    """The artifact ``name`` of ``run_dir`` when it may be served, else None."""
    if not safe_name(name) or not SERVED_FILES.match(name):
        return None
    path = run_dir / name
    if path.is_symlink() or not path.is_file() or not inside(root, path):
        return None
    return path
