"""Expectations of ``eval tasks``: ``eval/tasks/expectations/<model>.<suite>.json``, gated by ``assay.gate``.

The limits, their check and the headroom of ``propose`` (one task may flip, one more change unverified,
quality -0.5, tokens and steps +35%, wall time +50%) are the gate's own (:func:`assay.gate.gate`,
:func:`assay.gate.propose`); this module only says where a model and suite's file lives and adds the
``measured_on`` block (the commits and machines the limits were measured on), which a tasks expectations file
must carry, and the ``tasks`` block (each task's measured results over those runs: attempts, passed,
verified, misreported), which a run's report shows beside its own (:func:`side_by_side`). A model and suite
with no file are "not gated yet"; a file named with ``--expect`` that does not exist is an error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.gate import Expectations, GateResult, gate, load_expectations, load_run, propose
from assay.runs import Scorecard

__all__ = [
    "DEFAULT_EXPECTATIONS_DIR",
    "ENV_EXPECTATIONS_DIR",
    "TasksGate",
    "expectations_path",
    "gate_tasks",
    "load_tasks_expectations",
    "propose_tasks",
    "side_by_side",
    "task_results",
]

DEFAULT_EXPECTATIONS_DIR = Path("eval") / "tasks" / "expectations"
ENV_EXPECTATIONS_DIR = "ASSAY_TASKS_EXPECTATIONS_DIR"


def expectations_dir() -> Path:
    return Path(os.environ.get(ENV_EXPECTATIONS_DIR) or DEFAULT_EXPECTATIONS_DIR)


def model_label(model: str | None) -> str:
    """The file-name form of a model spec: its name without the ``@URL`` of an endpoint, path-safe."""
    name = (model or "unknown").partition("@")[0]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "unknown"


def expectations_path(model: str | None, suite: str, directory: Path | None = None) -> Path:
    return (directory or expectations_dir()) / f"{model_label(model)}.{suite}.json"


def load_tasks_expectations(path: Path) -> tuple[Expectations, list[dict[str, Any]]]:
    """The gate's expectations plus their ``measured_on`` entries; ConfigError naming the file without them."""
    exp = load_expectations(path)
    data = json.loads(path.read_text(encoding="utf-8")) if path.suffix == ".json" else {}
    measured_on = data.get("measured_on") if isinstance(data, dict) else None
    if not isinstance(measured_on, list) or not measured_on:
        raise ConfigError(
            "measured_on: missing; a tasks expectations file says which commit and machine its limits were "
            "measured on (write it with `assay eval tasks propose`)",
            path=str(path),
        )
    for i, entry in enumerate(measured_on):
        if not isinstance(entry, dict) or not entry.get("commit") or not entry.get("machine"):
            raise ConfigError(f"measured_on[{i}]: needs a commit and a machine", path=str(path))
    return exp, measured_on


@dataclass
class TasksGate:
    result: GateResult
    measured_on: list[dict[str, Any]]
    proposed: Path | None = None


def gate_tasks(
    run_dir: Path,
    expect: Path | None = None,
    *,
    enforce: bool = False,
    propose_out: Path | None = None,
) -> TasksGate:
    """Gate one tasks run against its expectations (``expect``, else the model and suite's file)."""
    run = load_run(run_dir)
    sc = run.scorecard
    if sc.benchmark != "tasks":
        raise ConfigError(f"a {sc.benchmark} run, not an eval tasks run", path=str(run_dir))
    if expect is not None and not Path(expect).is_file():
        raise ConfigError("--expect: expectations file not found", path=str(expect))
    path = Path(expect) if expect is not None else expectations_path(sc.config.model, sc.suite)
    measured_on: list[dict[str, Any]] = []
    if path.is_file():
        measured_on = load_tasks_expectations(path)[1]
        result = gate(run, expect=path, enforce=enforce)
    else:
        result = gate(run, enforce=enforce, search_dirs=[]).model_copy(
            update={
                "reason": f"not gated yet: no expectations for model {sc.config.model} and suite {sc.suite} "
                f"({path}; write one with `assay eval tasks propose {run_dir} --out {path}`)"
            }
        )
    proposed = propose_tasks([run_dir], propose_out) if propose_out is not None else None
    return TasksGate(result=result, measured_on=measured_on, proposed=proposed)


def propose_tasks(run_dirs: Sequence[Path], out: Path) -> Path:
    """Write limits every run met (the worst of them, widened by the gate's headroom), with ``measured_on``."""
    if Path(out).suffix != ".json":
        raise ConfigError("--out: a tasks expectations file is JSON (<model>.<suite>.json)", path=str(out))
    for d in run_dirs:
        sc = load_run(d).scorecard
        if sc.benchmark != "tasks":
            raise ConfigError(f"a {sc.benchmark} run, not an eval tasks run", path=str(d))
    exp = propose(list(run_dirs), out)
    measured_on = [
        {"run_id": m.run_id, "commit": m.commit or "unknown", "machine": m.machine or "unknown"}
        for m in exp.measured
    ]
    per_task = task_results([load_run(d).scorecard for d in run_dirs])
    data = {**exp.model_dump(mode="json"), "measured_on": measured_on, "tasks": per_task}
    from assay.runs.rundir import write_artifact

    write_artifact(Path(out), json.dumps(data, indent=2) + "\n")
    return Path(out)


_PER_TASK = ("attempts", "passed", "verified", "misreported")


def task_results(scorecards: Sequence[Scorecard]) -> dict[str, dict[str, int]]:
    """Each task's measured results summed over ``scorecards``: attempts, passed, verified, misreported."""
    out: dict[str, dict[str, int]] = {}
    for sc in scorecards:
        for c in sc.cases:
            t = out.setdefault(c.case_id, dict.fromkeys(_PER_TASK, 0))
            t["attempts"] += c.measured
            t["passed"] += c.passed
            for name in ("verified", "misreported"):
                t[name] += round(c.metrics.get(name, 0.0) * c.measured)
    return dict(sorted(out.items()))


def _cell(t: dict[str, int] | None, name: str) -> str:
    if t is None or not t.get("attempts"):
        return "-"
    return f"{t[name]}/{t['attempts']}" if name == "passed" else str(t[name])


def side_by_side(sc: Scorecard, directory: Path | None = None) -> str:
    """The run's per-task results beside main's, from the model and suite's expectations file (markdown)."""
    path = expectations_path(sc.config.model, sc.suite, directory)
    head = "### Beside main's measured results\n\n"
    if not path.is_file():
        return head + (
            f"No expectations for model {sc.config.model} and suite {sc.suite} ({path}): nothing measured on "
            "main to show beside this run.\n"
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    main = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(main, dict) or not main:
        return head + f"{path} holds no per-task results (write it again with `assay eval tasks propose`).\n"
    ours = task_results([sc])
    where = ", ".join(
        sorted(
            {
                f"{str(m.get('commit', '?'))[:10]} on {m.get('machine', '?')}"
                for m in data.get("measured_on") or []
            }
        )
    )
    lines = [
        head
        + f"main: `{path}`, measured over {len(data.get('measured_on') or [])} run(s) ({where or 'unknown'}).",
        "",
        "| task | passed | main passed | verified | main verified | misreported | main misreported |",
        "|---|---|---|---|---|---|---|",
    ]
    for task in sorted(set(ours) | set(main)):
        a, b = ours.get(task), main.get(task)
        cells = [_cell(x, n) for n in ("passed", "verified", "misreported") for x in (a, b)]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
