"""`assay eval memory --dataset locomo:FILE` on the project's slice: evidence recall, F1, the judge, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.cli import main
from assay.embed import HashEmbedder
from assay.errors import InfraError
from assay.evals.memory import MemoryBenchmark
from assay.evals.memory._fetch import fetch_locomo
from assay.evals.memory._locomo import load_locomo
from assay.evals.memory._locomo_bench import LOCOMO_CONFIG
from assay.evals.memory._locomo_run import replay
from assay.exec import RunOptions, run_benchmark
from assay.memory import ManualClock, init_memory
from assay.models.scripted import ScriptedModel

SLICE = Path(__file__).resolve().parents[2] / "fixtures" / "locomo" / "locomo_slice.json"
DATASET = f"locomo:{SLICE}"


def _rows(run_dir: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {r["case_id"]: r for r in rows}


def _table(run_dir: Path) -> str:
    text = (run_dir / "report.md").read_text()
    start = text.index("| category |")
    return text[start : text.index("\n\n", start)]


def test_a_hashing_run_of_the_slice_is_identical_twice(tmp_path: Path) -> None:
    runs = [
        run_benchmark(
            MemoryBenchmark, {"dataset": DATASET}, RunOptions(out=tmp_path / f"r{i}", command_line=["t"])
        )
        for i in range(2)
    ]
    first, second = (_rows(r.run_dir) for r in runs)
    assert len(first) == 20
    assert {k: (v["status"], v["metrics"], v["details"]) for k, v in first.items()} == {
        k: (v["status"], v["metrics"], v["details"]) for k, v in second.items()
    }
    assert _table(runs[0].run_dir) == _table(runs[1].run_dir)
    table = _table(runs[0].run_dir)
    for category in ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial", "**overall**"):
        assert f"| {category} |" in table
    metrics = runs[0].scorecard.summary.metrics
    assert metrics["evidence_recall@10[single-hop]"].n == 6
    assert metrics["evidence_recall@5"].low is not None and not metrics["evidence_recall@5"].gated
    # what recall returned is traced back to the dia_ids it came from
    q = first["slice-1/q001"]  # the cat's name, said in D2:2
    assert q["details"]["evidence"] == ["D2:2"] and ["D2:2"] in q["details"]["ranked_evidence"]
    assert runs[0].scorecard.config.model is None and runs[0].scorecard.config.embedder == "hash"


def _script(path: Path, replies: list[dict[str, str]], default: str) -> str:
    path.write_text(yaml.safe_dump({"replies": replies, "default": {"text": default}}))
    return f"scripted/{path}"


def test_answers_are_scored_by_token_f1_the_adversarial_rule_and_the_judge(tmp_path: Path) -> None:
    model = _script(
        tmp_path / "model.yaml",
        [
            {"match": "Where does Grace work?", "text": "At the botanical garden"},
            {"match": "When is Amara getting married?", "text": "In Accra"},
            {"match": "What color are Grace's running shoes?", "text": "Not mentioned in the conversation"},
            {"match": "What did Nadia play at her recital?", "text": "the Bach prelude"},
        ],
        "{}",
    )
    judge = _script(
        tmp_path / "judge.yaml",
        [
            {
                "match": "Answer to grade: At the botanical garden",
                "text": '{"reason": "same place", "label": "CORRECT"}',
            }
        ],
        '{"reason": "another fact", "label": "WRONG"}',
    )
    res = run_benchmark(
        MemoryBenchmark,
        {"dataset": DATASET, "model": model, "judge_model": judge},
        RunOptions(out=tmp_path / "run", command_line=["t"]),
    )
    rows = _rows(res.run_dir)
    work = rows["slice-2/q000"]
    assert work["status"] == "PASS" and work["metrics"]["locomo_f1"] == pytest.approx(0.8)
    assert work["metrics"]["judge_accuracy"] == 1.0 and work["details"]["judge_reason"] == "same place"
    wedding = rows["slice-2/q002"]
    assert wedding["status"] == "FAIL" and wedding["details"]["judge_reason"] == "another fact"
    shoes, recital = rows["slice-2/q005"], rows["slice-1/q012"]  # adversarial: scored by the paper's rule
    assert shoes["status"] == "PASS" and shoes["metrics"] == {**shoes["metrics"], "locomo_f1": 1.0}
    assert recital["status"] == "FAIL" and recital["metrics"]["locomo_f1"] == 0.0
    assert "judge_accuracy" not in shoes["metrics"]  # Mem0 leaves adversarial questions to the rule
    metrics = res.scorecard.summary.metrics
    assert metrics["judge_accuracy"].n == 17  # the 20 questions but the 3 adversarial ones
    assert "judge_accuracy[adversarial]" not in metrics and metrics["locomo_f1[adversarial]"].n == 3
    report = (res.run_dir / "report.md").read_text()
    assert "Mem0 paper (arXiv:2504.19413)" in report and "answer model gpt-4o-mini" in report
    assert f"answer model {model} and judge {judge}. Not like-for-like" in report
    assert res.scorecard.config.model == model


async def test_a_killed_replay_resumes_from_the_next_turn(tmp_path: Path) -> None:
    conv = load_locomo(SLICE)[1]  # 10 turns in 2 sessions, 16 days apart
    db = tmp_path / "m.db"
    # calls 1-5 extract session 1, call 6 consolidates it when session 2 starts, call 7 (D2:1) dies
    dying = ScriptedModel({"replies": [{"text": "{}"}] * 6 + [{"error": "infra"}]})
    with pytest.raises(InfraError):
        await replay(conv, db, embedder=HashEmbedder(), model=dying, config=LOCOMO_CONFIG)
    rest = ScriptedModel({"replies": [], "default": {"text": "{}"}})
    memory = await replay(conv, db, embedder=HashEmbedder(), model=rest, config=LOCOMO_CONFIG)
    refs = [t.ref for t in memory.store.turns()]
    memory.store.close()
    expected = [t.dia_id for s in conv.sessions for t in s.turns]
    # the turn in flight when it died (D2:1) is recorded twice; every other turn once, in order
    assert refs == expected[:6] + expected[5:]
    assert memory.usage.calls == 5  # only session 2's turns were extracted again; nothing consolidated twice


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stderr and stdout of `assay ARGV`."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    code = exc.value.code
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 1), captured.err, captured.out


def test_retrieval_only_says_what_a_full_run_needs_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    code, err, out = _cli(
        [
            "eval",
            "memory",
            "--dataset",
            DATASET,
            "--retrieval-only",
            "--embedder",
            "hash",
            "--out",
            str(tmp_path / "r"),
        ],
        capsys,
    )
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith("LoCoMo --retrieval-only: no model calls now. A full answer run")
    assert "2 conversation(s), 5 sessions, 28 turns, 20 questions: 70 model calls (28 extraction, " in first
    assert "5 consolidation (at most), 20 answers, 17 judge), about 12 min at an assumed 10 s a call" in first
    assert "evidence_recall@10[single-hop]: 1 (not gated)" in out  # the category is not eaten as markup


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--retrieval-only", "--model", "scripted/x.yaml"], "error: --retrieval-only asks no model"),
        (["--judge-model", "scripted/x.yaml"], "error: --judge-model grades answers: it needs --model"),
    ],
)
def test_contradicting_flags_are_one_line(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err, _out = _cli(
        ["eval", "memory", "--dataset", DATASET, *extra, "--out", str(tmp_path / "r")], capsys
    )
    assert code == 1
    assert next(ln for ln in err.splitlines() if ln.startswith("error: ")).startswith(message)


def test_the_pinned_file_offline_or_unreachable_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err, _out = _cli(
        ["eval", "memory", "--dataset", "locomo", "--offline", "--out", str(tmp_path / "r")], capsys
    )
    assert code == 1
    errors = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: --offline: the LoCoMo file is not cached at ")
    with pytest.raises(InfraError, match=r"downloading LoCoMo from http://127\.0\.0\.1:9/locomo10\.json: "):
        fetch_locomo(offline=False, url="http://127.0.0.1:9/locomo10.json", sha256="0" * 64)


def test_a_run_stopped_mid_replay_resumes_where_it_stopped(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads(SLICE.read_text())[1:]))  # slice-2: 10 turns, 7 questions
    # extraction takes the ordered replies: session 1's five, then the outage on D2:1; a resumed run starts
    # the script again, and its five replies cover the five turns left
    model = _script(
        tmp_path / "model.yaml",
        [{"match": "task: consolidate", "text": "{}"}, {"match": "Question:", "text": "Not mentioned"}]
        + [{"text": "{}"}] * 5
        + [{"error": "infra"}],
        "{}",
    )
    first = run_benchmark(
        MemoryBenchmark,
        {"dataset": f"locomo:{one}", "model": model},
        RunOptions(out=tmp_path / "run", command_line=["t"]),
    )
    counts = first.scorecard.summary.counts
    assert first.exit_code == 3 and counts["INFRA_ERROR"] == 1 and counts["NOT_RUN"] > 0
    resumed = run_benchmark(None, None, RunOptions(resume=first.run_dir, command_line=["t"]))
    assert resumed.scorecard.summary.measured == 7
    memory = init_memory(
        first.run_dir / "memory" / "locomo-slice-2-i0.db", embedder=HashEmbedder(), clock=ManualClock()
    )
    refs = [t.ref for t in memory.store.turns()]
    memory.store.close()
    assert refs == ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D2:1", "D2:1", "D2:2", "D2:3", "D2:4", "D2:5"]
