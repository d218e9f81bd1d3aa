"""`assay import TOOL PATH... --out RUN_DIR`: another eval tool's result as an assay run directory."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command("import")
@click.argument("tool", metavar="TOOL")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path), metavar="PATH...")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="The run directory to write (new or empty). Default: results/import-TOOL-TASK-<timestamp>.",
)
@click.option(
    "--results-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("results"),
    envvar="ASSAY_RESULTS_DIR",
    show_default=True,
    help="Where the run directory goes without --out.",
)
@click.option(
    "--detect",
    type=click.FloatRange(min=0.0, min_open=True, max=1.0),
    default=None,
    help="A change of a proportion you want to see (0.03): the report says how many items it needs.",
)
@click.option(
    "--pass-threshold",
    type=float,
    default=None,
    help="The score at or above which an attempt passes (tau2, inspect, lm-eval; default: full credit, 1). "
    "Recorded in meta.json; runs with other thresholds do not compare.",
)
def import_command(
    tool: str,
    paths: tuple[Path, ...],
    out: Path | None,
    results_dir: Path,
    detect: float | None,
    pass_threshold: float | None,
) -> None:
    """Read one result of TOOL into an assay run directory.

    TOOL: inspect (an Inspect AI .eval/.json log), swebench (the harness's run summary, then report.json
    files), promptfoo (eval -o results.json), lm-eval (results_*.json, then its samples_*.jsonl), tau2
    (a tau2-bench results .json, or a tau-bench results .json).

    The run then works with compare, propose, gate, noise, health, trend, scorecard and view. The same
    file imported twice gives the same run id.
    """
    from assay.imports import import_run

    result = import_run(
        tool,
        list(paths),
        out,
        results_dir=results_dir,
        detect=detect,
        pass_threshold=pass_threshold,
        command_line=list(sys.argv),
    )
    s = result.scorecard.summary
    counts = " ".join(f"{k}={v}" for k, v in s.counts.items() if v)
    rate = "—" if s.pass_rate is None else f"{100 * s.pass_rate:.1f}%"
    click.echo(f"{result.run_dir}: {result.scorecard.run_id}: {counts}; pass rate {rate}")


@click.group("export")
def export_group() -> None:
    """Write an assay run in another tool's format."""


@export_group.command("inspect")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The Inspect log to write (.eval or .json); `inspect view` opens it.",
)
def export_inspect_command(run_dir: Path, out: Path) -> None:
    """Write RUN_DIR as an Inspect AI log, with Inspect's own writer (needs assay[inspect])."""
    from assay.imports import export_inspect

    click.echo(export_inspect(run_dir, out))
