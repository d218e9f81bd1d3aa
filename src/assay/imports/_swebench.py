"""SWE-bench harness results: its run summary (``<model>.<run_id>.json`` from ``make_run_report``) and,
optionally, per-instance ``report.json`` files. Resolved is PASS, unresolved and an empty patch FAIL, a run
that broke ERROR, an instance not submitted NOT_RUN."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.imports._model import ForeignFileError, Imported
from assay.runs import Attempt, ErrorInfo, MetricSpec, Status

EXPECTED = "a SWE-bench run summary (make_run_report's <model>.<run_id>.json, schema_version 2)"
REPORT = "a SWE-bench report.json ({instance_id: {resolved, tests_status}})"
_KEYS = ("resolved_ids", "unresolved_ids", "error_ids")


def _json(path: Path, expected: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ForeignFileError(path, f"{expected}: {type(exc).__name__}") from None


def _tests_metrics(entry: dict[str, Any]) -> dict[str, float]:
    """The share of FAIL_TO_PASS and PASS_TO_PASS tests that passed, where the report lists them."""
    out = {}
    for group, name in (("FAIL_TO_PASS", "fail_to_pass"), ("PASS_TO_PASS", "pass_to_pass")):
        got = (entry.get("tests_status") or {}).get(group) or {}
        ok, bad = len(got.get("success") or []), len(got.get("failure") or [])
        if ok + bad:
            out[name] = ok / (ok + bad)
    return out


def read_swebench(paths: list[Path]) -> Imported:
    summary_path, reports = paths[0], paths[1:]
    summary = _json(summary_path, EXPECTED)
    if not isinstance(summary, dict) or any(not isinstance(summary.get(k), list) for k in _KEYS):
        raise ForeignFileError(summary_path, f"{EXPECTED}: it has no {', '.join(_KEYS)} lists")
    version = summary.get("schema_version", 2)
    if version != 2:
        raise ForeignFileError(summary_path, f"{EXPECTED}: it says schema_version {version!r}")
    per_instance: dict[str, dict[str, Any]] = {}
    for path in reports:
        data = _json(path, REPORT)
        if not isinstance(data, dict) or not all(
            isinstance(v, dict) and "resolved" in v for v in data.values()
        ):
            raise ForeignFileError(path, REPORT)
        per_instance.update(data)
    when = datetime.fromtimestamp(summary_path.stat().st_mtime, UTC).replace(microsecond=0)
    outcome: dict[str, tuple[Status, str]] = {}
    for iid in summary.get("incomplete_ids") or []:
        outcome[iid] = (Status.NOT_RUN, "not submitted")
    for iid in summary.get("empty_patch_ids") or []:
        outcome[iid] = (Status.FAIL, "empty patch")
    for key, status, why in (
        ("error_ids", Status.ERROR, "the harness found no report (the evaluation broke)"),
        ("unresolved_ids", Status.FAIL, "unresolved"),
        ("resolved_ids", Status.PASS, "resolved"),
    ):
        for iid in summary[key]:
            outcome[iid] = (status, why)
    for iid in summary.get("submitted_ids") or []:
        outcome.setdefault(iid, (Status.NOT_RUN, "submitted, with no outcome in the summary"))
    attempts = []
    metric_names: set[str] = set()
    for iid, (status, why) in sorted(outcome.items()):
        metrics = _tests_metrics(per_instance.get(iid, {}))
        metric_names |= set(metrics)
        attempts.append(
            Attempt(
                case_id=iid,
                status=status,
                started_at=when,
                score=None if status in (Status.NOT_RUN, Status.ERROR) else float(status is Status.PASS),
                metrics=metrics,
                error=ErrorInfo(type="HarnessError", message=why) if status is Status.ERROR else None,
                skip_reason=why if status is Status.NOT_RUN else None,
                details={"outcome": why, **({"report": per_instance[iid]} if iid in per_instance else {})},
            )
        )
    # the harness names the summary <model with / as __>.<run_id>.json
    model_part, _, run_id = summary_path.name.removesuffix(".json").rpartition(".")
    model = model_part.replace("__", "/") if model_part else None
    return Imported(
        tool="swebench",
        tool_version=f"summary schema {version}",
        task="swebench",
        task_version="resolved",
        model=model,
        subject=model,
        scorers=["resolved"],
        attempts=attempts,
        cases=[(iid, "default") for iid in sorted(outcome)],
        iterations=1,
        started_at=when,
        status=None,
        metric_specs=[MetricSpec(name=m, kind="proportion") for m in sorted(metric_names)],
        provenance={"swebench_run_id": run_id or None, "total_instances": summary.get("total_instances")},
        notes=[
            "resolved is PASS; unresolved and an empty patch FAIL; an evaluation that broke ERROR; "
            "an instance not submitted NOT_RUN"
        ],
    )
