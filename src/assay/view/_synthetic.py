"""Synthetic run directories for load tests: written by the real writers (journal, meta, scorecard fold).

The attempts are agent-shaped (a short conversation with tool calls, code checks, a judgement) so a case
page costs what a real one does. Deterministic for a seed.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from assay import __version__
from assay._util import Scrubber
from assay.runs import Attempt, Journal, MetricSpec, RunMeta, Status, SubjectConfig
from assay.runs.rundir import JOURNAL, META, SCORECARD, write_model
from assay.stats import fold

SPECS = [
    MetricSpec(name="judged_score", kind="continuous"),
    MetricSpec(name="code_checks_passed", kind="proportion"),
]


def _details(rng: random.Random, case_id: str, passed: bool) -> dict[str, object]:
    turns = []
    for i in range(1, 3):
        call = {
            "name": "query_documents",
            "kind": "documents",
            "arguments": {"query": f"{case_id} part {i}"},
            "result_summary": "doc.md#1 doc.md#2",
            "status": "ok",
        }
        turns.append(
            {
                "index": i,
                "objective": f"objective {i} of {case_id}",
                "messages": [
                    {"role": "user", "text": f"question {i} about {case_id} " * 4, "tool_calls": []},
                    {"role": "assistant", "text": "an answer with some detail. " * 8, "tool_calls": [call]},
                ],
            }
        )
    checks = [{"name": "expected_tool", "passed": True, "detail": "query_documents was called", "turn": None}]
    scores = {"correctness": 1.0 if passed else 0.0, "grounding": rng.random(), "helpfulness": rng.random()}
    judgement = {
        "passed": passed,
        "score": sum(scores.values()) / 3,
        "judge_said": "PASS" if passed else "FAIL",
        "turns": [{"turn": 1, "score": 0.8, "passed": passed, "scores": scores, "reasons": ["synthetic"]}],
        "reason": "synthetic",
    }
    return {
        "scenario": case_id,
        "turns": turns,
        "checks": checks,
        "judgement": judgement,
        "ended_by": "objectives_done",
    }


def write_synthetic_run(
    out: Path, attempts: int, iterations: int = 1, seed: int = 0, finish: bool = True
) -> Path:
    """A run of ``attempts`` attempts (``attempts // iterations`` cases); without ``finish``, no scorecard
    (a run in progress) and only half the attempts."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=False)
    n_cases = max(1, attempts // iterations)
    ids = [f"case-{i:05d}" for i in range(n_cases)]
    start = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=seed)
    meta = RunMeta(
        run_id=out.name,
        benchmark="agent",
        suite="synthetic",
        suite_version="1",
        assay_version=__version__,
        hostname="host.example",
        os="Linux",
        cpu_count=1,
        python="3.11",
        command_line=["assay", "eval", "agent"],
        config=SubjectConfig(
            subject="reference", model="scripted:synthetic", judge_model="scripted:synthetic"
        ),
        options={},
        seed=seed,
        iterations=iterations,
        case_ids=ids,
        started_at=start,
    )
    scrubber = Scrubber({})
    write_model(out / META, meta, scrubber)
    records = []
    with Journal(out / JOURNAL, scrubber) as journal:
        for k, cid in enumerate(ids):
            for it in range(iterations):
                if not finish and k >= n_cases // 2:
                    break
                passed = rng.random() < 0.8
                att = Attempt(
                    case_id=cid,
                    iteration=it,
                    category=f"cat-{k % 7}",
                    status=Status.PASS if passed else Status.FAIL,
                    score=1.0 if passed else 0.3,
                    metrics={"judged_score": 1.0 if passed else 0.3, "code_checks_passed": 1.0},
                    started_at=start + timedelta(seconds=k),
                    elapsed_s=rng.uniform(0.5, 3.0),
                    details=_details(rng, cid, passed),
                )
                journal.append(att)
                records.append(att)
    if finish:
        write_model(out / SCORECARD, fold(records, meta, metric_specs=SPECS), scrubber)
    return out
