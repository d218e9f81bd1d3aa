"""The toy benchmark's case view for ``assay view``."""

from __future__ import annotations

from typing import Any


def toy_view(run: Any, attempt: Any) -> str:
    return f'<p class="toyreg">toy saw {attempt.details.get("seen")}</p>'
