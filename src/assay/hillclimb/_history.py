"""``fix_history.json``: the split, the baseline, every round (its diff, both splits before and after with
intervals, kept / reverted / rejected and why, cost per role), where the loop is, and the final rollup.

It is rewritten after every step, so a loop stopped by an outage or Ctrl-C resumes from it
(``assay hillclimb --resume DIR``) at the round and phase it was in.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.errors import ConfigError
from assay.hillclimb._split import Split

__all__ = ["HISTORY", "SCHEMA_VERSION", "FixHistory", "RoundRecord", "SplitScore", "load_history"]

SCHEMA_VERSION = 1
HISTORY = "fix_history.json"

Outcome = Literal["kept", "reverted", "rejected", "no_edit"]
Phase = Literal["fixing", "measuring", "done"]


class SplitScore(BaseModel):
    """One split measured once: its run directory and pass rate with the run's interval."""

    run_dir: str
    cases: int
    measured: int
    passed: int
    pass_rate: float | None
    low: float | None = None
    high: float | None = None
    judged_score: float | None = None
    judged_low: float | None = None
    judged_high: float | None = None
    #: scenarios with at least one failing attempt
    failing: list[str] = Field(default_factory=list)
    #: role -> {"calls", "input_tokens", "output_tokens", "cost_usd"} (cost None: unknown)
    cost: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def short(self) -> str:
        if self.pass_rate is None:
            return "not measured"
        iv = f" [{self.low:.2f}, {self.high:.2f}]" if self.low is not None and self.high is not None else ""
        return f"{self.pass_rate:.2f}{iv}"


class Verdict(BaseModel):
    """The gate's comparison of one split before and after an edit (``assay.gate.compare``)."""

    comparable: bool
    verdict: str
    improved: list[str] = Field(default_factory=list)
    regressed: list[str] = Field(default_factory=list)
    not_comparable: list[str] = Field(default_factory=list)


class RoundRecord(BaseModel):
    round: int
    phase: Phase = "fixing"
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    #: the fixer's own summary of its edit (its answer), and the edit as a diff of the profile
    fixer_answer: str = ""
    diff: str = ""
    #: repo-relative paths the edit changed, created or deleted
    touched: list[str] = Field(default_factory=list)
    train_before: SplitScore
    heldout_before: SplitScore
    train_after: SplitScore | None = None
    heldout_after: SplitScore | None = None
    train_verdict: Verdict | None = None
    heldout_verdict: Verdict | None = None
    outcome: Outcome | None = None
    reason: str = ""
    #: the commit a kept edit made on the scratch branch
    commit: str | None = None
    #: role -> usage of this round (fixer, and the agent / simulator / judge of both re-runs)
    cost: dict[str, dict[str, Any]] = Field(default_factory=dict)
    elapsed_s: float | None = None

    @property
    def flat(self) -> bool:
        return self.outcome is not None and self.outcome != "kept"


class FixHistory(BaseModel):
    schema_version: int = SCHEMA_VERSION
    benchmark: str
    suite: str
    category: str | None = None
    #: the eval options every measurement runs with (models, caps, scenario folder)
    eval_options: dict[str, Any] = Field(default_factory=dict)
    fixer: str
    fixer_model: str | None = None
    #: the tool every call of a reference fixer was held to (``--fixer-tool``), or None
    fixer_tool: str | None = None
    #: the fixer ran under bubblewrap (``--fixer-fence``)
    fixer_fence: bool = False
    #: the caps of each fixer run (``assay.agents.Limits``)
    fixer_limits: dict[str, Any] = Field(default_factory=dict)
    repo: str
    profile: str
    branch: str
    base_commit: str
    iterations: int
    noise: str | None = None
    rounds_max: int
    max_cost: float | None = None
    max_wall_s: float | None = None
    split: Split
    baseline_train: SplitScore | None = None
    baseline_heldout: SplitScore | None = None
    rounds: list[RoundRecord] = Field(default_factory=list)
    status: Literal["running", "interrupted", "stopped", "finished"] = "running"
    stop_reason: str = ""
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    #: seconds the loop ran, summed over resumes
    elapsed_s: float = 0.0
    #: the session's result: gains on each split (final minus baseline pass rate) and the overfitting flag
    train_gain: float | None = None
    heldout_gain: float | None = None
    overfitting: bool | None = None
    overfitting_note: str = ""
    #: remaining failures: category -> failing dimension -> scenario ids
    rollup: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    cost_total: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def save(self, directory: Path) -> Path:
        from assay.runs.rundir import write_model

        directory.mkdir(parents=True, exist_ok=True)
        return write_model(directory / HISTORY, self)

    def current(self) -> tuple[SplitScore, SplitScore]:
        """The scores of the profile as it stands: the last kept round's, else the baseline's."""
        for r in reversed(self.rounds):
            if r.outcome == "kept" and r.train_after is not None and r.heldout_after is not None:
                return r.train_after, r.heldout_after
        assert self.baseline_train is not None and self.baseline_heldout is not None
        return self.baseline_train, self.baseline_heldout


def load_history(directory: Path) -> FixHistory:
    path = Path(directory) / HISTORY
    if not path.is_file():
        raise ConfigError(f"--resume {directory}: no {HISTORY} (not a hillclimb directory)", path=str(path))
    try:
        return FixHistory.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, json.JSONDecodeError) as exc:
        raise ConfigError(f"unreadable {HISTORY}: {exc}", path=str(path)) from exc
