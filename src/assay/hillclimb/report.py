"""``report.md`` of a hillclimb: the held-out gain next to the train gain, every round, the rollup."""

from __future__ import annotations

from pathlib import Path

from assay.hillclimb._history import FixHistory, SplitScore

__all__ = ["render_report", "write_report"]


def _cost(row: dict) -> str:
    usd = row.get("cost_usd")
    money = "cost unknown" if usd is None else f"${usd:.4f}"
    return f"{row.get('calls', 0)} calls, {row.get('input_tokens', 0)}+{row.get('output_tokens', 0)} tokens, {money}"


def _s(score: SplitScore | None) -> str:
    return "-" if score is None else score.short()


def _gain(x: float | None) -> str:
    return "-" if x is None else f"{x:+.2f}"


def render_report(h: FixHistory) -> str:
    lines = [
        f"# hillclimb: {h.benchmark} {h.suite}" + (f" ({h.category})" if h.category else ""),
        "",
        f"- fixer: {h.fixer}" + (f" on {h.fixer_model}" if h.fixer_model else ""),
        f"- profile: {h.profile} (branch {h.branch}, from {h.base_commit[:12]})",
        f"- split: salt {h.split.salt!r}, train {len(h.split.train)}, held-out {len(h.split.heldout)}; "
        f"{h.iterations} iterations each",
        f"- noise floor: {h.noise or 'none (a change counts only as stable-fail -> stable-pass)'}",
        f"- stopped: {h.stop_reason or h.status}; {h.elapsed_s:.0f} s",
        "",
        "## Gain",
        "",
        "| split | baseline | final | gain |",
        "|---|---|---|---|",
    ]
    if h.baseline_train is not None and h.baseline_heldout is not None:
        train, held = h.current()
        lines.append(f"| train | {_s(h.baseline_train)} | {_s(train)} | {_gain(h.train_gain)} |")
        lines.append(f"| held-out | {_s(h.baseline_heldout)} | {_s(held)} | {_gain(h.heldout_gain)} |")
    lines.append("")
    if h.overfitting:
        lines += [f"**OVERFITTING**: {h.overfitting_note}.", ""]
    lines += [
        "## Rounds",
        "",
        "| round | outcome | train before -> after | held-out before -> after | why |",
        "|---|---|---|---|---|",
    ]
    for r in h.rounds:
        lines.append(
            f"| {r.round} | {r.outcome or r.phase} | {_s(r.train_before)} -> {_s(r.train_after)} | "
            f"{_s(r.heldout_before)} -> {_s(r.heldout_after)} | {r.reason.replace('|', '/')} |"
        )
    for r in h.rounds:
        if r.diff:
            lines += ["", f"### Round {r.round} edit ({r.outcome})", "", "```diff", r.diff.rstrip(), "```"]
    lines += ["", "## Remaining failures by category and failing dimension", ""]
    if not h.rollup:
        lines.append("None: every measured scenario passed.")
    for cat, dims in h.rollup.items():
        lines.append(f"- **{cat}**")
        lines += [f"  - {dim}: {len(ids)} ({', '.join(ids)})" for dim, ids in dims.items()]
    lines += ["", "## Cost", ""]
    lines += [f"- {role}: {_cost(row)}" for role, row in h.cost_total.items()]
    return "\n".join(lines) + "\n"


def write_report(h: FixHistory, out: Path) -> Path:
    from assay.runs.rundir import write_artifact

    return write_artifact(out / "report.md", render_report(h))
