"""assay view's agent case page lists a tool check the record could not settle as not measured, beside the
measured ones (never as passed or failed)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from assay.view._case import agent_view


def test_a_not_measured_tool_check_is_shown_as_such() -> None:
    details = {
        "turns": [],
        "checks": [{"name": "fact", "passed": True, "turn": 1, "detail": "'25 days' is in the answer"}],
        "not_measured": [{"name": "expected_tool", "detail": "kind:documents: not known whether called"}],
    }
    html = agent_view(SimpleNamespace(), SimpleNamespace(details=details))  # type: ignore[arg-type]
    row: Any = html[html.index("expected_tool") :]
    assert "— not measured" in row[:200] and "kind:documents: not known whether called" in row
    assert "✔ passed" in html and html.count("✘ failed") == 0
