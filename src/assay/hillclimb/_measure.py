"""Measuring a split (one eval run, resumed where it was left) and deciding on an edit with the gate.

The decision is the gate's: :func:`assay.gate.compare` of the split before and after the edit, with the noise
file when there is one. An edit is kept only when the train comparison has an ``improved`` case and no
regression, and the held-out comparison has no regression; anything else reverts it, with the reason.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, InfraError
from assay.exec import RunOptions
from assay.hillclimb._history import SplitScore, Verdict
from assay.hillclimb._target import Target
from assay.runs import Scorecard

__all__ = ["Outage", "decide", "measure", "score_of"]


class Outage(InfraError):
    """A measurement stopped on a backend outage; the loop resumes from where it is."""


def score_of(run_dir: Path, card: Scorecard) -> SplitScore:
    s = card.summary
    judged = s.metrics.get("judged_score")
    roles = (card.extra.get("agent") or {}).get("roles") or {}
    cost = {
        role: {k: row.get(k) for k in ("calls", "input_tokens", "output_tokens", "cost_usd")}
        for role, row in roles.items()
    }
    return SplitScore(
        run_dir=str(run_dir),
        cases=len(card.cases),
        measured=s.measured,
        passed=sum(c.passed for c in card.cases),
        pass_rate=s.pass_rate,
        low=s.pass_rate_low,
        high=s.pass_rate_high,
        judged_score=judged.value if judged else None,
        judged_low=judged.low if judged else None,
        judged_high=judged.high if judged else None,
        failing=sorted(c.case_id for c in card.cases if c.measured and c.passed < c.measured),
        cost=cost,
    )


async def measure(
    target: Target,
    case_ids: list[str],
    profile: Path,
    out: Path,
    iterations: int,
    *,
    progress: bool = False,
    command_line: list[str] | None = None,
) -> SplitScore:
    """Run ``case_ids`` into ``out`` (or finish the run already there) and score it."""
    from assay.evals import get_benchmark
    from assay.exec import arun_benchmark

    resume = (out / "meta.json").is_file()
    opts = RunOptions(
        suite=target.suite,
        iterations=iterations,
        max_concurrency=target.max_concurrency,
        out=None if resume else out,
        resume=out if resume else None,
        progress=progress,
        command_line=list(command_line or sys.argv),
    )
    options: dict[str, Any] | None = None if resume else target.run_options(case_ids, profile)
    result = await arun_benchmark(None if resume else get_benchmark(target.benchmark), options, opts)
    if result.stopped_reason:
        if result.exit_code == 3:
            raise Outage(f"{out}: {result.stopped_reason}")
        raise ConfigError(f"the measurement in {out} stopped: {result.stopped_reason}")
    return score_of(result.run_dir, result.scorecard)


def _verdict(before: str, after: str, noise: Path | None) -> Verdict:
    from assay.gate import compare

    comp = compare(Path(before), Path(after), noise=noise)
    return Verdict(
        comparable=comp.comparable,
        verdict=comp.verdict,
        improved=[c.case_id for c in comp.bucket("improved")],
        regressed=list(comp.regressions),
        not_comparable=list(comp.not_comparable),
    )


def decide(
    train: tuple[SplitScore, SplitScore], heldout: tuple[SplitScore, SplitScore], noise: Path | None
) -> tuple[bool, str, Verdict, Verdict]:
    """Keep the edit or not, why, and the two comparisons it was decided on."""
    tv = _verdict(train[0].run_dir, train[1].run_dir, noise)
    hv = _verdict(heldout[0].run_dir, heldout[1].run_dir, noise)
    if not tv.comparable or not hv.comparable:
        why = "; ".join(tv.not_comparable + hv.not_comparable)
        return False, f"the runs before and after cannot be compared: {why}", tv, hv
    if tv.regressed:
        return False, f"train regressed: {', '.join(tv.regressed)}", tv, hv
    if not tv.improved:
        floor = (
            "the noise floor" if noise is not None else "chance (no noise file: stable-fail -> stable-pass)"
        )
        return False, f"train did not improve beyond {floor}", tv, hv
    if hv.regressed:
        why = f"held-out regressed ({', '.join(hv.regressed)}) while train improved ({len(tv.improved)})"
        return False, why, tv, hv
    return True, f"train improved ({len(tv.improved)} scenario(s)) and held-out did not regress", tv, hv
