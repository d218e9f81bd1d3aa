"""Inspect AI logs (``.eval`` and ``.json``), read with Inspect's own reader: each sample × epoch an attempt."""

from __future__ import annotations

import math
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.errors import MissingDependencyError
from assay.imports._model import ForeignFileError, Imported
from assay.runs import Attempt, ErrorInfo, MetricSpec, Status, Usage

EXPECTED = "an Inspect AI log (.eval or .json, as `inspect eval` writes)"


def _when(text: str | None, default: datetime) -> datetime:
    if not text:
        return default
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return default
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _values(score: Any, to_float: Any) -> dict[str, float]:
    """A score's value(s) as numbers, as Inspect's ``value_to_float`` maps them (C 1, P 0.5, I and N 0);
    a dict value gives one number per key (``scorer.key``), a value no number can stand for gives none."""
    value = score.value
    if isinstance(value, dict):
        return {k: v for k, v in ((k, _one(x, to_float)) for k, x in value.items()) if v is not None}
    one = _one(value, to_float)
    return {} if one is None else {"": one}


def _one(value: Any, to_float: Any) -> float | None:
    if value is None or isinstance(value, list):
        return None
    number = float(to_float(value))
    return number if math.isfinite(number) else None


def _why(exc: Exception) -> str:
    """One line saying why the reader refused a file (a schema error names its first missing field)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"


def _error_type(message: str) -> str:
    head = message.split("(", 1)[0].strip()
    return head if head.isidentifier() else "SampleError"


def read_inspect(paths: list[Path], pass_threshold: float | None = None) -> Imported:
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise MissingDependencyError("inspect-ai", "inspect") from None
    if len(paths) != 1:
        raise ForeignFileError(" ".join(map(str, paths)), "one Inspect AI log; import each log on its own")
    path = paths[0]
    try:
        log = read_eval_log(str(path))
        spec = log.eval
        _ = spec.task, spec.dataset, log.status
    except (zipfile.BadZipFile, ValueError, KeyError, TypeError, AttributeError, OSError, EOFError) as exc:
        raise ForeignFileError(path, f"{EXPECTED}: {_why(exc)}") from None
    to_float = value_to_float()
    scorers = [s.name for s in (spec.scorers or [])]
    created = _when(spec.created, datetime.now(UTC))
    epochs = int(getattr(spec.config, "epochs", None) or 1)
    sample_ids = [str(i) for i in (spec.dataset.sample_ids or [])]
    attempts: list[Attempt] = []
    kinds: dict[str, set[bool]] = {}
    seen: set[tuple[str, int]] = set()
    for sample in log.samples or []:
        case_id, it = str(sample.id), int(sample.epoch) - 1
        seen.add((case_id, it))
        if case_id not in sample_ids:
            sample_ids.append(case_id)
        usage = Usage(
            input_tokens=sum(u.input_tokens for u in (sample.model_usage or {}).values()),
            output_tokens=sum(u.output_tokens for u in (sample.model_usage or {}).values()),
        )
        base: dict[str, Any] = {
            "case_id": case_id,
            "iteration": it,
            "started_at": _when(getattr(sample, "started_at", None), created),
            "elapsed_s": float(sample.total_time or 0.0),
            "usage": usage,
            "details": {"target": sample.target, "uuid": getattr(sample, "uuid", None)},
        }
        if sample.error is not None:
            message = sample.error.message
            if message.startswith("CancelledError"):  # stopped with the run, not the subject's failure
                attempts.append(Attempt(**base, status=Status.NOT_RUN, skip_reason=f"cancelled: {message}"))
            else:
                err = ErrorInfo(type=_error_type(message), message=message[:2000])
                attempts.append(Attempt(**base, status=Status.ERROR, error=err))
            continue
        metrics: dict[str, float] = {}
        for name, score in (sample.scores or {}).items():
            for key, value in _values(score, to_float).items():
                metric = f"{name}.{key}" if key else name
                metrics[metric] = value
                kinds.setdefault(metric, set()).add(0.0 <= value <= 1.0)
        primary = next((n for n in scorers if n in metrics), next(iter(metrics), None))
        if primary is None:
            attempts.append(
                Attempt(**base, status=Status.NOT_RUN, skip_reason="the log holds no score for this sample")
            )
            continue
        value = metrics[primary]
        line = 1.0 if pass_threshold is None else pass_threshold
        attempts.append(
            Attempt(
                **base,
                status=Status.PASS if value >= line - 1e-9 else Status.FAIL,
                score=value if 0.0 <= value <= 1.0 else None,
                metrics=metrics,
            )
        )
    for case_id in sample_ids:
        for it in range(epochs):
            if (case_id, it) not in seen:
                attempts.append(
                    Attempt(
                        case_id=case_id,
                        iteration=it,
                        status=Status.NOT_RUN,
                        started_at=created,
                        skip_reason=f"not in the log (the Inspect run ended {log.status})",
                    )
                )
    specs = [
        MetricSpec(name=m, kind="proportion" if all(k) else "continuous") for m, k in sorted(kinds.items())
    ]
    solver = spec.solver or " > ".join(step.solver for step in (log.plan.steps if log.plan else []))
    stats = log.stats
    notes = [f"a {log.status} Inspect log: {log.error.message[:300]}"] if log.error is not None else []
    primary_name = scorers[0] if scorers else "the first score"
    notes.append(
        f"an attempt passes when {primary_name} gives full credit (C, or 1.0)"
        if pass_threshold is None
        else f"an attempt passes when {primary_name} is at least {pass_threshold:g} (--pass-threshold)"
    )
    return Imported(
        tool="inspect",
        tool_version=str((spec.packages or {}).get("inspect_ai", "unknown")),
        task=spec.task,
        task_version=f"{spec.task_version} (scorers: {', '.join(scorers)})",
        model=spec.model,
        subject=solver or None,
        scorers=scorers,
        attempts=attempts,
        cases=[(cid, "default") for cid in sample_ids],
        iterations=epochs,
        started_at=_when(getattr(stats, "started_at", None), created),
        finished_at=_when(stats.completed_at, created) if getattr(stats, "completed_at", None) else None,
        status=log.status,
        metric_specs=specs,
        provenance={
            "inspect_run_id": spec.run_id,
            "inspect_eval_id": spec.eval_id,
            "task_file": spec.task_file,
            "task_args": spec.task_args,
            "model_args": spec.model_args,
            "epochs": epochs,
            "dataset": spec.dataset.name,
        },
        notes=notes,
    )
