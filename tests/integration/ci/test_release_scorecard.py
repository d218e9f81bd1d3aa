"""`assay scorecard` over real pr runs of every benchmark whose pr suite runs offline in seconds (agent,
memory, retrieval rag, code; retrieval code takes minutes, serving and tasks have no offline suite), and its
--compare failing on a planted drop: a real run of document retrieval with a deliberately worse embedder
(8 hashed dimensions instead of 384). `assay cost` over the same runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli

#: the module's runs take about 35 s on two cores
pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[3]
PR_RUNS = {
    "agent": ["agent", "--suite", "pr", "-n", "2"],
    "memory": ["memory", "--suite", "pr"],
    "retrieval-rag": ["retrieval", "--component", "rag", "--suite", "pr"],
    "code": ["code", "--suite", "pr"],
}
#: retrieval weighs most: the agent pr suite's pass rate (48 scenarios, clustered) is the noisiest row
WEIGHTS = {"agent": 0.1, "memory": 0.1, "retrieval-rag": {"weight": 0.7, "metric": "sdk_mrr"}, "code": 0.1}


def _eval(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_NO_LOCK": "1", "PYTHONPATH": str(ROOT / "src")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    cmd = [sys.executable, "-m", "assay", "eval", *args, "--out", str(out)]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("release")
    out = {}
    for name, args in PR_RUNS.items():
        res = _eval(base / "good" / name, *args)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
        out[name] = base / "good" / name
    res = _eval(base / "worse-rag", *PR_RUNS["retrieval-rag"], "--embedder", "hash:8")
    assert res.returncode == 0, res.stderr[-2000:]
    out["worse-rag"] = base / "worse-rag"
    (base / "weights.json").write_text(json.dumps(WEIGHTS), encoding="utf-8")
    out["weights"] = base / "weights.json"
    return out


def _scorecard(out: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["scorecard", *args, "--out", str(out)])
    return res.exit_code, res.output + (str(res.exception) if res.exception else "")


def test_release_scorecard_and_a_planted_drop(runs: dict[str, Path], tmp_path: Path) -> None:
    good = [str(runs[n]) for n in PR_RUNS]
    code, output = _scorecard(tmp_path / "prev", *good, "--weights", str(runs["weights"]))
    assert code == 0, output
    prev = json.loads((tmp_path / "prev" / "release_scorecard.json").read_text(encoding="utf-8"))
    assert [r["benchmark"] for r in prev["rows"]] == list(PR_RUNS)
    rows = {r["benchmark"]: r for r in prev["rows"]}
    assert rows["retrieval-rag"]["metric"] == "sdk_mrr" and rows["agent"]["metric"] == "pass_rate"
    expected = sum(0.1 * r["value"] for r in prev["rows"]) + 0.6 * rows["retrieval-rag"]["value"]
    assert prev["aggregate"] == pytest.approx(expected)
    assert prev["low"] < prev["aggregate"] < prev["high"]
    cards = {n: json.loads((runs[n] / "scorecard.json").read_text(encoding="utf-8")) for n in PR_RUNS}
    assert all(r["commits"] == cards[r["benchmark"]]["commits"] and r["commits"] for r in prev["rows"])
    assert all(r["model"] == cards[r["benchmark"]]["config"]["model"] for r in prev["rows"])
    md = (tmp_path / "prev" / "SCORECARD.md").read_text(encoding="utf-8")
    assert "| retrieval-rag | sdk_mrr | 0.7 |" in md

    # the same runs again: no drop
    code, output = _scorecard(
        tmp_path / "same", *good, "--weights", str(runs["weights"]), "--compare", str(tmp_path / "prev")
    )
    assert code == 0 and "no drop beyond noise" in output

    # the worse retrieval run in place of the good one: the aggregate drops beyond the combined noise
    worse = [str(runs["agent"]), str(runs["memory"]), str(runs["worse-rag"]), str(runs["code"])]
    code, output = _scorecard(
        tmp_path / "cur", *worse, "--weights", str(runs["weights"]), "--compare", str(tmp_path / "prev")
    )
    assert code == 2, output
    assert "DROP:" in output and "retrieval-rag:" in output
    cur = json.loads((tmp_path / "cur" / "release_scorecard.json").read_text(encoding="utf-8"))
    assert (
        cur["aggregate"] < prev["aggregate"]
        and cur["drops"] == [d for d in cur["drops"] if d.startswith("retrieval-rag:")]
        and cur["drops"]
    )

    # other weights are not comparable
    other = tmp_path / "w2.json"
    other.write_text(json.dumps({**WEIGHTS, "agent": 0.5}), encoding="utf-8")
    code, output = _scorecard(
        tmp_path / "x", *good, "--weights", str(other), "--compare", str(tmp_path / "prev")
    )
    assert code == 3 and "not comparable" in output


def test_weights_and_runs_must_agree(runs: dict[str, Path], tmp_path: Path) -> None:
    code, output = _scorecard(tmp_path / "o", str(runs["agent"]), "--weights", str(runs["weights"]))
    assert code == 1 and "no run of code, memory, retrieval-rag" in output
    code, output = _scorecard(
        tmp_path / "o", str(runs["retrieval-rag"]), str(runs["worse-rag"]), "--weights", str(runs["weights"])
    )
    assert code == 1 and "two runs of retrieval-rag" in output


def test_cost_rollup_per_benchmark_and_role(runs: dict[str, Path]) -> None:
    res = CliRunner().invoke(
        cli, ["cost", str(runs["agent"]), str(runs["memory"]), str(runs["retrieval-rag"])]
    )
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    roles = {tuple(line.split()[:2]) for line in lines[1:] if line.startswith(("agent", "memory"))}
    assert {("agent", "agent"), ("agent", "simulator"), ("agent", "judge")} <= roles
    # retrieval makes no model calls: its attempts are counted as having no usage, not priced at zero
    card = json.loads((runs["retrieval-rag"] / "scorecard.json").read_text(encoding="utf-8"))
    assert not any(line.startswith("retrieval-rag") for line in lines)
    assert "with no usage recorded" in lines[-1]
    n = int(lines[-1].split(" attempts, ")[1].split()[0])
    assert n >= card["summary"]["total"]
