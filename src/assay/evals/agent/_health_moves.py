"""Move suggestions for the agent scenarios' CI tiers (``ci_tiers.json``), from a health report's flags.

Printed and saved, never applied: a person edits the tiers file. One suggestion per scenario, the first rule
that applies:

* **inverted** → stays where it is: check its grading (a weaker model passes it more often);
* **always-fail** on the strongest, in a tier that runs → ``backlog``, with the reason to write there;
* **saturated** on two or more models, in a tier that runs → ``backlog`` or harden it: it separates
  nothing (one model passing every attempt says nothing about separating models: no move);
* **flaky** in ``smoke`` → out of smoke (``full``): smoke is for stable scenarios;
* in ``backlog``, and the strongest model passes it on every attempt (two or more) without it being
  saturated → back to ``full``.

The tiers file is ``--tiers FILE``, else the one next to the scenarios folder the runs recorded
(``meta.json`` options), else the one next to the default scenarios folder. Only the agent benchmark has
CI tiers; for any other there are no suggestions, and the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.evals.agent.scenario_load import default_scenarios_dir
from assay.evals.agent.tiers import Tiers, load_tiers, tiers_path
from assay.gate import CaseHealth, LoadedRun, MoveAdvice, MoveSuggestion

TIERED_BENCHMARK = "agent"
SMOKE, FULL, BACKLOG, EXCLUDED = "smoke", "full", "backlog", "excluded"


def _recorded_scenarios_dir(run: LoadedRun) -> str | None:
    recorded: dict[str, Any] = run.meta.options if run.meta is not None else {}
    bench = recorded.get("benchmark")
    value = bench.get("scenarios_dir") if isinstance(bench, dict) else None
    return str(value) if value else None


def find_tiers(runs: Sequence[LoadedRun], tiers_file: Path | str | None) -> tuple[Tiers | None, str | None]:
    """The tiers file the runs' scenarios belong to, or None with the line saying why there is none."""
    benchmark = runs[0].scorecard.benchmark
    if benchmark != TIERED_BENCHMARK:
        if tiers_file is not None:
            raise ConfigError(
                f"--tiers: CI tiers are the agent scenarios'; these runs are of the {benchmark!r} benchmark",
                path=str(tiers_file),
            )
        return None, f"no move suggestions: the {benchmark!r} benchmark has no CI tiers file"
    if tiers_file is not None:
        if not Path(tiers_file).is_file():
            raise ConfigError("--tiers: no such tiers file", path=str(tiers_file))
        return load_tiers(Path(tiers_file)), None
    recorded = {d: r for r in runs if (d := _recorded_scenarios_dir(r)) is not None}
    if len(recorded) > 1:
        listed = ", ".join(f"{d} ({r.path})" for d, r in recorded.items())
        raise ConfigError(f"the runs used different scenarios folders ({listed}): name one with --tiers FILE")
    scenarios_dir = Path(next(iter(recorded))) if recorded else default_scenarios_dir()
    path = tiers_path(scenarios_dir)
    if not path.is_file():
        return None, f"no move suggestions: no tiers file at {path} (name one with --tiers FILE)"
    return load_tiers(path), None


def _evidence(case: CaseHealth, models: Sequence[str]) -> dict[str, str]:
    return {m: f"{case.by_model[m].passed}/{case.by_model[m].measured}" for m in models}


def suggest_moves(cases: Sequence[CaseHealth], models: Sequence[str], tiers: Tiers) -> list[MoveSuggestion]:
    """One suggestion per scenario that needs one (the rules in the module docstring); ``models[0]`` is
    the strongest."""
    strongest = models[0]
    out = []
    for case in cases:
        listed = [t.name for t in tiers.tiers.values() if case.case_id in t.scenarios]
        if case.case_id in tiers.excluded:
            listed = [EXCLUDED]
        if not listed:
            continue  # in no tier: coverage, not health (`assay eval agent --tier` names it)
        top = case.by_model[strongest]
        runs_in_ci = any(t not in (BACKLOG, EXCLUDED) for t in listed)
        flag, target, action, reason = "", None, "", None
        if "inverted" in case.flags:
            flag, action = "inverted", "check its grading: a weaker model passes it more often"
        elif "always-fail" in case.flags and runs_in_ci:
            flag, target = "always-fail", BACKLOG
            reason = f"fails every attempt of the strongest model ({strongest} {top.passed}/{top.measured})"
            action = "move to backlog, with the reason, until it is fixed or a model can pass it"
        elif "saturated" in case.flags and runs_in_ci and len(models) >= 2:
            flag, target = "saturated", BACKLOG
            action = "move to backlog or harden it: every model passes every attempt"
        elif "flaky" in case.flags and SMOKE in listed:
            flag, target = "flaky", FULL
            action = "take it out of smoke, which must be stable: it both passed and failed"
        elif BACKLOG in listed and "saturated" not in case.flags and top.passed == top.measured >= 2:
            flag, target = "stable-pass", FULL
            action = "back to full: the strongest model now passes every attempt"
        if flag:
            out.append(
                MoveSuggestion(
                    scenario=case.case_id,
                    flag=flag,
                    tiers=listed,
                    target=target,
                    action=action,
                    reason=reason,
                    evidence=_evidence(case, models),
                )
            )
    return out


class TierMoves:
    """The agent benchmark's :class:`~assay.gate.MoveAdvisor`: ``ci_tiers.json`` next to the scenarios."""

    def advise(
        self,
        runs: Sequence[LoadedRun],
        cases: Sequence[CaseHealth],
        models: Sequence[str],
        tiers_file: Path | str | None,
    ) -> MoveAdvice:
        tiers, note = find_tiers(runs, tiers_file)
        if tiers is None:
            return MoveAdvice(None, [], note)
        return MoveAdvice(str(tiers.path), suggest_moves(cases, models, tiers), None)

    def backlog(self, runs: Sequence[LoadedRun]) -> list[str] | None:
        tiers, _ = find_tiers(runs, None)
        tier = tiers.tiers.get(BACKLOG) if tiers is not None else None
        return list(tier.scenarios) if tier is not None else None
