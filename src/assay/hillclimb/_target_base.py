"""What a hillclimb target is (:class:`Target`) and what an edit must never contain (:class:`Forbidden`).

Below each target (``_target_agent``, ``_target_tasks``) and the loop that picks one (``_target``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from assay.hillclimb._noise_pick import NoiseFit
from assay.runs import Attempt

__all__ = ["Forbidden", "Target"]


@dataclass
class Forbidden:
    """What an edit may not contain (checked on the lines it adds, see :mod:`assay.hillclimb._edits`)."""

    case_ids: list[str] = field(default_factory=list)
    #: ground-truth phrases: facts and expected answers (matched as the code checks match facts)
    phrases: list[str] = field(default_factory=list)
    #: ground-truth numbers (NumberFact); only distinctive ones are checked (see _edits)
    numbers: list[Any] = field(default_factory=list)
    #: fixture paths and names: workdir files and documents of the scenarios
    paths: list[str] = field(default_factory=list)
    #: planted strings (canaries, secrets)
    planted: list[str] = field(default_factory=list)


class Target(Protocol):
    benchmark: str
    suite: str
    #: the --category the cases were chosen by (None: every category)
    category: str | None
    #: attempts in flight at once in a measurement (the benchmark's own default)
    max_concurrency: int

    def cases(self) -> dict[str, str]:
        """Case id -> category of every case the loop may use (the selection, runnable on this suite)."""

    def run_options(self, case_ids: list[str], profile: Path) -> dict[str, Any]:
        """The benchmark options that run exactly ``case_ids`` with the agent's profile at ``profile``."""

    def forbidden(self) -> Forbidden: ...

    def noise_fit(self) -> NoiseFit:
        """What a noise file must have been made for to give this loop's runs their floors."""

    def failure_view(self, attempt: Attempt) -> dict[str, Any]:
        """What the fixer may see of one failing train attempt: no ground truth, no judge's advice."""
