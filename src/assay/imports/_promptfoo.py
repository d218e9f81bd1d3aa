"""promptfoo results (``promptfoo eval -o results.json``, results version 3): each test × prompt × provider an
attempt, its assertions' pass and score, its named metrics; a provider error INFRA_ERROR, never FAIL."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from assay.imports._model import ForeignFileError, Imported
from assay.runs import Attempt, ErrorInfo, MetricSpec, Status, Usage

EXPECTED = "a promptfoo results file (promptfoo eval -o results.json, results version 3)"
#: promptfoo's ResultFailureReason: 0 none, 1 an assertion failed, 2 the provider (or the eval) errored
_ERROR = 2


def _when(text: Any) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def read_promptfoo(paths: list[Path]) -> Imported:
    if len(paths) != 1:
        raise ForeignFileError(
            " ".join(map(str, paths)), "one promptfoo results file; import each on its own"
        )
    path = paths[0]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ForeignFileError(path, f"{EXPECTED}: {type(exc).__name__}") from None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, dict) or not isinstance(results.get("results"), list):
        raise ForeignFileError(path, f"{EXPECTED}: it has no results.results list")
    if results.get("version") != 3:
        raise ForeignFileError(path, f"{EXPECTED}: it says results version {results.get('version')!r}")
    started = _when(results.get("timestamp")) or datetime.fromtimestamp(path.stat().st_mtime, UTC)
    config = data.get("config") or {}
    attempts: list[Attempt] = []
    cases: dict[str, str] = {}
    seen: dict[str, int] = {}
    metric_names: set[str] = set()
    providers: set[str] = set()
    for row in results["results"]:
        try:
            provider = row.get("provider") or {}
            label = str(provider.get("label") or provider.get("id") or "provider")
            case_id = f"test{int(row['testIdx'])}.prompt{int(row['promptIdx'])}.{label}"
        except (AttributeError, KeyError, TypeError, ValueError):
            raise ForeignFileError(
                path, f"{EXPECTED}: a result without testIdx, promptIdx and provider"
            ) from None
        providers.add(str(provider.get("id") or label))
        cases.setdefault(case_id, label)
        it = seen[case_id] = seen.get(case_id, -1) + 1  # promptfoo --repeat: the repeats in order
        tokens = row.get("tokenUsage") or {}
        base: dict[str, Any] = {
            "case_id": case_id,
            "iteration": it,
            "category": label,
            "started_at": started,
            "elapsed_s": float(row.get("latencyMs") or 0) / 1000,
            "usage": Usage(
                input_tokens=int(tokens.get("prompt") or 0), output_tokens=int(tokens.get("completion") or 0)
            ),
            "details": {"vars": row.get("vars"), "output": (row.get("response") or {}).get("output")},
        }
        if row.get("failureReason") == _ERROR:
            message = str(row.get("error") or "provider error")
            # an error of the provider (rate limit, auth, a command that failed) is not the subject being worse
            attempts.append(
                Attempt(
                    **base,
                    status=Status.INFRA_ERROR,
                    error=ErrorInfo(type="ProviderError", message=message[:2000]),
                )
            )
            continue
        named = {
            str(k): float(v) for k, v in (row.get("namedScores") or {}).items() if isinstance(v, int | float)
        }
        metric_names |= set(named)
        score = row.get("score")
        attempts.append(
            Attempt(
                **base,
                status=Status.PASS if row.get("success") else Status.FAIL,
                score=min(max(float(score), 0.0), 1.0) if isinstance(score, int | float) else None,
                metrics=named,
                error=None
                if row.get("success")
                else ErrorInfo(type="AssertionFailed", message=str(row.get("error"))[:2000]),
            )
        )
    stats = results.get("stats") or {}
    duration = stats.get("durationMs")
    meta = data.get("metadata") or {}
    model = ", ".join(sorted(providers)) or None
    scorers = sorted(metric_names)
    return Imported(
        tool="promptfoo",
        tool_version=str(meta.get("promptfooVersion") or "unknown"),
        task=str(config.get("description") or "promptfoo"),
        task_version=f"{len({c.split('.')[0] for c in cases})} tests (metrics: {', '.join(scorers)})",
        model=model,
        subject=model,
        scorers=scorers,
        attempts=attempts,
        cases=list(cases.items()),
        iterations=max(seen.values(), default=0) + 1,
        started_at=started,
        finished_at=started + timedelta(milliseconds=duration) if isinstance(duration, int | float) else None,
        metric_specs=[MetricSpec(name=m, kind="proportion") for m in scorers],
        provenance={"promptfoo_eval_id": data.get("evalId"), "node": meta.get("nodeVersion")},
        notes=[
            "a provider error (rate limit, auth, a failed command) is INFRA_ERROR: not measured, never a FAIL"
        ],
    )
