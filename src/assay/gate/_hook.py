"""What every eval command does after its run: --compare, --save-baseline, --expect/--enforce."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from assay.runs._records import RunMeta, Scorecard
from assay.runs._rundir import write_artifact, write_model

from ._baseline import save_baseline as _save_baseline
from ._compare import compare as _compare
from ._expect import find_expectations, gate
from ._load import META, LoadedRun, _read_model
from ._render import comparison_markdown, print_comparison, print_gate

COMPARISON_MD = "comparison.md"
_MARK = "## Compared with baseline"


def write_comparison(run_dir: Path, comp_md: str) -> None:
    """Write ``comparison.md`` and append the section to ``report.md`` when the run has one."""
    write_artifact(run_dir / COMPARISON_MD, comp_md)
    report = run_dir / "report.md"
    if report.is_file():
        text = report.read_text(encoding="utf-8")
        if _MARK in text:
            text = text[: text.index(_MARK)].rstrip() + "\n"
        write_artifact(report, text.rstrip() + "\n\n" + comp_md)


def apply_run_options(
    run_dir: Path,
    scorecard: Scorecard,
    *,
    compare: Path | None,
    save_baseline: Path | None,
    require_complete: bool,
    force: bool,
    noise: Path | None,
    expect: Path | None,
    enforce: bool,
    console: Console,
) -> int:
    """Compare, gate and save a baseline for a finished run; print to ``console``; return the exit code.

    The exit code is the worst of the comparison (0, 2 or 3) and the gate (0, 2 with ``enforce``, 3 for an
    expectations file of another configuration). User errors (a missing baseline or expectations file, a
    1-iteration baseline without ``force``) raise :class:`~assay.errors.UsageError` subclasses.
    """
    run_dir = Path(run_dir)
    meta_path = run_dir / META
    meta = _read_model(RunMeta, meta_path, META) if meta_path.is_file() else None
    run = LoadedRun(path=run_dir, scorecard=scorecard, meta=meta)
    code = 0
    if compare is not None:
        comp = _compare(compare, run, noise=noise, require_complete=require_complete)
        print_comparison(comp, console)
        comp.save(run_dir / "comparison.json")
        write_comparison(run_dir, comparison_markdown(comp))
        code = max(code, comp.exit_code)
    elif require_complete:
        # a case skipped with a reason is its own outcome, not an unmeasured one
        unmeasured = [c.case_id for c in scorecard.cases if c.measured == 0 and c.stability != "skipped"]
        if unmeasured or not scorecard.complete:
            shown = ", ".join(unmeasured[:10]) + (" ..." if len(unmeasured) > 10 else "")
            console.print(
                f"[red]incomplete:[/red] not measured: {shown or 'attempts unfinished'} (--require-complete)",
                highlight=False,
            )
            code = max(code, 2)
    if expect is not None or enforce or find_expectations(scorecard) is not None:
        result = gate(run, expect=expect, enforce=enforce)
        print_gate(result, console)
        write_model(run_dir / "gate.json", result)
        code = max(code, result.exit_code)
    if save_baseline is not None and code != 0:
        # a run that just regressed, missed its expectations or is not comparable must not become the bar
        what = {2: "regressed or missed its expectations", 3: "is not comparable with --compare"}.get(
            code, "failed"
        )
        console.print(
            f"[red]--save-baseline {save_baseline}: not saved:[/red] this run {what} (exit {code}); "
            "a baseline is saved only from a run that passes its --compare/--expect checks",
            highlight=False,
            soft_wrap=True,
        )
    elif save_baseline is not None:
        dest = _save_baseline(run, save_baseline, force=force)
        console.print(f"baseline saved to {dest}", highlight=False)
    return code
