"""LongMemEval-format import and the full suite, run with a scripted model and the hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assay.errors import ConfigError
from assay.evals.memory import MemoryBenchmark
from assay.exec import RunOptions, run_benchmark


def _session(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    turns = []
    for user, assistant in pairs:
        turns += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
    return turns


def _lme_file(tmp_path: Path) -> Path:
    filler = _session(
        ("Any tips for houseplants?", "Water less in winter."), ("What about cacti?", "Lots of sun.")
    )
    records = [
        {
            "question_id": "u1",
            "question_type": "single-session-user",
            "question": "Which city did I fly to for the marathon?",
            "answer": "Lisbon",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/20 (Sat) 02:21"],
            "haystack_session_ids": ["s1", "s2"],
            "answer_session_ids": ["s2"],
            "haystack_sessions": [
                filler,
                _session(("I flew to Lisbon for the marathon last week.", "Nice!")),
            ],
        },
        {
            "question_id": "k1",
            "question_type": "knowledge-update",
            "question": "What is my current running shoe brand?",
            "answer": "Hoka",
            "question_date": "2023/07/01 (Sat) 10:00",
            "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/06/10 (Sat) 12:00"],
            "haystack_sessions": [
                _session(("My running shoe brand is Asics.", "Good choice.")),
                _session(("I switched my running shoe brand to Hoka.", "Comfy!")),
            ],
        },
        {
            "question_id": "m1",
            "question_type": "multi-session",
            "question": "What is the name of my tortoise?",
            "answer": "Shelby",
            "question_date": "2023/07/01 (Sat) 10:00",
            "haystack_dates": ["2023/05/01 (Mon) 09:00"],
            "haystack_sessions": [filler],
        },
        {
            "question_id": "m1_abs",
            "question_type": "multi-session",
            "question": "What is the name of my parrot?",
            "answer": "You did not mention a parrot.",
            "question_date": "2023/07/01 (Sat) 10:00",
            "haystack_dates": ["2023/05/01 (Mon) 09:00"],
            "haystack_sessions": [filler],
        },
    ]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(records))
    return path


def test_longmemeval_without_a_model_grades_what_is_shown(tmp_path: Path) -> None:
    data = _lme_file(tmp_path)
    res = run_benchmark(
        MemoryBenchmark,
        {"dataset": f"longmemeval:{data}"},
        RunOptions(out=tmp_path / "run", command_line=["t"]),
    )
    rows = {
        r["case_id"]: r for r in map(json.loads, (res.run_dir / "results.jsonl").read_text().splitlines())
    }
    assert rows["u1"]["status"] == "PASS"  # Lisbon is in what the agent is shown
    assert rows["k1"]["status"] == "PASS"
    assert rows["m1"]["status"] == "FAIL"  # never said: cannot be shown
    assert rows["m1_abs"]["status"] == "SKIPPED"
    metrics = res.scorecard.summary.metrics
    assert metrics["lme_accuracy[single-session-user]"].value == 1.0
    assert metrics["lme_accuracy[multi-session]"].value == 0.0
    assert metrics["lme_accuracy[multi-session]"].gated is False
    assert res.scorecard.suite == "longmemeval"
    assert "| knowledge-update | 100.0% | 1 |" in (res.run_dir / "report.md").read_text()
    # the evidence session is behind what recall ranks first
    assert rows["u1"]["metrics"]["lme_recall@5"] == 1.0
    assert metrics["lme_recall@10[single-session-user]"].value == 1.0


def test_longmemeval_answers_are_graded_by_a_judge(tmp_path: Path) -> None:
    data = _lme_file(tmp_path)
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        yaml.safe_dump(
            {
                "replies": [
                    {"match": "Reply: You flew to Lisbon.", "text": "yes"},
                    {"match": "Reply: I don't know, you never mentioned one.", "text": "yes"},
                ],
                "default": {"text": "no"},
            }
        )
    )
    script = tmp_path / "answers.yaml"
    script.write_text(
        yaml.safe_dump(
            {
                "replies": [
                    {"match": "marathon", "text": "You flew to Lisbon."},
                    {"match": "shoe brand", "text": "Asics."},  # stale: wrong
                    {"match": "tortoise", "text": "I don't know."},
                    {"match": "parrot", "text": "I don't know, you never mentioned one."},
                ]
            }
        )
    )
    res = run_benchmark(
        MemoryBenchmark,
        {"dataset": f"longmemeval:{data}", "model": f"scripted/{script}", "judge_model": f"scripted/{judge}"},
        RunOptions(out=tmp_path / "run", command_line=["t"]),
    )
    status = {c.case_id: c.passed for c in res.scorecard.cases}
    assert status == {"u1": 1, "k1": 0, "m1": 0, "m1_abs": 1}
    assert res.scorecard.config.model == f"scripted/{script}"
    rows = [json.loads(line) for line in (res.run_dir / "results.jsonl").read_text().splitlines()]
    assert {r["details"]["graded_on"] for r in rows} == {"answer (judge)"}


def test_longmemeval_answers_without_a_judge_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="give --judge-model"):
        run_benchmark(
            MemoryBenchmark,
            {"dataset": f"longmemeval:{_lme_file(tmp_path)}", "model": "scripted/x.yaml"},
            RunOptions(out=tmp_path / "run", command_line=["t"]),
        )


def test_full_suite_runs_answer_probes_with_the_named_model(tmp_path: Path) -> None:
    scen_dir = tmp_path / "scenarios"
    scen_dir.mkdir()
    (scen_dir / "tiny.yaml").write_text(
        """\
id: tiny
theme: one fact
chats:
  - id: c01
    at: 2026-01-01T10:00:00Z
    turns:
      - user: "I live in Oslo. My sister lives in Rome."
probes:
  - {id: city, after: c01, kind: shown_recall, query: "where do I live", expect: [Oslo]}
  - {id: not-rome, after: c01, kind: store_accuracy, not_current: [User lives in Rome]}
  - {id: answer, after: c01, kind: answer, query: "Which city do I live in?", expect: [Oslo]}
"""
    )
    extraction = {
        "facts": [
            {"content": "User lives in Oslo", "attribute": "city", "evidence": "I live in Oslo."},
            {"content": "User lives in Rome", "attribute": "city2", "evidence": "My sister lives in Rome."},
        ]
    }
    script = tmp_path / "model.yaml"
    script.write_text(
        yaml.safe_dump(
            {
                "replies": [
                    {"match": "task: extract; conversation: c01; turn: 0.", "text": json.dumps(extraction)},
                    {"match": "Which city do I live in", "text": "You live in Oslo."},
                ],
                "default": {"text": "{}"},
            }
        )
    )
    res = run_benchmark(
        MemoryBenchmark,
        {"model": f"scripted/{script}", "embedder": "hash", "scenarios_dir": str(scen_dir)},
        RunOptions(suite="full", out=tmp_path / "run", command_line=["t"]),
    )
    assert {c.case_id: c.passed for c in res.scorecard.cases} == {
        "tiny/city": 1,
        "tiny/not-rome": 1,
        "tiny/answer": 1,
    }
    metrics = res.scorecard.summary.metrics
    assert metrics["answer_accuracy"].value == 1.0
    assert not any(m.gated for m in metrics.values())
