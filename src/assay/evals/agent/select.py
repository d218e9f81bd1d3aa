"""Targeted runs: ``--category``, ``--scenario`` (comma lists) and ``--tier NAME`` pick the scenarios to run.

Each flag given narrows the selection (they combine with AND). An unknown category, scenario id or tier is a
ConfigError naming the flag before anything runs, and so is a combination that selects nothing.

A draft (``<dir>/drafts/<category>/<id>.yaml``) is in no suite: it runs only when ``--scenario`` names its id
(:func:`named_drafts`), so ``assay eval agent promote`` has runs of it to read.
"""

from __future__ import annotations

import difflib
import glob
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.evals.agent._scenario import Scenario
from assay.evals.agent.tiers import load_tiers, tiers_path

__all__ = ["Selection", "named_drafts", "parse_list", "select"]


@dataclass(frozen=True)
class Selection:
    """What a targeted run ran: the flags, the scenario ids selected (suite order) and the suite's size."""

    by: dict[str, Any] = field(default_factory=dict)
    selected: list[str] = field(default_factory=list)
    of: int = 0

    @property
    def targeted(self) -> bool:
        return bool(self.by)

    def as_extra(self) -> dict[str, Any]:
        return {"by": dict(self.by), "selected": list(self.selected), "of": self.of}


def parse_list(value: str | Sequence[str] | None) -> list[str]:
    """``"a, b"`` or ``["a", "b,c"]`` -> ``["a", "b", "c"]`` (order kept, blanks and repeats dropped)."""
    if value is None:
        return []
    parts = [value] if isinstance(value, str) else list(value)
    out: list[str] = []
    for part in parts:
        for item in str(part).split(","):
            item = item.strip()
            if item and item not in out:
                out.append(item)
    return out


def named_drafts(directory: Path, scenario: str | Sequence[str] | None, known: set[str]) -> list[Scenario]:
    """The drafts ``--scenario`` names (ids not among ``known``, found as ``drafts/<category>/<id>.yaml``)."""
    from assay.evals.agent.scenario_load import DRAFTS_DIR, ScenarioWarning, load_scenario

    found: list[Scenario] = []
    for sid in parse_list(scenario):
        if sid in known:
            continue
        for path in sorted(Path(directory).glob(f"{DRAFTS_DIR}/*/{glob.escape(sid)}.yaml")):
            with warnings.catch_warnings():  # a draft's category may be "uncategorized" until promote
                warnings.simplefilter("ignore", ScenarioWarning)
                found.append(load_scenario(path, root=Path(directory)))
    return found


def _unknown(flag: str, given: list[str], known: Sequence[str], what: str) -> None:
    missing = [g for g in given if g not in known]
    if not missing:
        return
    hints = []
    for m in missing:
        close = difflib.get_close_matches(m, known, n=1)
        hints.append(f"{m!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    listing = ", ".join(sorted(known)) if len(known) <= 20 else f"{len(known)} {what}s; see --list"
    raise ConfigError(f"{flag}: unknown {what} {', '.join(hints)}; known: {listing}")


def select(
    scenarios: Sequence[Scenario],
    *,
    category: str | Sequence[str] | None = None,
    scenario: str | Sequence[str] | None = None,
    tier: str | None = None,
    scenarios_dir: Path | None = None,
) -> tuple[list[Scenario], Selection]:
    """The scenarios the flags select (suite order) and the :class:`Selection` to record."""
    ids = [s.id for s in scenarios]
    categories = sorted({s.category for s in scenarios})
    cats, wanted = parse_list(category), parse_list(scenario)
    _unknown("--category", cats, categories, "category")
    _unknown("--scenario", wanted, ids, "scenario id")
    by: dict[str, Any] = {}
    keep = set(ids)
    if cats:
        by["category"] = cats
        keep &= {s.id for s in scenarios if s.category in cats}
    if wanted:
        by["scenario"] = wanted
        keep &= set(wanted)
    if tier:
        tiers = load_tiers(tiers_path(scenarios_dir or Path(".")))
        if tier not in tiers.tiers:
            raise ConfigError(
                f"--tier {tier!r}: unknown tier; known: {', '.join(tiers.tiers)}", path=str(tiers.path)
            )
        listed = tiers.tiers[tier].scenarios
        stale = [s for s in listed if s not in ids]
        if stale:
            raise ConfigError(
                f"--tier {tier}: the tier names {', '.join(map(repr, stale[:5]))}, which are no scenario in "
                f"{scenarios_dir}",
                path=str(tiers.path),
            )
        by["tier"] = tier
        keep &= set(listed)
    chosen = [s for s in scenarios if s.id in keep]
    if by and not chosen:
        flags = " ".join(f"--{k} {v if isinstance(v, str) else ','.join(v)}" for k, v in by.items())
        raise ConfigError(f"{flags}: selects no scenario (the flags combine: each narrows the others)")
    selection = Selection(by=by, selected=[s.id for s in chosen], of=len(scenarios)) if by else Selection()
    return chosen, selection
