"""The agent benchmark's report: pass rate and judged score first, failing scenarios with the judge's reasons,
per-category and per-role cost tables, judge overrules and code/judge disagreements, scenarios by source.

What the section shows is folded from the attempts into ``scorecard.extra["agent"]`` (:func:`agent_summary`),
so a report rendered again from ``scorecard.json`` alone says the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assay.evals.agent._scenario import Scenario
from assay.models.weak import is_weak_model
from assay.report.failure_reasons import md_text
from assay.runs import Attempt, Scorecard, Status

if TYPE_CHECKING:
    from assay.report import Plot

__all__ = [
    "REAL_SOURCE_AIM",
    "SOURCE_KINDS",
    "agent_summary",
    "count_sources",
    "failure_reason",
    "is_weak_model",
    "render_section",
    "score_plot",
]

ROLES = ("simulator", "agent", "judge")
#: statuses listed among the failing scenarios, in this order
_FAILING = (Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.INFRA_ERROR)
_NOTHING_SPENT = (Status.SKIPPED, Status.NOT_RUN)
#: a scenario's ``source.kind``, and ``none`` for a scenario without a source
SOURCE_KINDS = ("session", "issue", "hand", "synthetic", "none")
#: the share of scenarios that should come from real use (sessions or issues)
REAL_SOURCE_AIM = 0.2


def _source_kind(scenario: Scenario | None) -> str:
    return "none" if scenario is None or scenario.source is None else scenario.source.kind


def count_sources(scenarios: Sequence[Scenario | None]) -> dict[str, Any]:
    """Scenarios by ``source.kind`` (every kind, zeros too) and the share from sessions or issues vs the aim."""
    counts = dict.fromkeys(SOURCE_KINDS, 0)
    for s in scenarios:
        counts[_source_kind(s)] += 1
    real, total = counts["session"] + counts["issue"], len(scenarios)
    share = real / total if total else None
    return {
        "counts": counts,
        "from_real_use": real,
        "total": total,
        "share": share,
        "aim": REAL_SOURCE_AIM,
        "meets_aim": share is not None and share >= REAL_SOURCE_AIM,
    }


def _went_wrong(details: Mapping[str, Any], turn: int | None) -> str:
    answer = (details.get("judgement") or {}).get("answer") or {}
    for t in answer.get("turns") or []:
        if (turn is None or t.get("turn") == turn) and t.get("went_wrong"):
            return str(t["went_wrong"])
    return ""


def failure_reason(attempt: Attempt) -> str | None:
    """Why a scenario did not pass, from its record: the turn that went wrong, the reason, the judge's note."""
    d = attempt.details
    if "scenario" not in d or not (d.get("reason") or d.get("failed_turn")):
        return None
    turn = d.get("failed_turn")
    reason = str(d.get("reason") or "")
    parts = [f"turn {turn}" if turn and not reason.startswith(f"turn {turn}") else "", reason]
    note = _went_wrong(d, turn)
    if note and note not in parts[1]:
        parts.append(f"judge: {note}")
    return ": ".join(p for p in parts if p)


def _role_costs(attempts: Sequence[Attempt], specs: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    out = {
        role: {"model": spec, "input_tokens": 0, "output_tokens": 0, "calls": 0, "cost_usd": None,
               "cost_sources": [], "missing": []}
        for role, spec in ((r, specs.get(r, "")) for r in ROLES)
    }  # fmt: skip
    for a in attempts:
        if a.status in _NOTHING_SPENT:
            continue
        cost = a.details.get("cost")
        for role, row in out.items():
            entry = (cost or {}).get(role)
            if (
                cost is None
                or a.details.get("spend_missing")
                or (entry is not None and not entry.get("complete", True))
            ):
                row["missing"].append(a.case_id)
            if entry is None:
                continue
            usage = entry.get("usage") or {}
            row["input_tokens"] += int(usage.get("input_tokens") or 0)
            row["output_tokens"] += int(usage.get("output_tokens") or 0)
            row["calls"] += int(entry.get("calls") or 0)
            if usage.get("cost_usd") is not None:
                row["cost_usd"] = (row["cost_usd"] or 0.0) + float(usage["cost_usd"])
            source = usage.get("cost_source")
            if source and source not in row["cost_sources"]:
                row["cost_sources"].append(source)
    for row in out.values():
        row["missing"] = sorted(set(row["missing"]))
    return out


def agent_summary(
    attempts: Sequence[Attempt], scenarios: Mapping[str, Scenario], specs: Mapping[str, str]
) -> dict[str, Any]:
    """What the report section shows, folded from the latest attempt of each case and iteration.

    ``specs`` names each role's model (``simulator``, ``agent``, ``judge``)."""
    ordered = sorted(attempts, key=lambda a: (a.case_id, a.iteration))
    failing = []
    for a in sorted(
        ordered, key=lambda a: (_FAILING.index(a.status) if a.status in _FAILING else 9, a.case_id)
    ):
        if a.status not in _FAILING:
            continue
        d = a.details
        failing.append(
            {
                "scenario": a.case_id,
                "iteration": a.iteration,
                "category": a.category,
                "status": a.status.value,
                "failed_turn": d.get("failed_turn"),
                "reason": failure_reason(a)
                or (f"{a.error.type}: {a.error.message}" if a.error else a.status.value),
            }
        )
    judged = [a for a in ordered if a.details.get("judged")]
    not_measured = {
        a.case_id: [str(n.get("detail", "")) for n in a.details.get("not_measured") or []]
        for a in ordered
        if a.details.get("not_measured")
    }
    overruled = [a.case_id for a in judged if (a.details.get("judgement") or {}).get("overruled")]
    disagreements = {
        a.case_id: list((a.details.get("judgement") or {}).get("disagreements") or [])
        for a in judged
        if (a.details.get("judgement") or {}).get("disagreements")
    }
    ran = [scenarios.get(cid) for cid in dict.fromkeys(a.case_id for a in ordered)]
    by_source = {k: n for k, n in count_sources(ran).get("counts", {}).items() if n}
    return {
        "roles": _role_costs(ordered, specs),
        "failing": failing,
        "judged": len(judged),
        "overruled": overruled,
        "disagreements": disagreements,
        "not_measured": not_measured,
        "by_source": dict(sorted(by_source.items())),
        "weak_models": {r: specs[r] for r in ROLES if is_weak_model(specs.get(r))},
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _category_rows(card: Scorecard) -> list[str]:
    rows: dict[str, list[Any]] = {}
    for c in card.cases:
        row = rows.setdefault(c.category, [0, 0, 0, []])
        row[0] += 1
        row[1] += c.passed
        row[2] += c.measured
        if "judged_score" in c.metrics:
            row[3].append(c.metrics["judged_score"])
    out = ["| category | scenarios | pass rate | judged score |", "|---|---|---|---|"]
    for cat, (n, passed, measured, scores) in sorted(rows.items()):
        rate = _pct(passed / measured) if measured else "-"
        score = f"{sum(scores) / len(scores):.2f}" if scores else "-"
        out.append(f"| {cat} | {n} | {rate} | {score} |")
    return out


def _cost_rows(roles: Mapping[str, Mapping[str, Any]]) -> list[str]:
    out = [
        "| role | model | tokens in | tokens out | calls | cost | scenarios missing spend |",
        "|---|---|---|---|---|---|---|",
    ]
    for role, r in roles.items():
        cost = "unknown" if r["cost_usd"] is None else f"${r['cost_usd']:.4f}"
        if r["cost_sources"]:
            cost += f" ({', '.join(r['cost_sources'])})"
        missing = f"{len(r['missing'])}: {', '.join(r['missing'][:5])}" if r["missing"] else "0"
        out.append(
            f"| {role} | {r['model']} | {r['input_tokens']} | {r['output_tokens']} | {r['calls']} | {cost} | {missing} |"
        )
    return out


def render_section(card: Scorecard) -> str:
    """The markdown section of ``report.md`` (from the scorecard alone)."""
    info: Mapping[str, Any] = card.extra.get("agent") or {}
    s = card.summary
    lines = ["## Agent scenarios", ""]
    sel = card.extra.get("selection")
    if isinstance(sel, dict):
        by = ", ".join(
            f"--{k} {v if isinstance(v, str) else ','.join(v)}" for k, v in (sel.get("by") or {}).items()
        )
        lines += [
            f"**Targeted run**: {len(sel.get('selected') or [])} of {sel.get('of')} scenarios, selected by {by}; "
            "a comparison judges only these and lists the rest as not run.",
            "",
        ]
    judged = s.metrics.get("judged_score")
    score = "-" if judged is None or judged.value is None else f"{judged.value:.2f}"
    lines.append(
        f"**Pass rate {_pct(s.pass_rate)}** of {s.measured} measured scenario attempt(s) · "
        f"**mean judged score {score}** · {info.get('judged', 0)} judged"
    )
    lines += _calibration_lines(card.extra.get("judge_calibration") or {})
    own = card.config.extra.get("self_judged") or []
    if own:
        lines += [
            "",
            f"**Self-judged** (--allow-self-judge): the {' and the '.join(own)} ran the agent's own model "
            f"`{card.config.model}`, so the agent was graded by itself.",
        ]
    failing = info.get("failing") or []
    lines += ["", "### Failing scenarios", ""]
    if failing:
        lines += ["| scenario | category | status | turn | why |", "|---|---|---|---|---|"]
        for f in failing:
            name = f["scenario"] + (f" (#{f['iteration']})" if card.iterations > 1 else "")
            turn = f["failed_turn"] or "-"
            why = md_text(str(f["reason"]), 300).replace("|", "\\|")
            lines.append(f"| {name} | {f['category']} | {f['status']} | {turn} | {why} |")
    else:
        lines.append("None.")
    lines += ["", "### By category", "", *_category_rows(card)]
    if info.get("roles"):
        lines += ["", "### Cost per role", "", *_cost_rows(info["roles"])]
    overruled, disagreements = info.get("overruled") or [], info.get("disagreements") or {}
    lines += [
        "",
        "### Judge and code",
        "",
        f"- judge overruled (its verdict differed from the one re-derived from its scores and the checks): "
        f"{len(overruled)} of {info.get('judged', 0)}"
        + (f" ({', '.join(overruled[:10])})" if overruled else ""),
        f"- code/judge disagreements: {sum(len(v) for v in disagreements.values())} in {len(disagreements)} scenario(s)",
    ]
    for cid, items in list(disagreements.items())[:10]:
        lines.append(f"  - {cid}: {md_text('; '.join(items), 300)}")
    unknown = info.get("not_measured") or {}
    if unknown:
        lines.append(
            f"- tool checks not measured (the record holds answers only; the verdict rests on the other checks "
            f"and the judge): {sum(len(v) for v in unknown.values())} in {len(unknown)} scenario(s)"
        )
        for cid, items in list(unknown.items())[:10]:
            lines.append(f"  - {cid}: {md_text('; '.join(items), 300)}")
    lines += _source_lines(card.extra.get("sources"), info.get("by_source") or {})
    return "\n".join(lines)


def _source_lines(sources: Mapping[str, Any] | None, ran: Mapping[str, int]) -> list[str]:
    """Scenarios by source: the suite's (every kind) and this run's, and the share from real use vs the aim."""
    if not sources and not ran:
        return []
    counts: Mapping[str, int] = (sources or {}).get("counts") or {}
    lines = ["", "### Scenarios by source", "", "| source | in the suite | in this run |", "|---|---|---|"]
    for kind in SOURCE_KINDS:
        if counts.get(kind) or ran.get(kind) or sources:
            lines.append(f"| {kind} | {counts.get(kind, '-') if sources else '-'} | {ran.get(kind, 0)} |")
    if sources and sources.get("total"):
        share, aim = sources["share"], sources["aim"]
        verdict = "meets the aim" if sources["meets_aim"] else "below the aim"
        lines += [
            "",
            f"From real use (sessions or issues): {sources['from_real_use']} of {sources['total']} "
            f"({_pct(share)}); the aim is at least {_pct(aim)}: {verdict}.",
        ]
    return lines


def score_plot(card: Scorecard) -> Plot | None:
    """Mean judged score per category (the per-category pass rate is the shared plot)."""
    per: dict[str, list[float]] = {}
    for c in card.cases:
        if "judged_score" in c.metrics:
            per.setdefault(c.category, []).append(c.metrics["judged_score"])
    if len(per) < 2:
        return None
    from assay.report.plotting import finish, subplots

    names = sorted(per)
    means = [sum(per[n]) / len(per[n]) for n in names]
    fig, ax = subplots(size=(max(5.0, 0.7 * len(names) + 2), 3.4))
    ax.bar(names, means, color="#55a868")
    for i, n in enumerate(names):
        ax.annotate(f"n={len(per[n])}", (i, 0.02), ha="center", fontsize=7, color="w")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean judged score")
    ax.tick_params(axis="x", labelrotation=30)
    title = "judged score by category"
    ax.set_title(title, fontsize=9)
    return finish(fig, "agent_judged_score_by_category.png", title)


def _calibration_lines(cal: dict[str, Any]) -> list[str]:
    """Whether the judge's verdicts come from a judge that passed its controls on this rubric."""
    status, judge, rubric = cal.get("status"), cal.get("judge_model"), cal.get("rubric_version")
    if status in (None, "scripted"):
        return []
    if status == "passed":
        kappa, n = cal.get("kappa"), cal.get("judge_decided")
        over = f", kappa {kappa:.2f}" if kappa is not None else ""
        over += f" over the {n} controls it decides" if n else ""
        return [
            "",
            f"Judge `{judge}` passed its controls on rubric {rubric} (agreement {cal['agreement']:.2f}{over}).",
        ]
    why = (
        f"it failed its controls on rubric {rubric} ({'; '.join(cal.get('below') or [])})"
        if status == "failed"
        else f"no current controls record for it: {cal.get('why') or 'none found'}"
    )
    return [
        "",
        f"> **Uncalibrated judge**: `{judge}`: {why}. Its verdicts are unchecked opinions; run "
        f"`assay eval agent controls --judge-model {judge}` before trusting them.",
    ]
