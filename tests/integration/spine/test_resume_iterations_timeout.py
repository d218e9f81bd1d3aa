"""--resume with --iterations extends the run (fewer is refused); --timeout is refused where it cannot stop work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.cli._main import main
from assay.errors import ConfigError
from assay.evals.memory import MemoryBenchmark
from assay.evals.retrieval import RetrievalBenchmark
from assay.exec import RunOptions, run_benchmark


def _assay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out + out.err


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))


def test_resume_with_more_iterations_extends_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    code, text = _assay(capsys, "eval", "memory", "--suite", "pr", "--out", str(run))
    assert code == 0, text
    code, text = _assay(capsys, "eval", "memory", "--resume", str(run), "--iterations", "2")
    assert code == 0, text
    card = json.loads((run / "scorecard.json").read_text())
    meta = json.loads((run / "meta.json").read_text())
    assert card["iterations"] == meta["iterations"] == meta["options"]["run"]["iterations"] == 2
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert {r["iteration"] for r in rows} == {0, 1} and len(rows) == 2 * len(meta["case_ids"])
    # fewer iterations than the run has would drop measured attempts: refused, naming the flag
    code, text = _assay(capsys, "eval", "memory", "--resume", str(run), "--iterations", "1")
    assert code == 1 and "--iterations 1 with --resume" in text
    # no --iterations: the run's own
    code, text = _assay(capsys, "eval", "memory", "--resume", str(run))
    assert code == 0 and json.loads((run / "meta.json").read_text())["iterations"] == 2


def test_timeout_is_refused_where_it_cannot_interrupt_the_work(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--timeout: the memory benchmark"):
        run_benchmark(
            MemoryBenchmark, {}, RunOptions(suite="pr", timeout_s=5, out=tmp_path / "m", command_line=["t"])
        )
    with pytest.raises(ConfigError, match="--timeout: the retrieval-rag benchmark"):
        run_benchmark(
            RetrievalBenchmark,
            {"component": "rag"},
            RunOptions(timeout_s=5, out=tmp_path / "r", command_line=["t"]),
        )
