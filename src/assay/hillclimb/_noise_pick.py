"""Which noise file gives the loop its floors: the one named by ``--noise`` (refused before any branch or run
when it was made for another benchmark, suite or configuration), else the newest ``noise.json`` that fits,
looked for where ``assay eval noise`` writes one (``./noise.json``) and in the results folder's run folders.
"""

from __future__ import annotations

from pathlib import Path

from assay.errors import ConfigError
from assay.gate.comparison import noise_mismatch
from assay.runs import SubjectConfig
from assay.stats import NoiseReport, load_noise

__all__ = ["NoiseFit", "candidates", "pick_noise"]


class NoiseFit:
    """What a climb's runs will be compared as: benchmark, suite, suite version, subject configuration."""

    def __init__(self, benchmark: str, suite: str, suite_version: str, config: SubjectConfig) -> None:
        self.benchmark, self.suite, self.suite_version, self.config = benchmark, suite, suite_version, config

    def reasons(self, report: NoiseReport) -> list[str]:
        return noise_mismatch(report, self.benchmark, self.suite, self.suite_version, self.config)


def candidates(results_dir: Path) -> list[Path]:
    """``./noise.json``, ``<results>/noise*.json`` and ``<results>/*/noise.json``, those that exist."""
    found = [Path("noise.json")]
    root = Path(results_dir)
    if root.is_dir():
        found += sorted(root.glob("noise*.json")) + sorted(root.glob("*/noise.json"))
    return [p.resolve() for p in found if p.is_file()]


def pick_noise(named: Path | None, fit: NoiseFit, results_dir: Path) -> tuple[Path | None, str]:
    """The noise file to use and a line saying why; a named file that does not fit is a ConfigError."""
    if named is not None:
        if not Path(named).is_file():
            raise ConfigError("--noise: no such file (write one with `assay eval noise`)", path=str(named))
        reasons = fit.reasons(load_noise(Path(named)))
        if reasons:
            raise ConfigError(f"--noise: {'; '.join(reasons)}", path=str(named))
        return Path(named).resolve(), f"noise floor: {Path(named).resolve()} (--noise)"
    fitting: list[tuple[NoiseReport, Path]] = []
    for path in candidates(results_dir):
        try:
            report = load_noise(path)
        except ConfigError:
            continue  # not a noise file of assay's: never picked
        if not fit.reasons(report):
            fitting.append((report, path))
    if not fitting:
        return None, (
            f"noise floor: none (no noise.json for {fit.benchmark}/{fit.suite} with this model, judge and "
            "embedder in ./ or under the results folder; a change counts only as stable-fail -> stable-pass)"
        )
    report, path = max(fitting, key=lambda rp: rp[0].created_at)
    return (
        path,
        f"noise floor: {path} (picked: the newest noise.json that fits, made {report.created_at:%Y-%m-%d %H:%M}Z)",
    )
