"""Move suggestions between a benchmark's CI tiers, from a health report's flags: the record and its markdown.

A benchmark with CI tiers says which cases should move through its :class:`MoveAdvisor`
(``Benchmark.move_advisor()``; the agent benchmark's is ``assay.evals.agent``'s tier moves). Printed and saved,
never applied: a person edits the tiers file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel

from ._load import LoadedRun

if TYPE_CHECKING:
    from ._health_cases import CaseHealth


class MoveSuggestion(BaseModel):
    scenario: str
    #: the flag (or ``stable-pass``, for a backlog scenario passed again) the suggestion comes from
    flag: str
    #: the tiers that list it now (``excluded`` when it runs in none)
    tiers: list[str]
    #: where it should go; None: it stays where it is (``action`` says what to check)
    target: str | None
    action: str
    #: for a move to backlog: the reason to write next to it in the tiers file
    reason: str | None = None
    #: model -> "passes/attempts", strongest first
    evidence: dict[str, str]


@dataclass
class MoveAdvice:
    """The tiers file the moves were suggested for (None: none, with ``note`` saying why) and the moves."""

    tiers_file: str | None
    moves: list[MoveSuggestion] = field(default_factory=list)
    note: str | None = None


class MoveAdvisor(Protocol):
    """A benchmark's CI tiers: where its cases run, and which should move given their health."""

    def advise(
        self,
        runs: Sequence[LoadedRun],
        cases: Sequence[CaseHealth],
        models: Sequence[str],
        tiers_file: Path | str | None,
    ) -> MoveAdvice: ...

    def backlog(self, runs: Sequence[LoadedRun]) -> list[str] | None:
        """The cases in the backlog tier of the runs' tiers file (None: no tiers file)."""
        ...


def moves_markdown(moves: Sequence[MoveSuggestion], tiers_file: str | None, note: str | None) -> list[str]:
    lines = ["### CI tier moves (suggested, never applied)", ""]
    if tiers_file is None:
        return [*lines, note or "no move suggestions", ""]
    lines.append(f"Tiers file: `{tiers_file}`.")
    lines.append("")
    if not moves:
        return [*lines, "No scenario needs a move.", ""]
    for m in moves:
        now = ", ".join(m.tiers)
        if m.target is None:
            move = f"stays in {now}"
        elif m.target in m.tiers:  # out of the others, kept in the target
            move = f"out of {', '.join(t for t in m.tiers if t != m.target)}, stays in {m.target}"
        else:
            move = f"{now} → {m.target}"
        evidence = ", ".join(f"`{model}` {e}" for model, e in m.evidence.items())
        lines.append(f"- **{m.scenario}** ({m.flag}; {move}): {m.action}. Passes/attempts: {evidence}.")
        if m.reason:
            lines.append(f"  Reason to write in {m.target}: “{m.reason}”.")
    lines.append("")
    return lines
