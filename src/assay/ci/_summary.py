"""The job summary of one eval (markdown for ``$GITHUB_STEP_SUMMARY``) and the re-run of what measured nothing.

The exit code is the :class:`~assay.gate.Verdict`'s (``gate.hold`` decides it once): with CI outputs asked
for, a case that errored before the model spent a token (ERROR or INFRA_ERROR with no model call recorded)
or that an outage left NOT_RUN measured nothing and fails the run whatever ``--enforce`` says, since a green
job over it would hide that. :func:`rerun_command` prints the dispatch that re-runs exactly those cases.

The summary reads verdict first, then the flipped cases (against the baseline, when compared), then cost.
Every line fits ``width`` characters, cut with an ellipsis; a flipped case's row cuts only its reason
(its case id and both sides stay whole).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from assay.gate import Verdict, unspent_cases
from assay.runs import RunMeta, Scorecard

__all__ = ["job_summary", "rerun_command", "unspent_cases"]

#: the workflow file `assay ci init github` writes for targeted runs
DISPATCH_WORKFLOW = "assay-dispatch.yml"
#: options of ``assay eval`` a re-run leaves out (they name this run's outputs)
_OWN_OUTPUTS = ("--out", "--results-dir", "--junit", "--summary", "--resume", "--save-baseline")


def rerun_command(meta: RunMeta, case_ids: list[str], has_case_filter: bool) -> str:
    """What re-runs exactly ``case_ids``: the dispatch workflow in CI (``$ASSAY_CI_TIER`` set), else the
    recorded ``assay eval`` line with the benchmark's ``--scenario`` filter (or the whole suite without one)."""
    ids = ",".join(case_ids)
    tier = os.environ.get("ASSAY_CI_TIER")
    if tier and has_case_filter:
        return f"gh workflow run {DISPATCH_WORKFLOW} -f tier={tier} -f scenarios={ids}"
    argv, skip = [], False
    for arg in meta.command_line:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in _OWN_OUTPUTS or name in ("--scenario", "--category", "--tier"):
            skip = "=" not in arg
            continue
        argv.append(arg)
    if not has_case_filter:
        return shlex.join(argv) + f"  # {meta.benchmark} has no case filter: this re-runs its whole suite"
    return shlex.join([*argv, "--scenario", ids])


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _verdict_line(card: Scorecard, verdict: Verdict) -> str:
    code = verdict.exit_code
    state = "PASS" if code == 0 else ("NOT COMPARABLE" if code == 3 else "FAIL")
    comp = verdict.comparison
    if verdict.unspent:
        why = f"{len(verdict.unspent)} case(s) measured nothing"
    elif comp is not None and not comp.comparable:
        why = "not comparable: " + "; ".join(comp.not_comparable)
    elif comp is not None:
        why = comp.verdict
    else:
        s = card.summary
        rate = "n/a" if s.pass_rate is None else f"{100 * s.pass_rate:.1f}%"
        why = f"pass rate {rate} of {s.measured} measured"
    return f"**{state}** (exit {code}) · {why}"


def job_summary(
    card: Scorecard,
    verdict: Verdict,
    *,
    rerun: str | None = None,
    targeted: bool = False,
    width: int = 100,
) -> str:
    """The markdown job summary of one eval: verdict, flipped cases, cost; each line at most ``width``.

    ``rerun`` is the command that re-runs the cases that measured nothing (:func:`rerun_command`).
    """
    tool = card.config.extra.get("imported_from")  # `assay import`: no eval ran it
    head = f"assay import {tool}" if tool else f"assay eval {card.benchmark}"
    title = f"### {head} · {card.suite}" + (" · targeted run" if targeted else "")
    lines = [_cut(title, width), "", _cut(_verdict_line(card, verdict), width), ""]
    if verdict.unspent:
        lines.append(_cut("Measured nothing: " + ", ".join(verdict.unspent), width))
        lines.append("Re-run exactly those cases:")
        lines += ["", "```", rerun or "", "```", ""]
    counts = " · ".join(f"{s} {n}" for s, n in card.summary.counts.items() if n)
    lines += [_cut(f"Attempts: {card.summary.total} ({counts})", width), ""]
    comp = verdict.comparison
    flipped = [c for c in (comp.cases if comp is not None else []) if c.flipped]
    if flipped:
        lines += ["#### Flipped cases", "", "| case | baseline | current | why |", "|---|---|---|---|"]
        for c in flipped:
            base = c.baseline.short() if c.baseline else "-"
            cur = c.current.short() if c.current else "-"
            head = f"| {c.case_id} | {base} | {cur} | "
            lines.append(head + _cut(c.reason or c.bucket, max(width - len(head) - 2, 8)) + " |")
        lines.append("")
    lines += ["#### Cost", ""]
    u = card.cost
    cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f} ({u.cost_source or 'source unknown'})"
    lines.append(
        _cut(
            f"{u.input_tokens} tokens in · {u.output_tokens} out · {u.calls} model calls · cost {cost}", width
        )
    )
    return "\n".join(lines) + "\n"


def append_summary(path: Path, text: str) -> None:
    """Append to the step summary file (GitHub Actions adds every step's text to the job page)."""
    from assay._util import Scrubber

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(Scrubber().scrub_text(text))
