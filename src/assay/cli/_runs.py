"""`assay runs list|show`: read run directories (never takes the eval lock)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from assay.errors import ResumeError
from assay.exec import RunResult
from assay.runs import load_meta, load_scorecard
from assay.runs.rundir import META


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
    """A table of runs: id, benchmark, suite, started, how long it ran, status counts, pass rate.

    Run ids are never cut (they are what `runs show`, `--resume` and `--compare` take): on a narrow terminal
    the other columns wrap instead.
    """
    if not results_dir.is_dir():
        raise click.BadParameter(f"{results_dir} is not a directory", param_hint="--dir")
    rows: list[tuple[str, ...]] = []
    for run_dir in sorted(p for p in results_dir.iterdir() if (p / META).is_file()):
        try:
            meta = load_meta(run_dir)
        except ResumeError as exc:
            rows.append((run_dir.name, "?", "?", "?", "", f"unreadable: {exc}", ""))
            continue
        try:
            card = load_scorecard(run_dir)
            counts = " ".join(f"{k}={v}" for k, v in card.summary.counts.items() if v)
            rate = "—" if card.summary.pass_rate is None else f"{100 * card.summary.pass_rate:.1f}%"
        except ResumeError:
            counts, rate = "(no scorecard: running or killed)", "—"
        took = "—" if meta.elapsed_s is None else _duration(meta.elapsed_s)
        started = meta.started_at.strftime("%Y-%m-%d %H:%M:%S")
        rows.append((run_dir.name, meta.benchmark, meta.suite, started, took, counts, rate))
    console = Console()
    keep = _columns_that_fit(rows, console.width)
    table = Table(show_header=True)
    for i in keep:
        # the id never wraps nor is cut; the statuses may fold onto more lines
        table.add_column(_COLUMNS[i], no_wrap=i != 5, overflow="fold" if i == 5 else "ellipsis")
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    if _width(rows, keep) > console.width:  # too narrow even for the ids: one per line, whole
        for row in rows:
            click.echo(row[0])
        return
    console.print(table)


_COLUMNS = ("run id", "benchmark", "suite", "started", "took", "statuses", "pass rate")
#: the columns given up first when the terminal is narrow (benchmark and suite are in the default run id)
_DROP_ORDER = (2, 1, 4, 3, 6)


def _width(rows: list[tuple[str, ...]], keep: list[int]) -> int:
    """Width of the table with columns ``keep``; the statuses column counts one status (it folds)."""
    total = 1
    for i in keep:
        cells = [_COLUMNS[i], *(r[i] for r in rows)]
        if i == 5:
            cells = [w for c in cells for w in c.split()] or [""]
        total += max(map(len, cells)) + 3
    return total


def _columns_that_fit(rows: list[tuple[str, ...]], width: int) -> list[int]:
    keep = list(range(len(_COLUMNS)))
    for i in _DROP_ORDER:
        if _width(rows, keep) <= width:
            break
        keep.remove(i)
    return keep


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


@runs_group.command(name="show")
@click.argument("run_dir", type=click.Path(path_type=Path))
def show_run(run_dir: Path) -> None:
    """The scorecard summary of RUN_DIR."""
    from assay.cli._eval import print_summary
    from assay.gate import GateOptions, verdict_of

    card = load_scorecard(run_dir)
    print_summary(RunResult(run_dir, card, verdict_of(card, GateOptions())), Console())
    meta = load_meta(run_dir)
    if meta.finished_at is not None and meta.elapsed_s is not None:
        finished = meta.finished_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        click.echo(f"finished {finished}, ran {_duration(meta.elapsed_s)}")
    if card.mixed_commits:
        click.echo(f"warning: results come from several commits: {', '.join(c[:12] for c in card.commits)}")
    if not card.complete and (tool := card.config.extra.get("imported_from")):
        click.echo(
            f"warning: the run is incomplete; an import cannot be resumed: finish it in {tool}, import again"
        )
    elif not card.complete:
        click.echo("warning: the run is incomplete; `--resume` it to measure the rest")
