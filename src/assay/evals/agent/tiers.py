"""CI tiers of the agent scenarios: ``eval/ci_tiers.json``, read and validated.

    {"tiers": {"smoke":   {"description": "...", "scenarios": ["id", ...]},
               "full":    {"description": "...", "scenarios": [...]},
               "backlog": {"description": "...", "scenarios": {"id": "why it is here"}}},
     "excluded": {"id": "why it runs in no tier"},
     "lanes": {"controls": {"description": "...", "judge_models": ["local/smollm2"], "repeats": 3,
                            "records": "tests/fixtures/baselines/controls"}}}

A tier lists scenario ids (``backlog`` and ``excluded`` say why each one is there). The file sits next to the
scenarios folder (``<scenarios>/../ci_tiers.json``). Every fault is a ConfigError naming the file and, for
malformed JSON, the line.

Every benchmark declares its own CI jobs (``Benchmark.ci_jobs``, read through the registry:
:func:`registry_ci_jobs`). A tiers file may instead carry ``"benchmarks"``, which then replaces them: for each job (named after its benchmark, or any name with
``"benchmark"`` set), the CI tiers it runs in (``pr``, ``smoke``, ``full``, ``backlog``), each with the
``assay eval`` arguments, an optional committed ``baseline`` to gate against, and the reason it is there
(:class:`CiJob`; ``assay ci plan`` reads them)::

    "benchmarks": {"memory": {"pr": {"args": ["--suite", "pr", "--iterations", "3"],
                                     "baseline": "tests/fixtures/baselines/memory-pr", "reason": "..."}},
                   "retrieval-rag": {"benchmark": "retrieval", "pr": {...}}}

A lane is a CI job that runs on a condition rather than on every push. The one lane is ``controls``: judge
calibration, due when the judge prompt, the rubric, the labelled controls or a judge model it names has no
record made with them (:mod:`assay.evals.agent._controls_lane`). ``assay ci plan`` adds it to the jobs of any
event that runs a tier when it is due against the committed records of ``records``;
``assay eval agent controls --if-changed`` decides the same against the records under ``results/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._util import read_json_file
from assay.errors import ConfigError

__all__ = [
    "CI_TIERS",
    "LANES",
    "TIERS_FILE",
    "CiJob",
    "ControlsLane",
    "Tier",
    "Tiers",
    "coverage_problems",
    "load_tiers",
    "registry_ci_jobs",
    "tiers_path",
]

TIERS_FILE = "ci_tiers.json"
#: tiers whose every scenario must carry the reason it is there
REASONED_TIERS = frozenset({"backlog"})
#: the lanes a tiers file may configure
LANES = ("controls",)
#: the CI tiers a benchmark's job may be in (``assay ci plan``), in the order a release climbs them
CI_TIERS = ("pr", "smoke", "full", "backlog")
#: arguments a job may not carry: ``assay ci plan`` sets where results, JUnit and summaries go
_PLAN_OWNED_ARGS = ("--out", "--results-dir", "--junit", "--summary", "--compare", "--gate", "--resume")


@dataclass(frozen=True)
class Tier:
    name: str
    description: str
    scenarios: tuple[str, ...]
    #: scenario id -> why it is in this tier (``backlog``); empty for a plain list
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ControlsLane:
    """Judge calibration in CI: which judge models it calibrates, and how many judgings of each control."""

    description: str
    judge_models: tuple[str, ...]
    repeats: int = 3
    #: the folder of committed calibration records (``controls-*/controls.json``, from real runs) that
    #: ``assay ci plan`` holds the current judge prompt, rubric, controls and judge models against
    records: str | None = None


@dataclass(frozen=True)
class CiJob:
    """One benchmark's run in one CI tier: ``assay eval <benchmark> <args>``, gated against ``baseline``."""

    name: str
    benchmark: str
    tier: str
    args: tuple[str, ...]
    reason: str
    baseline: str | None = None


@dataclass(frozen=True)
class Tiers:
    path: Path
    tiers: dict[str, Tier]
    excluded: dict[str, str]
    controls_lane: ControlsLane | None = None
    #: the file's own ``"benchmarks"`` (None: it has none, and every benchmark's own ``ci_jobs`` count)
    file_jobs: dict[str, dict[str, CiJob]] | None = None

    @property
    def jobs(self) -> dict[str, dict[str, CiJob]]:
        """Job name -> CI tier -> its job: the file's ``"benchmarks"``, else the registry's (each benchmark
        class declares its own ``ci_jobs``)."""
        return self.file_jobs if self.file_jobs is not None else registry_ci_jobs()

    def jobs_in(self, tier: str) -> list[CiJob]:
        """The jobs of one CI tier, in file order."""
        return [by_tier[tier] for by_tier in self.jobs.values() if tier in by_tier]

    def tier_of(self, scenario_id: str) -> str | None:
        """The first tier listing ``scenario_id`` (in file order), ``excluded``, or None."""
        for tier in self.tiers.values():
            if scenario_id in tier.scenarios:
                return tier.name
        return "excluded" if scenario_id in self.excluded else None


def tiers_path(scenarios_dir: Path) -> Path:
    return scenarios_dir.resolve().parent / TIERS_FILE


def _reasons(value: Any, where: str, path: Path) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must map each scenario id to the reason it is there", path=str(path))
    for sid, why in value.items():
        if not isinstance(why, str) or not why.strip():
            raise ConfigError(f"{where}[{sid!r}]: give the reason as a non-empty string", path=str(path))
    return dict(value)


def load_tiers(path: Path) -> Tiers:
    """Read ``ci_tiers.json``; a ConfigError naming the file (and line) says what is wrong."""
    data = read_json_file(path, missing="--tier: no tiers file (ci_tiers.json next to the scenarios folder)")
    if not isinstance(data, dict) or not isinstance(data.get("tiers"), dict) or not data["tiers"]:
        raise ConfigError(
            'expected {"tiers": {NAME: {"scenarios": [...]}, ...}, "excluded": {...}}', path=str(path)
        )
    unknown = sorted(set(data) - {"tiers", "excluded", "description", "lanes", "benchmarks"})
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)}", path=str(path))
    tiers: dict[str, Tier] = {}
    for name, raw in data["tiers"].items():
        where = f"tiers.{name}"
        if not isinstance(raw, dict) or "scenarios" not in raw:
            raise ConfigError(f'{where} must be an object with "scenarios"', path=str(path))
        extra = sorted(set(raw) - {"description", "scenarios"})
        if extra:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(extra)}", path=str(path))
        listed = raw["scenarios"]
        reasons: dict[str, str] = {}
        if name in REASONED_TIERS or isinstance(listed, dict):
            reasons = _reasons(listed, f"{where}.scenarios", path)
            ids = list(reasons)
        elif isinstance(listed, list) and all(isinstance(s, str) and s for s in listed):
            ids = list(listed)
        else:
            raise ConfigError(f"{where}.scenarios must be a list of scenario ids", path=str(path))
        dup = next((s for s in ids if ids.count(s) > 1), None)
        if dup is not None:
            raise ConfigError(f"{where}.scenarios lists {dup!r} twice", path=str(path))
        tiers[name] = Tier(name, str(raw.get("description", "")), tuple(ids), reasons)
    excluded = _reasons(data.get("excluded", {}), "excluded", path)
    for sid in excluded:
        inside = [t.name for t in tiers.values() if sid in t.scenarios]
        if inside:
            raise ConfigError(f"excluded[{sid!r}] is also in tier {inside[0]!r}", path=str(path))
    return Tiers(
        path=path,
        tiers=tiers,
        excluded=excluded,
        controls_lane=_controls_lane(data, path),
        file_jobs=_ci_jobs(data["benchmarks"], path) if "benchmarks" in data else None,
    )


def _ci_jobs(raw: Any, path: Path) -> dict[str, dict[str, CiJob]]:
    """``"benchmarks"``: each job (a registered benchmark with its arguments) in each CI tier it runs in."""
    from assay.evals._registry import available

    if not isinstance(raw, dict):
        raise ConfigError('"benchmarks" must map a benchmark name to its CI tiers', path=str(path))
    known = available()
    jobs: dict[str, dict[str, CiJob]] = {}
    for name, by_tier in raw.items():
        if name == "description":
            continue
        if not isinstance(by_tier, dict) or not by_tier:
            raise ConfigError(f"benchmarks.{name} must map a CI tier to its job", path=str(path))
        benchmark = by_tier.get("benchmark", name)
        if benchmark not in known:
            raise ConfigError(
                f"benchmarks.{name}: unknown benchmark {benchmark!r} (known: {', '.join(sorted(known))})",
                path=str(path),
            )
        jobs[name] = {}
        for tier, job in by_tier.items():
            if tier == "benchmark":
                continue
            where = f"benchmarks.{name}.{tier}"
            if tier not in CI_TIERS:
                raise ConfigError(f"{where}: unknown CI tier (known: {', '.join(CI_TIERS)})", path=str(path))
            if not isinstance(job, dict):
                raise ConfigError(f"{where} must be an object with args and reason", path=str(path))
            extra = sorted(set(job) - {"args", "reason", "baseline"})
            if extra:
                raise ConfigError(f"{where}: unknown key(s) {', '.join(extra)}", path=str(path))
            args = job.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) and a for a in args):
                raise ConfigError(f"{where}.args must be a list of strings", path=str(path))
            owned = [a for a in args if a.split("=", 1)[0] in _PLAN_OWNED_ARGS]
            if owned:
                raise ConfigError(
                    f"{where}.args: {owned[0]} is set by `assay ci plan`, not by the tiers file",
                    path=str(path),
                )
            reason = job.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                raise ConfigError(f"{where}.reason: say why it runs in this tier", path=str(path))
            baseline = job.get("baseline")
            if baseline is not None and (not isinstance(baseline, str) or not baseline):
                raise ConfigError(f"{where}.baseline must be a path", path=str(path))
            jobs[name][tier] = CiJob(name, benchmark, tier, tuple(args), reason.strip(), baseline)
    return jobs


def registry_ci_jobs() -> dict[str, dict[str, CiJob]]:
    """Every registered benchmark's own CI jobs (``Benchmark.ci_jobs``), checked as a tiers file's are."""
    from assay.evals._registry import available, get_benchmark

    raw: dict[str, Any] = {}
    for name in available():
        try:
            cls = get_benchmark(name)
        except ImportError:  # an optional dependency missing: its jobs cannot run here either
            continue
        for job, by_tier in cls.ci_jobs.items():
            raw[job] = {"benchmark": name, **by_tier}
    return _ci_jobs(raw, Path(f"the benchmark registry ({', '.join(available())})"))


def _controls_lane(data: dict[str, Any], path: Path) -> ControlsLane | None:
    lanes = data.get("lanes", {})
    if not isinstance(lanes, dict):
        raise ConfigError('"lanes" must map a lane name to its settings', path=str(path))
    unknown = sorted(set(lanes) - set(LANES))
    if unknown:
        raise ConfigError(
            f"lanes: unknown lane(s) {', '.join(unknown)} (known: {', '.join(LANES)})", path=str(path)
        )
    raw = lanes.get("controls")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError("lanes.controls must be an object", path=str(path))
    extra = sorted(set(raw) - {"description", "judge_models", "repeats", "records"})
    if extra:
        raise ConfigError(f"lanes.controls: unknown key(s) {', '.join(extra)}", path=str(path))
    models = raw.get("judge_models")
    if not isinstance(models, list) or not models or not all(isinstance(m, str) and m for m in models):
        raise ConfigError(
            "lanes.controls.judge_models must be a non-empty list of model specs", path=str(path)
        )
    repeats = raw.get("repeats", 3)
    if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 2:
        raise ConfigError("lanes.controls.repeats must be an integer of 2 or more", path=str(path))
    records = raw.get("records")
    if records is not None and (not isinstance(records, str) or not records):
        raise ConfigError("lanes.controls.records must be a folder path", path=str(path))
    return ControlsLane(str(raw.get("description", "")), tuple(models), repeats, records)


def coverage_problems(tiers: Tiers, scenario_ids: Iterable[str]) -> list[str]:
    """What keeps the tiers from covering the suite: a scenario in no tier and not excluded, or an id a tier
    (or ``excluded``) names that is no scenario."""
    ids = set(scenario_ids)
    named = {s for t in tiers.tiers.values() for s in t.scenarios} | set(tiers.excluded)
    problems = [f"scenario {sid!r} is in no tier and not excluded" for sid in sorted(ids - named)]
    for tier in tiers.tiers.values():
        problems += [
            f"tier {tier.name!r} names {s!r}, which is no scenario" for s in tier.scenarios if s not in ids
        ]
    problems += [f"excluded names {s!r}, which is no scenario" for s in tiers.excluded if s not in ids]
    return problems
