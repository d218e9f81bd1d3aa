"""The controls lane: is judge calibration due?

Calibration is due for a judge model when its newest record (``results/controls-*/controls.json``) was made
with another judge prompt, another rubric (its version or :func:`~assay.evals.agent._rubric.rubric_digest`) or
another labelled control set, or when the judge model has no record at all (a judge model that changed is a
new name with none). ``assay eval agent controls --if-changed`` runs the controls only then; otherwise it
repeats the standing result: exit 0 when that record passed, 2 when it did not (a judge that failed stays
uncalibrated until something changes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from assay.evals.agent._controls import JudgeRecord, iter_records
from assay.evals.agent._controls_load import Control, controls_digest
from assay.evals.agent._judge_view import judge_prompt_digest
from assay.evals.agent._rubric import RUBRIC_VERSION, rubric_digest
from assay.evals.agent.tiers import ControlsLane, load_tiers, tiers_path

__all__ = ["LaneCheck", "controls_due", "controls_lane"]


@dataclass(frozen=True)
class LaneCheck:
    judge_model: str
    due: bool
    #: why calibration is due, in words (empty when it is not)
    reasons: list[str] = field(default_factory=list)
    #: the judge model's newest record, and when its run was made
    record: JudgeRecord | None = None
    recorded_at: str | None = None


def controls_due(results_dir: Path, judge_model: str, controls: list[Control]) -> LaneCheck:
    """Whether ``judge_model`` must be calibrated again on ``controls``, judged by its newest record."""
    newest: tuple[str, JudgeRecord] | None = None
    for created_at, r in iter_records(results_dir):
        if r.judge_model == judge_model and (newest is None or created_at >= newest[0]):
            newest = (created_at, r)
    if newest is None:
        return LaneCheck(judge_model, True, [f"no calibration of {judge_model} under {results_dir}"])
    at, record = newest
    reasons: list[str] = []
    prompt = judge_prompt_digest()
    if record.judge_prompt_digest != prompt:
        reasons.append(f"the judge prompt changed ({record.judge_prompt_digest[:12]} -> {prompt[:12]})")
    if record.rubric_version != RUBRIC_VERSION:
        reasons.append(f"the rubric version changed ({record.rubric_version} -> {RUBRIC_VERSION})")
    elif record.rubric_digest != rubric_digest():
        was = (record.rubric_digest or "not recorded")[:12]
        reasons.append(f"the rubric changed ({was} -> {rubric_digest()[:12]})")
    digest = controls_digest(controls)
    if record.controls_digest != digest:
        reasons.append(f"the labelled controls changed ({record.controls_digest} -> {digest})")
    return LaneCheck(judge_model, bool(reasons), reasons, record, at)


def controls_lane(tiers_file: Path | None = None) -> tuple[Path, ControlsLane | None]:
    """The tiers file (``tiers_file``, else the shipped scenarios' ``ci_tiers.json``) and its ``lanes.controls``:
    the judge models and repeats the CI lane calibrates (None when the file names no lane)."""
    from assay.evals.agent.scenario_load import default_scenarios_dir

    path = tiers_file or tiers_path(default_scenarios_dir())
    return path, load_tiers(path).controls_lane
