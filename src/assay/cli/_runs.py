"""`assay runs list|show`: read run directories (never takes the eval lock)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from assay.errors import ResumeError
from assay.runs._rundir import META, load_meta, load_scorecard
from assay.runs._runner import RunResult


@click.group(name="runs")
def runs_group() -> None:
    """List and inspect run directories."""


@runs_group.command(name="list")
@click.option(
    "--dir",
    "results_dir",
    type=click.Path(path_type=Path),
    default=Path("results"),
    envvar="ASSAY_RESULTS_DIR",
    show_default=True,
    help="Folder holding run directories.",
)
def list_runs(results_dir: Path) -> None:
    """A table of runs: id, benchmark, suite, started, status counts, pass rate."""
    if not results_dir.is_dir():
        raise click.BadParameter(f"{results_dir} is not a directory", param_hint="--dir")
    table = Table(show_header=True)
    for col in ("run id", "benchmark", "suite", "started", "statuses", "pass rate"):
        table.add_column(col)
    for run_dir in sorted(p for p in results_dir.iterdir() if (p / META).is_file()):
        try:
            meta = load_meta(run_dir)
        except ResumeError as exc:
            table.add_row(run_dir.name, "?", "?", "?", f"unreadable: {exc}", "")
            continue
        try:
            card = load_scorecard(run_dir)
            counts = " ".join(f"{k}={v}" for k, v in card.summary.counts.items() if v)
            rate = "—" if card.summary.pass_rate is None else f"{100 * card.summary.pass_rate:.1f}%"
        except ResumeError:
            counts, rate = "(no scorecard: running or killed)", "—"
        table.add_row(
            meta.run_id,
            meta.benchmark,
            meta.suite,
            meta.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            counts,
            rate,
        )
    Console().print(table)


@runs_group.command(name="show")
@click.argument("run_dir", type=click.Path(path_type=Path))
def show_run(run_dir: Path) -> None:
    """The scorecard summary of RUN_DIR."""
    from assay.cli._eval import print_summary

    card = load_scorecard(run_dir)
    print_summary(RunResult(run_dir, card, 0), Console())
    if card.mixed_commits:
        click.echo(f"warning: results come from several commits: {', '.join(c[:12] for c in card.commits)}")
    if not card.complete:
        click.echo("warning: the run is incomplete; `--resume` it to measure the rest")
