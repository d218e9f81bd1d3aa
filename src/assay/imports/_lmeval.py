"""lm-evaluation-harness results: ``results_*.json`` and, where present, its ``samples_*.jsonl`` (``--log_samples``).

With samples each document is an attempt (a pass where its first 0/1 metric, ``acc`` or ``exact_match``, is 1)
and every comparison is paired by document. Without them the run carries the aggregate metrics with their
stderr (a stderr of "N/A" is unknown) and no items: a comparison that needs items has none to pair.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.imports._model import ForeignFileError, Imported
from assay.runs import Attempt, MetricSpec, MetricValue, Status

EXPECTED = "an lm-evaluation-harness results file (results_*.json with results, configs and versions)"
SAMPLES = "an lm-evaluation-harness samples file (samples_<task>_*.jsonl, one document per line)"
Z95 = 1.959964


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None  # lm-eval writes "N/A" for a stderr it could not compute: unknown, not zero
    return float(value)


def _aggregates(results: dict[str, Any], data: dict[str, Any]) -> dict[str, MetricValue]:
    """Each task's metrics (``acc,none``) as run-level values, their interval from the stderr lm-eval gives."""
    out: dict[str, MetricValue] = {}
    better = data.get("higher_is_better") or {}
    sizes = data.get("n-samples") or {}
    for task, metrics in sorted(results.items()):
        n = int((sizes.get(task) or {}).get("effective") or 0)
        for key, raw in metrics.items():
            name, _, filt = key.partition(",")
            value = _number(raw)
            # metrics are "name,filter" (acc,none); "alias", "sample_len" and the like are not metrics
            if value is None or not filt or name.endswith("_stderr"):
                continue
            stderr = _number(metrics.get(f"{name}_stderr,{filt}"))
            higher = (better.get(task) or {}).get(name, True)
            out[f"{task}/{name}" + (f",{filt}" if filt and filt != "none" else "")] = MetricValue(
                value=value,
                low=None if stderr is None else value - Z95 * stderr,
                high=None if stderr is None else value + Z95 * stderr,
                n=n,
                kind="proportion" if 0.0 <= value <= 1.0 and n else "continuous",
                direction="higher" if higher else "lower",
                gated=stderr is not None,
            )
    return out


def _samples(path: Path, tasks: list[str]) -> tuple[str, list[dict[str, Any]]]:
    task = next(
        (t for t in sorted(tasks, key=len, reverse=True) if path.name.startswith(f"samples_{t}_")), None
    )
    if task is None:
        raise ForeignFileError(path, f"{SAMPLES} of one of the results' tasks ({', '.join(tasks)})")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            _ = row["doc_id"], row["metrics"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ForeignFileError(f"{path}:{n}", SAMPLES) from None
        rows.append(row)
    return task, rows


def _pass_metric(names: list[str], metrics: dict[str, float], threshold: float | None, where: str) -> str:
    """The metric a document passes on: its first 0/1 metric (acc, exact_match) or, with ``--pass-threshold``,
    its first numeric one. A document with no such metric is refused: no pass can be read from it."""
    if threshold is not None:
        found = next((m for m in names if m in metrics), None)
    else:
        found = next((m for m in names if metrics.get(m) in (0.0, 1.0)), None)
    if found is None:
        raise ForeignFileError(
            where,
            f"a document with a 0/1 metric to pass on (its metrics: {', '.join(names) or 'none'}); give "
            "--pass-threshold to pass on the first numeric one",
        )
    return found


def _model_of(config: dict[str, Any]) -> str | None:
    """The model lm-eval ran: ``pretrained=``/``model=`` of its model args, else the model type (``hf``...)."""
    args = config.get("model_args")
    pairs = (
        dict(p.split("=", 1) for p in args.split(",") if "=" in p) if isinstance(args, str) else (args or {})
    )
    named = pairs.get("pretrained") or pairs.get("model") if isinstance(pairs, dict) else None
    return str(named or config.get("model") or "") or None


def read_lmeval(paths: list[Path], pass_threshold: float | None = None) -> Imported:
    results_path, sample_paths = paths[0], paths[1:]
    try:
        data = json.loads(results_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ForeignFileError(results_path, f"{EXPECTED}: {type(exc).__name__}") from None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), dict) for k in ("results", "versions")):
        raise ForeignFileError(results_path, f"{EXPECTED}: it has no results and versions")
    results: dict[str, Any] = data["results"]
    tasks = sorted(results)
    config = data.get("config") or {}
    stamp = _number(data.get("date"))
    started = (
        datetime.fromtimestamp(stamp, UTC)
        if stamp
        else datetime.fromtimestamp(results_path.stat().st_mtime, UTC)
    )
    attempts: list[Attempt] = []
    cases: list[tuple[str, str]] = []
    names: dict[str, set[bool]] = {}
    for path in sample_paths:
        task, rows = _samples(path, tasks)
        for row in rows:
            case_id = f"{task}/{row['doc_id']}"
            metrics = {m: v for m in row["metrics"] if (v := _number(row.get(m))) is not None}
            for m, v in metrics.items():
                names.setdefault(m, set()).add(v in (0.0, 1.0))
            first = _pass_metric(row["metrics"], metrics, pass_threshold, f"{path} (doc_id {row['doc_id']})")
            value = metrics[first]
            line = 1.0 if pass_threshold is None else pass_threshold
            cases.append((case_id, task))
            attempts.append(
                Attempt(
                    case_id=case_id,
                    category=task,
                    status=Status.PASS if value >= line - 1e-9 else Status.FAIL,
                    score=value if 0.0 <= value <= 1.0 else None,
                    metrics=metrics,
                    started_at=started,
                    details={"target": row.get("target"), "filter": row.get("filter")},
                )
            )
    no_items = None
    if not sample_paths:
        no_items = (
            "lm-eval aggregate metrics only (no samples_*.jsonl); run lm-eval with --log_samples and import the "
            "samples files too"
        )
    model = _model_of(config)
    versions = ", ".join(f"{t} v{data['versions'].get(t)}" for t in tasks)
    return Imported(
        tool="lm-eval",
        tool_version=str(data.get("lm_eval_version") or "unknown"),
        task="+".join(tasks),
        task_version=f"{versions}; n-shot {json.dumps(data.get('n-shot') or {}, sort_keys=True)}",
        model=str(model) if model else None,
        subject=str(config.get("model") or "") or None,
        scorers=sorted(
            {k.split(",")[0] for m in results.values() for k in m if "," in k and "_stderr" not in k}
        ),
        attempts=attempts,
        cases=cases,
        iterations=1,
        started_at=started,
        metric_specs=[
            MetricSpec(name=m, kind="proportion" if all(b) else "continuous")
            for m, b in sorted(names.items())
        ],
        run_metrics={} if sample_paths else _aggregates(results, data),
        provenance={"model_args": config.get("model_args"), "git_hash": data.get("git_hash")},
        no_items=no_items,
    )
