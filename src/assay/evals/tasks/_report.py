"""What a tasks run adds up to, and ``assay eval tasks report``: the harness x model table of several runs.

:func:`summarize` is the one place the run's task counts are made (passed, verified, unverified changes,
judged, quality); the scorecard carries it in ``extra["tasks"]``, the run metrics are read from it, and the
report's table is built from the scorecards. The table is written as markdown, HTML and a PNG that Debian's
headless Chromium renders from the HTML.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.errors import ConfigError
from assay.evals.tasks._judge import TasksJudgement
from assay.evals.tasks._judge_run import awaits_judge
from assay.models.weak import WEAK_MODEL_NOTE, is_weak_model
from assay.runs import MEASURED_STATUSES, Attempt, MetricValue, Status

__all__ = [
    "CHROMIUM_INSTALL",
    "TasksSummary",
    "find_chromium",
    "render_png",
    "summarize",
    "summary_metrics",
    "write_report",
]

CHROMIUM_INSTALL = "apt-get install chromium"
NO_CHROMIUM = (
    f"the PNG is rendered by headless Chromium, which is not installed: {CHROMIUM_INSTALL} "
    "(or set ASSAY_CHROMIUM to its binary)"
)


class TasksSummary(BaseModel):
    """The counts of one run (over every pass of the suite)."""

    tasks: int = 0
    measured: int = 0
    passed: int = 0
    not_measured: int = 0
    #: coding attempts (those with an expect block) and how many were verified / left unverified changes
    coding: int = 0
    verified: int = 0
    unverified: int = 0
    #: answers read for honesty, and those claiming completion the checks or the record deny
    honesty_read: int = 0
    misreported: int = 0
    judged: int = 0
    unjudged: int = 0
    quality_ok: int = 0
    quality_mean: float | None = None
    tokens: int = 0
    judge_tokens: int = 0
    steps_mean: float | None = None
    wall_s: float = 0.0
    iterations: int = 1
    judge_model: str | None = None
    #: attempts whose tool record was read for web use (realfix, swebench), and those that used the web
    web_checked: int = 0
    web_use: int = 0


def _judged_grade(att: Attempt, judgement: TasksJudgement | None) -> Any:
    if judgement is None:
        return None
    grade = judgement.grade_of(att.case_id, att.iteration)
    started = judgement.attempts.get(f"{att.case_id}#{att.iteration}")
    # a grade belongs to the attempt it was made on: an attempt re-run by --resume is not judged yet
    return grade if grade is not None and started == att.started_at.isoformat() else None


def summarize(attempts: Sequence[Attempt], judgement: TasksJudgement | None, iterations: int) -> TasksSummary:
    s = TasksSummary(
        tasks=len({a.case_id for a in attempts}),
        iterations=max(iterations, 1),
        judge_model=judgement.judge_model if judgement else None,
    )
    qualities: list[float] = []
    steps: list[float] = []
    for att in attempts:
        d = att.details
        if isinstance(d.get("compliance"), list):
            s.web_checked += 1
            s.web_use += bool(d["compliance"])
        if "misreported" in d:  # a code fact, counted for a question still waiting for its judge too
            s.honesty_read += 1
            s.misreported += d["misreported"] is not None
        if att.status not in MEASURED_STATUSES:
            # a question waiting for the judge is not measured yet; a task skipped with a reason is its own
            awaiting = awaits_judge(att)
            s.not_measured += att.status is not Status.SKIPPED or awaiting
            continue
        s.measured += 1
        s.passed += att.status is Status.PASS
        s.tokens += att.usage.total_tokens if att.usage else 0
        s.wall_s += att.elapsed_s
        if "steps" in att.metrics:
            steps.append(att.metrics["steps"])
        if d.get("kind") == "coding":
            s.coding += 1
            s.verified += d.get("verified") is True
            s.unverified += bool(d.get("edited")) and d.get("verified") is not True
        grade = _judged_grade(att, judgement)
        if grade is not None and grade.judged:
            s.judged += 1
            s.quality_ok += grade.quality_ok
            qualities.append(grade.quality)
        else:
            s.unjudged += 1  # unjudged fails the quality checks; it is never left out of the count
    s.quality_mean = round(sum(qualities) / len(qualities), 4) if qualities else None
    s.steps_mean = round(sum(steps) / len(steps), 3) if steps else None
    s.judge_tokens = judgement.usage.total_tokens if judgement else 0
    return s


def summary_metrics(s: TasksSummary, judged: bool) -> dict[str, MetricValue]:
    """The run metrics of a tasks scorecard (their kind, direction and tolerance are the benchmark's specs)."""
    per_pass = 1 / s.iterations
    out = {"unverified": MetricValue(value=s.unverified * per_pass, n=s.coding, direction="lower")}
    if s.honesty_read:
        out["misreported"] = MetricValue(value=s.misreported * per_pass, n=s.honesty_read, direction="lower")
    if judged:  # before the judge ran there is no quality to gate (the run is re-folded after it)
        out["quality"] = MetricValue(value=s.quality_mean, n=s.judged, direction="higher")
        out["quality_failed"] = MetricValue(
            value=(s.measured - s.quality_ok) * per_pass, n=s.measured, direction="lower"
        )
        out["unjudged"] = MetricValue(
            value=s.unjudged * per_pass, n=s.measured, direction="lower", gated=False
        )
    return out


# ---------------------------------------------------------------------------------------------- the table
def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _cell(s: TasksSummary) -> str:
    text = f"{s.passed}/{s.measured}"
    return text + (f" ({s.not_measured} not measured)" if s.not_measured else "")


def table_markdown(run_dirs: Sequence[Path]) -> str:
    """The harness x model table of ``run_dirs`` (each an eval tasks run), one column per suite."""
    from assay.gate import load_run

    rows: dict[tuple[str, str], dict[str, TasksSummary]] = {}
    judges: set[str] = set()
    for d in run_dirs:
        sc = load_run(d).scorecard
        if sc.benchmark != "tasks" or "tasks" not in sc.extra:
            raise ConfigError("not an eval tasks run (its scorecard has no tasks summary)", path=str(d))
        s = TasksSummary.model_validate(sc.extra["tasks"])
        key = (sc.config.subject or "?", sc.config.model or "?")
        if sc.suite in rows.setdefault(key, {}):
            raise ConfigError(
                f"a second {sc.suite} run of harness {key[0]} on {key[1]}; pass one run per harness, "
                "model and suite",
                path=str(d),
            )
        rows[key][sc.suite] = s
        if s.judge_model:
            judges.add(s.judge_model)
    suites = sorted({suite for cells in rows.values() for suite in cells})
    head = ["harness", "model", *(f"{x} passed" for x in suites), "verified", "unverified changes"]
    head += ["misreported"]
    head += ["quality (1-5)", "quality ok", "unjudged", "agent tokens", "steps/task", "wall s"]
    lines = ["# eval tasks: harness x model", ""]
    lines.append(
        f"Judge: {', '.join(sorted(judges)) or 'none (not judged)'}. Passed = every expect check held."
    )
    weak = sorted({m for _, m in rows if is_weak_model(m)} | {j for j in judges if is_weak_model(j)})
    if weak:
        lines += ["", f"> **Weak model** ({', '.join(f'`{m}`' for m in weak)}): {WEAK_MODEL_NOTE}"]
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (harness, model), cells in sorted(rows.items()):
        total = list(cells.values())
        coding, verified = sum(c.coding for c in total), sum(c.verified for c in total)
        judged = [c for c in total if c.quality_mean is not None]
        n_judged = sum(c.judged for c in judged)
        quality = sum(c.quality_mean * c.judged for c in judged) / n_judged if n_judged else None  # type: ignore[operator]
        steps = [c.steps_mean for c in total if c.steps_mean is not None]
        row = [harness, model, *(_cell(cells[x]) if x in cells else "-" for x in suites)]
        row += [f"{verified}/{coding}", str(sum(c.unverified for c in total))]
        row += [f"{sum(c.misreported for c in total)}/{sum(c.honesty_read for c in total)}", _fmt(quality)]
        row += [f"{sum(c.quality_ok for c in total)}/{sum(c.measured for c in total)}"]
        row += [str(sum(c.unjudged for c in total)), str(sum(c.tokens for c in total))]
        row += [_fmt(sum(steps) / len(steps) if steps else None, 1), _fmt(sum(c.wall_s for c in total), 0)]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Runs: " + ", ".join(f"`{d}`" for d in run_dirs), ""]
    return "\n".join(lines)


def find_chromium() -> tuple[str, str] | None:
    """(how, path) of a headless Chromium: Playwright's launcher on Debian's binary, else the binary itself."""
    binary = os.environ.get("ASSAY_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        return None
    try:
        import playwright  # noqa: F401
    except ImportError:
        return ("cli", binary)
    return ("playwright", binary)


def render_png(html_path: Path, png_path: Path, width: int = 1400, height: int = 420) -> Path:
    """Screenshot ``html_path`` with headless Chromium; a missing Chromium names its install command."""
    found = find_chromium()
    if found is None:
        raise ConfigError(NO_CHROMIUM, path="report --out")
    how, binary = found
    if how == "playwright":
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=binary, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(html_path.resolve().as_uri())
            page.screenshot(path=str(png_path), full_page=True)
            browser.close()
        return png_path
    with tempfile.TemporaryDirectory(prefix="assay-chromium-") as profile:
        argv = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
        argv += [f"--user-data-dir={profile}", f"--screenshot={png_path.resolve()}"]
        argv += [f"--window-size={width},{height}", html_path.resolve().as_uri()]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0 or not png_path.is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ConfigError(
            f"chromium could not render the PNG (exit {proc.returncode}): {tail[0]}", path=binary
        )
    return png_path


def write_report(run_dirs: Sequence[Path], out: Path) -> dict[str, Path]:
    """Write ``tasks.md``, ``tasks.html`` and ``tasks.png`` (the table) into ``out``."""
    from assay.report import markdown_to_html
    from assay.report.html import REPORT_CSS
    from assay.runs.rundir import write_artifact

    if not run_dirs:
        raise ConfigError("report needs at least one run directory")
    if find_chromium() is None:  # refused before anything is written
        raise ConfigError(NO_CHROMIUM, path="report --out")
    md = table_markdown(run_dirs)
    out.mkdir(parents=True, exist_ok=True)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>eval tasks</title>"
        f"<style>{REPORT_CSS}</style></head><body>{markdown_to_html(md, out)}</body></html>\n"
    )
    paths = {"md": out / "tasks.md", "html": out / "tasks.html", "png": out / "tasks.png"}
    write_artifact(paths["md"], md)
    write_artifact(paths["html"], page)
    rows = sum(ln.startswith("| ") for ln in md.splitlines())
    render_png(paths["html"], paths["png"], height=260 + 44 * rows)  # the whole table in the window
    return paths
