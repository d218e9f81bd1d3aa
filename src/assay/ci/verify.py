"""``assay ci verify``: a final tag ships only what a ``full`` sweep measured.

It passes when, for every job of the ``full`` tier, some run measured the tagged commit or the commit of one
of its RC tags (``meta.json``'s ``git_commit``, from a clean tree), ran that job's configuration (the
benchmark, and the values the job's own arguments set, read back from the run's recorded options) over its
whole selection (not a narrower targeted run), and finished complete with something measured. It says which
run covered each job, and why each other run did not count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.evals.agent.tiers import CiJob, Tiers
from assay.runs import RunMeta, Scorecard

__all__ = ["VerifyResult", "find_runs", "verify"]


@dataclass
class VerifyResult:
    commit: str
    #: job name -> (run dir, the commit or RC tag it measured) of the run that covered it
    covered: dict[str, tuple[str, str]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    #: run dir -> why it did not count
    rejected: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(self.covered) and not self.missing

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 2

    def text(self) -> str:
        head = "PASS" if self.passed else "FAIL"
        lines = [f"verify {self.commit[:12]}: {head}"]
        lines += [f"  {job}: measured by {run} ({what})" for job, (run, what) in self.covered.items()]
        lines += [f"  {job}: no full sweep measured this commit or its RC tags" for job in self.missing]
        if self.rejected:
            lines.append("runs that did not count:")
            lines += [f"  {run}: {why}" for run, why in self.rejected.items()]
        return "\n".join(lines)


def find_runs(dirs: list[Path]) -> list[Path]:
    """Run directories (folders with ``meta.json`` and ``scorecard.json``) at or under each of ``dirs``."""
    from assay.errors import ConfigError

    found: list[Path] = []
    for d in dirs:
        if not d.is_dir():
            raise ConfigError(f"--runs {d}: no such folder")
        found += sorted(m.parent for m in d.rglob("meta.json") if (m.parent / "scorecard.json").is_file())
    return list(dict.fromkeys(found))


#: the shared ``assay eval`` options a job's run is checked against: spelling -> (name, type)
_SHARED_CHECKED: dict[str, tuple[str, type]] = {
    "--suite": ("suite", str),
    "--iterations": ("iterations", int),
    "-n": ("iterations", int),
}


def _job_params(job: CiJob) -> tuple[dict[str, Any], dict[str, Any]]:
    """(shared, benchmark-specific) values the job's own arguments set, read against the benchmark's typed
    options (its JSON form, as ``meta.json`` records it)."""
    from assay.errors import ConfigError
    from assay.evals import get_benchmark
    from assay.exec import parse_args

    model = get_benchmark(job.benchmark).Options
    try:
        own, other = parse_args(model, job.args)
    except ConfigError as exc:
        raise ConfigError(f"job {job.name} ({job.tier}): {exc}") from None
    shared: dict[str, Any] = {}
    for spelling, value in other.items():
        if spelling in _SHARED_CHECKED and value is not None:
            name, kind = _SHARED_CHECKED[spelling]
            try:
                shared[name] = kind(value)
            except ValueError:
                raise ConfigError(
                    f"job {job.name} ({job.tier}): {spelling} {value!r}: not a number"
                ) from None
    dumped = model.model_validate(own).model_dump(mode="json", include=set(own))
    return shared, dumped


def _mismatch(job: CiJob, meta: RunMeta, card: Scorecard) -> str | None:
    """Why the run is not the job's full sweep (None: it is)."""
    if meta.benchmark != job.benchmark and not meta.benchmark.startswith(f"{job.benchmark}-"):
        return f"a {meta.benchmark} run"
    shared, own = _job_params(job)
    if "suite" in shared and shared["suite"] != meta.suite:
        return f"suite {meta.suite}, not {shared['suite']}"
    if "iterations" in shared and meta.iterations < shared["iterations"]:
        return f"{meta.iterations} iteration(s), fewer than {shared['iterations']}"
    recorded = meta.options.get("benchmark") or {}
    for key, value in own.items():
        if recorded.get(key) != value:
            return f"--{key.replace('_', '-')} {recorded.get(key)!r}, not {value!r}"
    narrowed = set((card.extra.get("selection") or {}).get("by") or {}) - set(own)
    if narrowed:
        return "a targeted run (" + ", ".join(f"--{k}" for k in sorted(narrowed)) + ")"
    if not card.complete or card.summary.measured == 0:
        return "incomplete: not every case was measured"
    return None


def verify(
    commit: str, runs: list[Path], tiers: Tiers, rc_commits: dict[str, str] | None = None
) -> VerifyResult:
    """Whether every ``full`` job measured ``commit`` (or an RC tag's commit in ``rc_commits``: tag -> sha)."""
    from assay.errors import ConfigError
    from assay.runs import load_meta, load_scorecard

    jobs = tiers.jobs_in("full")
    if not jobs:
        raise ConfigError("the tiers file has no full tier job to verify", path=str(tiers.path))
    targets = {commit: "the tagged commit"} | {
        sha: f"RC tag {tag}" for tag, sha in (rc_commits or {}).items()
    }
    result = VerifyResult(commit)
    for run in runs:
        meta, card = load_meta(run), load_scorecard(run)
        if meta.git_commit not in targets:
            result.rejected[str(run)] = f"measured commit {(meta.git_commit or 'unknown')[:12]}"
            continue
        if meta.git_dirty:
            result.rejected[str(run)] = "measured a tree with uncommitted changes"
            continue
        whys = [(job, _mismatch(job, meta, card)) for job in jobs]
        matched = [job for job, why in whys if why is None]
        for job in matched:
            result.covered.setdefault(job.name, (str(run), targets[meta.git_commit]))
        if not matched:
            result.rejected[str(run)] = "; ".join(str(why) for _, why in whys)
    result.missing = [j.name for j in jobs if j.name not in result.covered]
    return result
