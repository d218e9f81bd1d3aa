"""Saving a controls run: ``controls.json`` (one record per judge model + rubric version + prompt digest) and
``report.md``, both scrubbed; and reading back a judge's latest calibration from a results folder."""

from __future__ import annotations

import json
from pathlib import Path

from assay.judge._controls import MIN_AGREEMENT, MIN_CONSISTENCY, ControlsRun, JudgeRecord
from assay.judge._rubric import DIMENSION_NAMES
from assay.models._server import EMBEDDED_MODEL_NAME
from assay.runs._scrub import Scrubber, write_scrubbed

__all__ = ["CONTROLS_JSON", "CONTROLS_MD", "latest_calibration", "render_controls_report", "save_controls_run"]

CONTROLS_JSON = "controls.json"
CONTROLS_MD = "report.md"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _tiny(model: str) -> bool:
    return model in (f"local/{EMBEDDED_MODEL_NAME}", "local/smollm2")


def _judge_section(r: JudgeRecord) -> list[str]:
    status = "passed" if r.passed else "FAILED"
    lines = [
        f"## {r.judge_model}: {status}",
        "",
        f"rubric {r.rubric_version} · judge prompt {r.judge_prompt_digest[:12]} · controls {r.controls_digest} · "
        f"{r.n_controls} controls × {r.repeats} repeats = {r.n_judgings} judgings · "
        f"{r.usage.input_tokens + r.usage.output_tokens} tokens · {r.elapsed_s:.1f} s",
        "",
    ]
    if not r.passed:
        lines += [
            f"**Not calibrated:** {'; '.join(r.below)}. Verdicts this judge gives on rubric {r.rubric_version} "
            "are not to be trusted.",
            "",
        ]
    if _tiny(r.judge_model):
        lines += [
            "The embedded SmolLM2-135M is a tiny model, far too weak to judge: it is expected to fail the "
            "controls and is useful only to check that the pipeline runs end to end offline.",
            "",
        ]
    lines += [
        "| measure | value |",
        "|---|---|",
        f"| agreement with labels | {_pct(r.agreement)} (need {MIN_AGREEMENT:.0%}) |",
        f"| PASS-agreement | {_pct(r.agreement_pass)} |",
        f"| FAIL-agreement | {_pct(r.agreement_fail)} |",
        f"| self-consistency | {_pct(r.self_consistency)} (need {MIN_CONSISTENCY:.0%}) |",
        f"| Cohen's kappa with labels | {_num(r.kappa_vs_labels)} |",
        f"| unparseable answers (disagreements) | {r.unparseable} of {r.n_judgings} |",
        f"| retried judge calls | {r.retried_calls} |",
        f"| FAIL verdicts naming the labelled dimension | {_pct(r.flagged_rate)} |",
        f"| controls decided by a failed code check | {r.decided_by_code} |",
        "",
        "Score spread over repeats (mean standard deviation, 0..4 scale): "
        + ", ".join(f"{d} {_num(r.dimension_spread.get(d))}" for d in DIMENSION_NAMES),
        "",
    ]
    if r.flagged_by_dimension:
        lines.append(
            "Failing dimension named, by dimension: "
            + ", ".join(f"{d} {_pct(v)}" for d, v in r.flagged_by_dimension.items())
        )
        lines.append("")
    lines += ["| control | label | case | verdicts | agreed | consistent |", "|---|---|---|---|---|---|"]
    for c in r.controls:
        verdicts = " ".join(j.verdict for j in c.judgings)
        mark = "" if c.agreed == len(c.judgings) else " ✗"
        label = c.label + (f" ({c.failing_dimension})" if c.failing_dimension else "")
        lines.append(
            f"| {c.id}{mark} | {label} | {c.case} | {verdicts} | {c.agreed}/{len(c.judgings)} | "
            f"{'yes' if c.consistent else 'no'} |"
        )
    errors = [(c.id, j) for c in r.controls for j in c.judgings if j.verdict == "ERROR"]
    if errors:
        lines += ["", "Unparseable answers (first 5):"]
        for cid, j in errors[:5]:
            lines.append(f"- {cid} repeat {j.repeat}: {(j.parse_error or '')[:200]}")
    return [*lines, ""]


def render_controls_report(run: ControlsRun) -> str:
    lines = [
        "# Judge controls (agent)",
        "",
        f"{run.created_at} · " + ("every judge passed" if run.passed else "**a judge failed the controls**"),
        "",
        f"A judge passes at {MIN_AGREEMENT:.0%} agreement with the labels (overall, on PASS controls and on "
        f"FAIL controls) and {MIN_CONSISTENCY:.0%} self-consistency (all repeats give the same verdict). "
        "Verdicts are re-derived from the judge's scores and findings with the controls' code checks, as in "
        "`assay eval agent`; an unparseable answer counts as a disagreement.",
        "",
    ]
    for r in run.judges:
        lines += _judge_section(r)
    if run.kappa:
        lines += ["## Agreement between judges (Cohen's kappa)", "", "| a | b | kappa | observed | n |"]
        lines.append("|---|---|---|---|---|")
        for k in run.kappa:
            lines.append(f"| {k.a} | {k.b} | {_num(k.kappa)} | {_pct(k.observed)} | {k.n} |")
        lines.append("")
    return "\n".join(lines)


def save_controls_run(run: ControlsRun, directory: Path) -> None:
    """Write ``controls.json`` and ``report.md`` into ``directory`` (scrubbed of secrets)."""
    scrubber = Scrubber()
    write_scrubbed(directory / CONTROLS_JSON, run.model_dump_json(indent=2) + "\n", scrubber)
    write_scrubbed(directory / CONTROLS_MD, render_controls_report(run), scrubber)


def latest_calibration(
    results_dir: Path, judge_model: str, rubric_version: str, judge_prompt_digest: str
) -> JudgeRecord | None:
    """The newest record under ``results_dir/controls-*`` for this judge model, rubric and judge prompt."""
    best: tuple[str, JudgeRecord] | None = None
    for path in sorted(results_dir.glob(f"controls-*/{CONTROLS_JSON}")):
        try:
            run = ControlsRun.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # a damaged or foreign file is not a calibration
        for r in run.judges:
            key = (r.judge_model, r.rubric_version, r.judge_prompt_digest)
            if key == (judge_model, rubric_version, judge_prompt_digest) and (
                best is None or run.created_at >= best[0]
            ):
                best = (run.created_at, r)
    return best[1] if best else None
