"""Baselines: a scorecard plus its meta.json, kept somewhere stable to compare later runs against."""

from __future__ import annotations

from pathlib import Path

from assay.errors import UsageError
from assay.runs.rundir import write_model

from ._load import META, SCORECARD, LoadedRun, load_run


def check_baseline_iterations(iterations: int, force: bool, where: str) -> None:
    """Refuse a 1-iteration baseline unless ``force`` (the eval command checks this before it runs)."""
    if iterations < 2 and not force:
        raise UsageError(
            f"{where}: a 1-iteration run makes a baseline that cannot tell flaky cases from broken ones; "
            "rerun with --iterations 3 (or more), or pass --force to save it anyway"
        )


def save_baseline(run_dir: Path | str | LoadedRun, dest: Path | str, force: bool = False) -> Path:
    """Write ``dest/scorecard.json`` and ``dest/meta.json`` from a finished run; return ``dest``.

    A 1-iteration run cannot tell a flaky case from a broken one, so it is refused unless ``force``. So is
    a run whose scorecard says it is incomplete. ``dest`` may already hold a baseline: it is replaced.
    """
    run = run_dir if isinstance(run_dir, LoadedRun) else load_run(run_dir)
    sc = run.scorecard
    check_baseline_iterations(sc.iterations, force, str(run.path))
    if not sc.complete and not force:
        raise UsageError(
            f"{run.path}: the run is incomplete (some attempts never finished); resume it with --resume, "
            "or pass --force to save it anyway"
        )
    out = Path(dest)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--save-baseline {out}: exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    write_model(out / SCORECARD, sc)
    if run.meta is not None:
        write_model(out / META, run.meta)
    else:
        (out / META).unlink(missing_ok=True)
    return out
