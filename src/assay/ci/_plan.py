"""What a CI event runs: ``assay ci plan --event pr|tag|schedule|dispatch``.

The rules, in order:

- ``pr`` runs the ``pr`` tier (offline suites, gated against committed baselines); ``schedule`` runs ``backlog``.
  A job that runs a scenario tier listing nothing (``--tier backlog`` while health has flagged nothing on real
  runs) is left out with a notice.
- ``dispatch`` runs the tier it names (``--tier``), optionally narrowed by ``--categories``/``--scenarios``.
- The ``controls`` lane (judge calibration) joins the jobs of any event that runs a whole tier (not a dispatch
  narrowed by ``--categories``/``--scenarios``) when it is due: a judge
  model the lane names has no committed record (``lanes.controls.records``) made with the current judge prompt,
  rubric and labelled controls (a judge model named for the first time has none). The job says why.
- A tag is a *final* release (``v1.2.3``), an *RC* (``v1.2.3-rc1``, ``v1.2.3-rc.1``) or neither (nothing runs).
  A final tag runs ``verify`` and ignores any marker. An RC tag runs ``smoke``; the markers count only in an
  annotated tag's message (a lightweight tag has none, whatever its commit says): ``[full eval]`` runs
  ``full``, ``[skip eval]`` skips the lanes with a notice, both at once is an error.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from assay.errors import ConfigError
from assay.evals.agent.tiers import CI_TIERS, CiJob, ControlsLane, Tiers

__all__ = [
    "CONTROLS_JOB",
    "EVENTS",
    "FULL_MARKER",
    "SKIP_MARKER",
    "Plan",
    "PlannedJob",
    "classify_tag",
    "controls_job",
    "make_plan",
    "rc_tags_of",
]

EVENTS = ("pr", "tag", "schedule", "dispatch")
FULL_MARKER = "[full eval]"
SKIP_MARKER = "[skip eval]"
_FINAL = re.compile(r"^v?\d+\.\d+\.\d+$")
_RC = re.compile(r"^(v?\d+\.\d+\.\d+)-rc\.?\d+$")
#: where the planned jobs write (relative to the checkout)
RESULTS_ROOT = "results/ci"
#: the name of the judge calibration job (the ``controls`` lane)
CONTROLS_JOB = "controls"

TagKind = Literal["final", "rc", "other"]


def classify_tag(tag: str) -> TagKind:
    if _FINAL.match(tag):
        return "final"
    return "rc" if _RC.match(tag) else "other"


def rc_tags_of(final: str, tags: list[str]) -> list[str]:
    """The RC tags of a final tag among ``tags`` (``v1.2.3`` -> ``v1.2.3-rc1``, ``v1.2.3-rc.2``...)."""
    return sorted(t for t in tags if (m := _RC.match(t)) and m.group(1) == final)


@dataclass(frozen=True)
class PlannedJob:
    """One ``assay eval`` a workflow runs: its name, tier, command line and where its outputs go."""

    name: str
    benchmark: str
    tier: str
    argv: list[str]
    junit: str
    results_dir: str
    baseline: str | None
    reason: str

    @property
    def command(self) -> str:
        return shlex.join(self.argv)


@dataclass
class Plan:
    event: str
    tier: str | None
    jobs: list[PlannedJob] = field(default_factory=list)
    verify: bool = False
    skipped: bool = False
    tag: str | None = None
    notice: str = ""
    targeted: dict[str, list[str]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["run_evals"] = bool(self.jobs)
        out["matrix"] = {"include": [{**asdict(j), "command": j.command} for j in self.jobs]}
        return out

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2) + "\n"

    def text(self) -> str:
        head = f"event {self.event}" + (f" · tag {self.tag}" if self.tag else "")
        lines = [head + (f" · tier {self.tier}" if self.tier else "")]
        if self.notice:
            lines.append(f"notice: {self.notice}")
        if self.verify:
            lines.append("verify: a full sweep must have measured this commit or one of its RC tags")
        for job in self.jobs:
            lines.append(f"  {job.name} ({job.reason})")
            lines.append(f"    {job.command}")
        if not (self.jobs or self.verify):
            lines.append("nothing to run")
        return "\n".join(lines)


def _tier_for(
    event: str, tag: str | None, annotation: str | None, tier: str | None
) -> tuple[str | None, bool, bool, str]:
    """(tier, verify, skipped, notice) for an event."""
    if event == "pr":
        return "pr", False, False, ""
    if event == "schedule":
        return "backlog", False, False, ""
    if event == "dispatch":
        if tier is None:
            raise ConfigError(f"--event dispatch needs --tier ({', '.join(CI_TIERS)})")
        return tier, False, False, ""
    if not tag:
        raise ConfigError("--event tag needs --tag NAME")
    kind = classify_tag(tag)
    if kind == "final":
        note = "a final tag runs verify; markers in its annotation are ignored" if annotation else ""
        return None, True, False, note
    if kind == "other":
        return None, False, False, f"tag {tag!r} is neither a final (v1.2.3) nor an RC (v1.2.3-rc1) tag"
    text = (annotation or "").lower()
    full, skip = FULL_MARKER in text, SKIP_MARKER in text
    if full and skip:
        raise ConfigError(f"--annotation of {tag}: has both {FULL_MARKER} and {SKIP_MARKER}; keep one")
    if skip:
        return None, False, True, f"{SKIP_MARKER} in the annotation of {tag}: the eval lanes are skipped"
    if full:
        return "full", False, False, f"{FULL_MARKER} in the annotation of {tag}"
    return "smoke", False, False, ""


def _targeting(
    job: CiJob, options: set[str], categories: list[str], scenarios: list[str], model: str | None
) -> list[str] | None:
    """The extra arguments a dispatch adds to ``job``; None if the job cannot take its filters."""
    extra: list[str] = []
    for values, option in ((categories, "category"), (scenarios, "scenario")):
        if values:
            if option not in options:
                return None
            extra += [f"--{option}", ",".join(values)]
    if model is not None and "model" in options:
        extra += ["--model", model]
    return extra


def _job_options(benchmark: str) -> set[str]:
    from assay.evals import get_benchmark

    return set(get_benchmark(benchmark).Options.model_fields)


def make_plan(
    tiers: Tiers,
    event: str,
    *,
    tag: str | None = None,
    annotation: str | None = None,
    tier: str | None = None,
    categories: list[str] | None = None,
    scenarios: list[str] | None = None,
    model: str | None = None,
) -> Plan:
    """What ``event`` runs under ``tiers``; a ConfigError names the flag that is wrong."""
    if event not in EVENTS:
        raise ConfigError(f"--event {event!r}: choose one of {', '.join(EVENTS)}")
    if tier is not None and tier not in CI_TIERS:
        raise ConfigError(f"--tier {tier!r}: choose one of {', '.join(CI_TIERS)}")
    if tier is not None and event != "dispatch":
        raise ConfigError(f"--tier applies to --event dispatch; {event} picks its own tier")
    categories, scenarios = categories or [], scenarios or []
    if (categories or scenarios or model) and event != "dispatch":
        raise ConfigError("--categories, --scenarios and --model apply to --event dispatch")
    if model is not None and tier == "pr":
        raise ConfigError("--model: the pr tier runs the offline suites, which play every role from scripts")
    if annotation is not None and event != "tag":
        raise ConfigError("--annotation is a tag's message; it applies to --event tag")
    chosen, verify, skipped, notice = _tier_for(event, tag, annotation, tier)
    plan = Plan(event, chosen, verify=verify, skipped=skipped, tag=tag, notice=notice)
    if chosen is None:
        return plan
    if categories:
        plan.targeted["categories"] = categories
    if scenarios:
        plan.targeted["scenarios"] = scenarios
    empty: list[str] = []
    for job in tiers.jobs_in(chosen):
        if _names_empty_tier(tiers, job):
            empty.append(job.name)
            continue
        extra: list[str] | None = []
        if event == "dispatch":
            extra = _targeting(job, _job_options(job.benchmark), categories, scenarios, model)
            if extra is None:
                continue
        plan.jobs.append(_planned(job, extra or []))
    if empty:
        note = f"{', '.join(empty)}: tier {chosen!r} lists no scenario, nothing to run"
        plan.notice = f"{plan.notice}; {note}" if plan.notice else note
    if not plan.jobs and not empty:
        what = " with --categories/--scenarios" if plan.targeted else ""
        raise ConfigError(f"tier {chosen!r} has no job{what} in the tiers file", path=str(tiers.path))
    if tiers.controls_lane is not None and not plan.targeted:
        lane_job = controls_job(tiers.controls_lane, chosen)
        if lane_job is not None:
            plan.jobs.append(lane_job)
    return plan


def _names_empty_tier(tiers: Tiers, job: CiJob) -> bool:
    """The job runs ``--tier NAME`` of a scenario tier that lists nothing (an empty backlog): nothing to run."""
    args = list(job.args)
    if "--tier" not in args or args.index("--tier") + 1 >= len(args):
        return False
    tier = tiers.tiers.get(args[args.index("--tier") + 1])
    return tier is not None and not tier.scenarios


def controls_job(lane: ControlsLane, tier: str) -> PlannedJob | None:
    """The judge calibration job when the lane is due (see the module docstring), else None."""
    from pathlib import Path

    from assay.evals.agent import controls_due, default_controls_dir, load_controls

    controls = load_controls(default_controls_dir())
    records = Path(lane.records) if lane.records else Path("results")
    due: list[str] = []
    reasons: list[str] = []
    for model in lane.judge_models:
        check = controls_due(records, model, controls)
        if check.due:
            due.append(model)
            reasons.append(f"{model}: " + "; ".join(check.reasons))
    if not due:
        return None
    results = f"{RESULTS_ROOT}/lanes/{CONTROLS_JOB}"
    argv = ["assay", "eval", "agent", "controls"]
    for model in due:
        argv += ["--judge-model", model]
    argv += ["--repeats", str(lane.repeats), "--results-dir", results]
    reason = "judge calibration due (" + " | ".join(reasons) + ")"
    return PlannedJob(CONTROLS_JOB, "agent", tier, argv, "", results, None, reason)


def _planned(job: CiJob, extra: list[str]) -> PlannedJob:
    results = f"{RESULTS_ROOT}/{job.tier}/{job.name}"
    junit = f"{RESULTS_ROOT}/junit/{job.tier}-{job.name}.xml"
    argv = ["assay", "eval", job.benchmark, *job.args, *extra, "--results-dir", results, "--junit", junit]
    if job.baseline:
        argv += ["--compare", job.baseline]
    return PlannedJob(job.name, job.benchmark, job.tier, argv, junit, results, job.baseline, job.reason)
