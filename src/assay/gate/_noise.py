"""``noise.json`` from run directories, or from running one eval command N times."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from assay.errors import ConfigError, UsageError
from assay.stats import NoiseReport, noise_from_scorecards

from ._load import load_run

#: exit codes of an eval run that still produced a usable scorecard (2: its own --compare/--enforce failed)
_USABLE_EXIT = (0, 2)


def noise(run_dirs: Sequence[Path | str], out: Path | str | None = None) -> NoiseReport:
    """Fold N run directories of one configuration into a noise report; write it to ``out`` if given."""
    runs = [load_run(p) for p in run_dirs]
    report = noise_from_scorecards([r.scorecard for r in runs], names=[str(r.path) for r in runs])
    if out is not None:
        path = Path(out)
        if path.is_dir():
            path = path / "noise.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        from assay.runs.rundir import write_model

        write_model(path, report)
    return report


def resolve_eval_command(command: Sequence[str]) -> list[str]:
    """Turn ``assay eval X ...`` (or ``eval X ...``) into a command line that runs this installation."""
    cmd = list(command)
    if not cmd:
        raise UsageError("assay eval noise: give the eval command after `--`, e.g. -- assay eval memory")
    if any(a == "--out" or a.startswith("--out=") for a in cmd):
        raise UsageError(
            "assay eval noise: do not pass --out to the eval command; each run gets a fresh directory"
        )
    if any(a == "--resume" or a.startswith("--resume=") for a in cmd):
        raise UsageError("assay eval noise: the eval command cannot use --resume; each run must start fresh")
    if cmd[0] == "eval":
        cmd = ["assay", *cmd]
    if cmd[0] == "assay" and shutil.which("assay") is None:
        cmd = [sys.executable, "-m", "assay", *cmd[1:]]
    return cmd


def run_noise_command(
    command: Sequence[str],
    runs: int,
    runs_root: Path | str | None = None,
    echo: Callable[[str], None] = print,
) -> list[Path]:
    """Run the eval command ``runs`` times, each with ``--out`` set to a fresh directory; return those dirs.

    A run that exits other than 0 or 2, or leaves no scorecard.json, stops everything with a UsageError.
    """
    if runs < 2:
        raise UsageError(f"--runs {runs}: a noise floor needs at least 2 runs")
    cmd = resolve_eval_command(command)
    root = Path(runs_root) if runs_root else Path("results") / f"noise-{datetime.now(UTC):%Y%m%dT%H%M%SZ}"
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"--runs-dir {root}: exists and is not empty")
    root.mkdir(parents=True, exist_ok=True)
    dirs = []
    for i in range(1, runs + 1):
        out = root / f"run-{i}"
        full = [*cmd, "--out", str(out)]
        echo(f"noise run {i}/{runs}: {shlex.join(full)}")
        proc = subprocess.run(full, check=False)
        if proc.returncode not in _USABLE_EXIT:
            raise UsageError(f"noise run {i}/{runs} exited {proc.returncode}: {shlex.join(full)}")
        if not (out / "scorecard.json").is_file():
            raise ConfigError(f"noise run {i}/{runs} wrote no scorecard.json", path=str(out))
        dirs.append(out)
    return dirs
