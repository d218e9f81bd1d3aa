"""``assay export inspect``: an assay run as an Inspect AI log, written with Inspect's own writer, so Inspect
users read assay's runs in ``inspect view``. Each attempt is a sample × epoch; its status is the ``assay``
score (C for PASS, I for FAIL, ERROR and TIMEOUT), its metrics further scores; an unmeasured attempt has none."""

from __future__ import annotations

from pathlib import Path

from assay.errors import ConfigError, MissingDependencyError
from assay.runs import MEASURED_STATUSES, Status, latest_attempts, load_meta, load_scorecard, read_journal
from assay.runs.rundir import JOURNAL


def export_inspect(run_dir: Path, out: Path) -> Path:
    """Write ``run_dir`` as an Inspect log at ``out`` (``.eval`` or ``.json``, as Inspect's writer takes them)."""
    try:
        from inspect_ai.log import (
            EvalConfig,
            EvalDataset,
            EvalError,
            EvalLog,
            EvalMetric,
            EvalResults,
            EvalSample,
            EvalScore,
            EvalSpec,
            EvalStats,
            write_eval_log,
        )
        from inspect_ai.scorer import Score
    except ImportError:
        raise MissingDependencyError("inspect-ai", "inspect") from None
    if out.suffix not in (".eval", ".json"):
        raise ConfigError("expected a file ending .eval or .json (an Inspect log)", path=f"--out {out}")
    if out.exists():
        raise ConfigError("already exists; pass a new file", path=f"--out {out}")
    meta, card = load_meta(run_dir), load_scorecard(run_dir)
    attempts = sorted(
        latest_attempts(read_journal(run_dir / JOURNAL)).values(), key=lambda a: (a.iteration, a.case_id)
    )
    samples = []
    for a in attempts:
        scores = {}
        if a.status in MEASURED_STATUSES:
            scores["assay"] = Score(value="C" if a.status is Status.PASS else "I", explanation=a.status.value)
            scores |= {name: Score(value=value) for name, value in a.metrics.items()}
        error = None
        if a.error is not None and a.status in (
            Status.ERROR,
            Status.TIMEOUT,
        ):  # the subject's, never an outage
            error = EvalError(message=f"{a.error.type}: {a.error.message}", traceback="", traceback_ansi="")
        samples.append(
            EvalSample(
                id=a.case_id,
                epoch=a.iteration + 1,
                input=a.case_id,
                target="",
                scores=scores,
                error=error,
                metadata={"status": a.status.value, "category": a.category, "skip_reason": a.skip_reason},
                total_time=a.elapsed_s,
            )
        )
    s = card.summary
    measured = [a for a in attempts if a.status in MEASURED_STATUSES]
    log = EvalLog(
        status="success" if card.complete else "cancelled",
        eval=EvalSpec(
            created=meta.started_at.isoformat(),
            task=f"{meta.benchmark}/{meta.suite}",
            task_version=meta.suite_version,
            run_id=meta.run_id,
            dataset=EvalDataset(name=meta.suite, samples=len(meta.case_ids), sample_ids=list(meta.case_ids)),
            model=meta.config.model or "none",
            config=EvalConfig(epochs=meta.iterations),
            packages={"assay": meta.assay_version},
            metadata={"assay_run_id": meta.run_id, "subject": meta.config.subject},
        ),
        results=EvalResults(
            total_samples=len(attempts),
            completed_samples=len(measured),
            scores=[
                EvalScore(
                    name="assay",
                    scorer="assay",
                    scored_samples=len(measured),
                    metrics={"accuracy": EvalMetric(name="accuracy", value=s.pass_rate or 0.0)},
                )
            ],
        ),
        stats=EvalStats(
            started_at=meta.started_at.isoformat(),
            completed_at=meta.finished_at.isoformat() if meta.finished_at else "",
        ),
        samples=samples,
    )
    write_eval_log(log, str(out))
    return out
