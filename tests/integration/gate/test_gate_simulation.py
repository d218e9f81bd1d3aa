"""The issue's simulation: an unchanged flaky subject is not flagged; 5 broken cases are."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from assay.gate import compare
from assay.gate._simulate import simulate_scorecard
from assay.stats import noise_from_scorecards

ROOT = Path(__file__).resolve().parents[3]

# fixed per-case pass probabilities: 24 reliable, 10 flaky, 6 hard
PROBS = {f"r{i:02d}": 1.0 if i % 2 else 0.97 for i in range(24)}
PROBS |= {f"f{i:02d}": 0.3 + 0.05 * i for i in range(10)}
PROBS |= {f"h{i:02d}": 0.02 for i in range(6)}
BROKEN = ["r00", "r05", "r10", "r17", "f06"]


@pytest.mark.parametrize("seed", range(6))
def test_unchanged_subject_is_never_a_regression(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs = [simulate_scorecard(PROBS, 5, rng, run_id=f"n{i}") for i in range(5)]
    noise = noise_from_scorecards(runs)
    # every pair of the 5 unchanged runs, with and without the noise file
    for i, base in enumerate(runs):
        for cur in runs[i + 1 :]:
            for nz in (noise, None):
                comp = compare(base, cur, noise=nz)
                assert comp.exit_code == 0, comp.verdict
                assert comp.counts["regressed"] == 0
    assert sum(noise.is_flaky(c) for c in PROBS) >= 8  # the simulation really is flaky


@pytest.mark.parametrize("seed", range(6))
def test_five_broken_cases_are_flagged(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    runs = [simulate_scorecard(PROBS, 5, rng, run_id=f"n{i}") for i in range(5)]
    noise = noise_from_scorecards(runs)
    broken = simulate_scorecard(
        {c: 0.0 if c in BROKEN else p for c, p in PROBS.items()}, 5, rng, run_id="cur"
    )
    comp = compare(runs[0], broken, noise=noise)
    assert comp.exit_code == 2
    flagged = set(comp.regressions)
    assert flagged <= set(BROKEN)  # nothing else is blamed
    assert len(flagged & {"r00", "r05", "r10", "r17"}) >= 3  # reliable cases that broke are caught


def load_script():
    spec = importlib.util.spec_from_file_location(
        "gate_simulation", ROOT / "benchmarks" / "gate_simulation.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_benchmark_script_prints_a_power_table(capsys: pytest.CaptureFixture) -> None:
    assert load_script().main(["--trials", "40", "--seed", "1"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    for row in ("per-case pass/fail", "recall@5", "latency p50", "throughput", "suite pass/fail"):
        assert any(line.startswith(row) for line in out), row
    assert sum("[goal" in line for line in out) == 3
    m = re.fullmatch(r"false_alarm_rate=(\d\.\d+) detection_rate=(\d\.\d+)", out[-1])
    assert m is not None, out[-1]
    # 40 trials a row: the goals are checked at 200 in the slow test below
    assert float(m.group(1)) <= 0.05 and float(m.group(2)) >= 0.9


@pytest.mark.slow
def test_power_table_meets_the_goals() -> None:
    from assay.gate._simulate import power_table

    rows = power_table(200, 0)
    assert all(r.false_alarm_rate <= 0.05 for r in rows), [(r.setting, r.false_alarm_rate) for r in rows]
    goals = {(r.kind, r.setting): r.goal_rate for r in rows if r.goal is not None}
    assert len(goals) == 3 and all(rate is not None and rate >= 0.95 for rate in goals.values()), goals
