"""``assay eval agent promote``: a finished draft becomes a scenario of the suite, if it still tells models apart.

Refused, naming what is missing: a ``TODO`` left on any line (comments aside), no ``difficulty_rationale`` or
``source``, a turn graded by neither ``success_criteria`` nor ``ground_truth``, no category the suite covers
(``--category``), a scenario already at the target. Then the two runs named (``--strong``, ``--weak``: runs of
``assay eval agent`` that include the draft, e.g. ``--scenario DRAFT_ID``) are read by the health rule
(:func:`assay.gate.health`): a draft flagged **saturated** (every attempt passed on both models: it separates
nothing), **always-fail** (the strong model never passed: broken or out of reach), or not measured on them is
refused. A promoted draft moves to ``<scenarios>/<category>/<id>.yaml`` with ``draft: false``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError
from assay.evals.agent._scenario import CATEGORIES, Scenario
from assay.evals.agent.draft import TODO
from assay.evals.agent.scenario_load import DRAFTS_DIR, ScenarioWarning, load_scenario

__all__ = ["BASELINE_COMMAND", "Promoted", "draft_problems", "promote"]

#: how the pr baseline is regenerated (README, tests/integration/evals/agent/test_agent_baseline.py)
BASELINE_COMMAND = (
    "rm -rf tests/fixtures/baselines/agent-pr && assay eval agent --suite pr --iterations 3 "
    "--results-dir /tmp/agent-baseline --save-baseline tests/fixtures/baselines/agent-pr"
)
#: health flags that refuse a draft (``flaky`` and ``inverted`` are reported, not refused)
_REFUSED = {
    "saturated": "saturated: every attempt passed on both models, so it separates nothing",
    "always-fail": "impossible: the strong model never passed it (broken, or out of reach)",
    "skipped": "not measured on the runs: every attempt was skipped (pr needs a script:; run --suite full)",
    "not-measured": "not measured on the runs (no attempt finished)",
}


@dataclass
class Promoted:
    scenario_id: str
    category: str
    source: Path
    target: Path
    flags: list[str]
    next_steps: list[str] = field(default_factory=list)


def _root(path: Path) -> Path:
    root = path.parent.parent
    return root.parent if root.name == DRAFTS_DIR else root


def draft_problems(scenario: Scenario, text: str, category: str | None) -> list[str]:
    """What keeps a draft from being a scenario of the suite (empty: it is complete)."""
    problems = []
    todo = [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), 1)
        if TODO in line and not line.lstrip().startswith("#")
    ]
    for n, line in todo[:10]:
        problems.append(f"line {n}: {TODO} left: {line[:100]}")
    if len(todo) > 10:
        problems.append(f"... and {len(todo) - 10} more {TODO} line(s)")
    if not (scenario.difficulty_rationale or "").strip():
        problems.append("no difficulty_rationale: say why the scenario is hard, and for which models")
    if scenario.source is None:
        problems.append("no source: say where the scenario came from (kind: session|issue|hand|synthetic)")
    for i, turn in enumerate(scenario.turns, 1):
        if not (turn.success_criteria or "").strip() and "ground_truth" not in turn.model_fields_set:
            problems.append(f"turn {i}: neither success_criteria nor ground_truth")
    chosen = category or scenario.category
    if chosen not in CATEGORIES:
        problems.append(
            f"category {chosen!r} is not one the suite covers: give --category ({', '.join(CATEGORIES)})"
        )
    return problems


def _health_flags(scenario_id: str, strong: Sequence[Path], weak: Sequence[Path]) -> list[str]:
    from assay.gate import health

    if not strong or not weak:
        raise ConfigError(
            "promote needs a run of a stronger model (--strong RUN_DIR) and of a weaker one (--weak)"
        )
    report = health([], strong=list(strong), weak=list(weak))
    case = next((c for c in report.cases if c.case_id == scenario_id), None)
    if case is None:
        runs = ", ".join(str(p) for p in [*strong, *weak])
        raise ConfigError(
            f"{scenario_id} is in none of the runs ({runs}): run it on each model with "
            f"`assay eval agent --suite full --scenario {scenario_id} --model MODEL --iterations 2`"
        )
    for role, model in (("strong", report.strong), ("weak", report.weak)):
        measured = case.by_model[model].measured if model in case.by_model else 0
        if measured == 0 and not set(case.flags) & {"skipped", "not-measured"}:
            raise ConfigError(
                f"{scenario_id} has no measured attempt on the --{role} run(s) ({model}): health needs it "
                f"measured on both models"
            )
    return list(case.flags)


def _promoted_text(text: str, category: str) -> str:
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith("#"):  # the draft's header ("finish it ...")
        lines.pop(0)
    body = "".join(lines)
    body = re.sub(r"(?m)^category:.*$", f"category: {category}", body, count=1)
    if re.search(r"(?m)^draft:.*$", body):
        return re.sub(r"(?m)^draft:.*$", "draft: false", body, count=1)
    return body.rstrip("\n") + "\ndraft: false\n"


def promote(
    draft: Path,
    *,
    strong: Sequence[Path],
    weak: Sequence[Path],
    category: str | None = None,
    scenarios_dir: Path | None = None,
) -> Promoted:
    """Check ``draft`` and move it into ``<scenarios_dir>/<category>/`` (default: the draft's scenarios folder)."""
    draft = Path(draft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ScenarioWarning)
        scenario = load_scenario(draft)
    if not scenario.draft:
        raise ConfigError("not a draft (draft: true, or under drafts/): nothing to promote", path=str(draft))
    text = draft.read_text(encoding="utf-8")
    chosen = category or scenario.category
    root = Path(scenarios_dir) if scenarios_dir is not None else _root(draft)
    target = root / chosen / f"{scenario.id}.yaml"
    problems = draft_problems(scenario, text, category)
    if target.exists():
        problems.append(f"{target} exists: a scenario with this id is already in the suite")
    if problems:
        raise ConfigError("not promoted:\n  - " + "\n  - ".join(problems), path=str(draft))
    flags = _health_flags(scenario.id, strong, weak)
    refused = [_REFUSED[f] for f in flags if f in _REFUSED]
    if refused:
        raise ConfigError("not promoted: on the runs named it is " + "; ".join(refused), path=str(draft))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_promoted_text(text, chosen), encoding="utf-8")
    try:
        promoted = load_scenario(target, root=root)
        if promoted.draft:
            raise ConfigError("still a draft after promotion (draft: true)", path=str(target))
    except ConfigError:
        target.unlink(missing_ok=True)
        raise
    draft.unlink()
    steps = [
        f"add {scenario.id} to eval/ci_tiers.json: the full tier (and smoke if it is stable), or 'excluded' "
        "with why (tests/unit/evals/agent/test_ci_tiers.py checks every scenario is placed)",
        f"the suite changed, so the pr baseline must be regenerated: {BASELINE_COMMAND}",
    ]
    if promoted.script is None:
        steps.insert(
            1,
            "pr plays scenarios from a script: (agent replies per turn, the judge's answer); without one pr reports it SKIPPED",
        )
    return Promoted(scenario.id, chosen, draft, target, flags, steps)
