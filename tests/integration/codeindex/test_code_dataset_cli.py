"""`assay eval retrieval --component code` reading its queries: the pinned SWE-bench parquet and --dataset.

The nightly suite runs end to end, offline, from a pinned parquet placed in the repo cache next to a
bare repository the test builds (the pin is the test file's own sha256, swapped in for the real one).
Errors go through the real console entry point and must name the file, the line and the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.cli._main import main
from assay.evals import _swebench_dataset
from assay.evals._swebench_dataset import swebench_cache_path
from assay.runs.records import Scorecard

GEARS_V1 = "def spin_gear(speed):\n    return speed * 2\n\n\ndef stop_gear():\n    return 0\n"
GEARS_V2 = "def spin_gear(speed):\n    return max(0, speed) * 2\n\n\ndef stop_gear():\n    return 0\n"
PAINT_V1 = (
    "def paint_widget(colour):\n    return colour.upper()\n\n\ndef dry_widget(widget):\n    return widget\n"
)
PAINT_V2 = "def paint_widget(colour):\n    return colour.strip().upper()\n\n\ndef dry_widget(widget):\n    return widget\n"

NIGHTLY = ["eval", "retrieval", "--component", "code", "--suite", "nightly", "--embedder", "hash"]


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _assay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out + out.err


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    return tmp_path


def _widgets_repo(env: Path, cache: Path) -> list[dict[str, str]]:
    """A bare acme/widgets in ``cache`` (three commits) and two SWE-bench rows about its real changes."""
    work = env / "widgets"
    (work / "widgets").mkdir(parents=True)
    (work / "widgets" / "gears.py").write_text(GEARS_V1)
    (work / "widgets" / "paint.py").write_text(PAINT_V1)
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "one")
    rows = []
    for n, (path, text, issue) in enumerate(
        [
            ("gears.py", GEARS_V2, "spin_gear returns a negative rotation when the speed is negative"),
            ("paint.py", PAINT_V2, "paint_widget keeps the surrounding whitespace of the colour name"),
        ],
        1,
    ):
        base = _git(work, "rev-parse", "HEAD").strip()
        (work / "widgets" / path).write_text(text)
        patch = _git(work, "diff")
        _git(work, "commit", "-qam", f"fix {n}")
        rows.append(
            {
                "repo": "acme/widgets",
                "instance_id": f"acme__widgets-{n}",
                "base_commit": base,
                "patch": patch,
                "test_patch": "",
                "problem_statement": issue,
                "hints_text": "",
                "created_at": f"2024-0{n}-01T00:00:00Z",
                "version": "1.0",
                "FAIL_TO_PASS": "[]",
                "PASS_TO_PASS": "[]",
                "environment_setup_commit": base,
                "difficulty": "<15 min fix",
            }
        )
    cache.mkdir(parents=True, exist_ok=True)
    _git(cache, "clone", "-q", "--bare", str(work), "acme__widgets.git")
    return rows


def _pin_parquet(cache: Path, rows: list[dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> Path:
    pin = {
        "dataset": "princeton-nlp/SWE-bench_Verified",
        "revision": "fedcba9876543210fedcba9876543210fedcba98",
        "file": "data/test-00000-of-00001.parquet",
        "rows": len(rows),
    }
    target = swebench_cache_path(cache, pin)
    pq.write_table(pa.table({k: pa.array([r[k] for r in rows], type=pa.string()) for k in rows[0]}), target)
    pin["sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
    monkeypatch.setattr(_swebench_dataset, "SWE_BENCH_VERIFIED", pin)
    return target


def test_nightly_runs_offline_from_the_pinned_parquet(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = env / "repos"
    rows = _widgets_repo(env, cache)
    _pin_parquet(cache, rows, monkeypatch)
    out = env / "run"
    args = [*NIGHTLY, "--offline"]
    args += ["--repo-cache", str(cache), "--code-replay-commits", "2", "--out", str(out)]
    code, text = _assay(capsys, *args)
    assert code == 0, text
    sc = Scorecard.model_validate_json((out / "scorecard.json").read_text())
    assert sc.suite == "nightly" and sc.suite_version.startswith("nightly-")  # a content hash, not a size
    assert sc.summary.counts["PASS"] == len(sc.cases) == 2 + 1 + 14 + 9 + 7, sc.summary.counts
    for n, symbol in ((1, "spin_gear"), (2, "paint_widget")):
        case = sc.case(f"q:acme__widgets-{n}")
        assert case is not None and case.metrics["file_recall@5"] == 1.0, (symbol, case)
        assert case.metrics["function_recall@5"] == 1.0
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    gold = {r["case_id"]: r["details"] for r in results if r["case_id"].startswith("q:")}
    assert gold["q:acme__widgets-1"]["gold_files"] == ["widgets/gears.py"]


def test_cli_refuses_a_tampered_or_missing_pinned_file(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = env / "repos"
    rows = _widgets_repo(env, cache)
    target = _pin_parquet(cache, rows, monkeypatch)
    pinned = _swebench_dataset.SWE_BENCH_VERIFIED["sha256"]
    rows[0]["problem_statement"] = "spin_gear is fine"
    pq.write_table(pa.table({k: pa.array([r[k] for r in rows], type=pa.string()) for k in rows[0]}), target)
    tampered = hashlib.sha256(target.read_bytes()).hexdigest()
    base = [*NIGHTLY, "--repo-cache", str(cache)]
    code, text = _assay(capsys, *base, "--offline", "--out", str(env / "r1"))
    assert code == 1 and str(target) in text and tampered in text and pinned in text, text
    assert hashlib.sha256(target.read_bytes()).hexdigest() == tampered  # left alone, never re-fetched

    target.unlink()
    code, text = _assay(capsys, *base, "--offline", "--out", str(env / "r2"))
    assert code == 1 and f"should be at {target}" in text and "without --offline" in text, text


def test_cli_names_file_and_line_of_a_malformed_dataset(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = env / "repos"
    rows = _widgets_repo(env, cache)
    dataset = env / "swe.jsonl"
    dataset.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1])[:-9] + "\n")
    args = [*NIGHTLY, "--offline"]
    args += ["--repo-cache", str(cache), "--dataset", str(dataset), "--out", str(env / "r")]
    code, text = _assay(capsys, *args)
    assert code == 1 and f"{dataset}:2: not valid JSON" in text, text
    dataset.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps({**rows[1], "base_commit": ""}) + "\n")
    code, text = _assay(capsys, *args)
    assert code == 1 and f"{dataset}:3: missing or empty field(s): base_commit" in text, text
