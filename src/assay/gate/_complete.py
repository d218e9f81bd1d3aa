"""Completeness: which cases a run left unmeasured, and the one ``--require-complete`` rule."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assay.errors import ExitCode
from assay.runs import Attempt, Scorecard, Status

#: statuses of an attempt that measured nothing when no model call was recorded for it
_ERRORED = frozenset({Status.ERROR, Status.INFRA_ERROR})


def unmeasured_cases(card: Scorecard) -> list[str]:
    """Cases without a measured attempt; a case skipped with a reason is its own outcome, not unmeasured."""
    return [c.case_id for c in card.cases if c.measured == 0 and c.stability != "skipped"]


def require_complete_code(missing: Sequence[str], require_complete: bool, *, unfinished: bool = False) -> int:
    """``--require-complete``: exit 2 when something the run should have measured was not (the cases or
    baseline items in ``missing``, or attempts left ``unfinished``); 0 otherwise or without the flag."""
    if require_complete and (missing or unfinished):
        return int(ExitCode.REGRESSION)
    return int(ExitCode.OK)


def _spent(att: Attempt) -> bool:
    u = att.usage
    return u is not None and (u.calls > 0 or u.input_tokens > 0 or u.output_tokens > 0)


def unspent_cases(attempts: Iterable[Attempt], stopped: bool) -> list[str]:
    """Cases that measured nothing: errored before any model call, or left NOT_RUN by an outage."""
    attempts = list(attempts)
    ids = {a.case_id for a in attempts if a.status in _ERRORED and not _spent(a)}
    if stopped:
        ids |= {a.case_id for a in attempts if a.status == Status.NOT_RUN}
    return sorted(ids)
