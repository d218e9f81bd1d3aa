"""SKIPPED (with a reason) is its own outcome: propose -> gate --enforce on real `pr` runs, and synthetic runs.

Code-search `pr` takes about ten minutes, so its propose/gate round trip is checked on a synthetic scorecard
of the same shape (query cases with recall metrics, robustness cases, one skipped) instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.gate._simulate import simulated_meta
from assay.runs.records import MetricSpec, Scorecard


def write_run(root: Path, name: str, sc: Scorecard) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    meta = simulated_meta([c.case_id for c in sc.cases], sc.iterations, run_id=sc.run_id, config=sc.config)
    (d / "meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return d


def invoke(args: list[str]) -> tuple[int, str]:
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    return res.exit_code, res.output


def propose_then_gate(runs: list[Path], tmp_path: Path) -> tuple[int, str]:
    expect = tmp_path / "expect.yaml"
    code, out = invoke(["propose", str(runs[0]), str(runs[1]), "--out", str(expect)])
    assert code == 0, out
    return invoke(["gate", str(runs[2]), "--expect", str(expect), "--enforce"])


@pytest.mark.parametrize(
    ("argv", "skipped"),
    [
        (["retrieval", "--component", "rag", "--suite", "pr"], ["hard/prompt-injection"]),
        (["memory", "--suite", "pr"], []),
    ],
    ids=["rag", "memory"],
)
def test_propose_from_two_pr_runs_then_gate_a_third_exits_0(
    argv: list[str], skipped: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    runs = []
    for i in range(3):
        out = tmp_path / f"r{i}"
        code, text = invoke(["eval", *argv, "--out", str(out)])
        assert code == 0, text
        runs.append(out)
    code, out = propose_then_gate(runs, tmp_path)
    # before: the skipped prompt-injection case (no model in pr) counted as unmeasured -> exit 2
    assert code == 0, out
    assert "gate met" in out
    for case in skipped:
        assert case in out and "skipped (with a reason, not unmeasured)" in out


CODE_SPECS = [
    MetricSpec(name="file_recall@5", kind="proportion", tolerance=0.05),
    MetricSpec(name="search_ms", kind="continuous", direction="lower", gated=False, unit="ms"),
]


def code_like(run_id: str, skip: str = "S") -> Scorecard:
    """Query cases with recall and search time, two robustness cases, one hostile-tree case skipped."""
    outcomes = {f"q{i}": "P" for i in range(12)} | {"robust/a": "P", "robust/b": "P", "tree/symlink": skip}
    metrics = {f"q{i}": [{"file_recall@5": 1.0 if i % 4 else 0.5, "search_ms": 20.0 + i}] for i in range(12)}
    return card(outcomes, run_id=run_id, metrics=metrics, metric_specs=CODE_SPECS, benchmark="retrieval-code")


def test_code_shaped_synthetic_runs_propose_and_gate(tmp_path: Path) -> None:
    runs = [write_run(tmp_path, f"r{i}", code_like(f"r{i}")) for i in range(3)]
    code, out = propose_then_gate(runs, tmp_path)
    assert code == 0, out
    assert "tree/symlink" in out
    # the same case *not measured* (an outage) is still a miss under --enforce
    down = write_run(tmp_path, "down", code_like("down", skip="I"))
    code, out = invoke(["gate", str(down), "--expect", str(tmp_path / "expect.yaml"), "--enforce"])
    assert code == 2 and "not measured" in out


def test_require_complete_skip_rules(tmp_path: Path) -> None:
    base = write_run(tmp_path, "base", card({"a": "PPP", "b": "SSS", "c": "PPP"}, run_id="base"))
    same = write_run(tmp_path, "same", card({"a": "PPP", "b": "SSS", "c": "PPP"}, run_id="same"))
    # the same skip on both sides is consistent, also with --require-complete
    code, out = invoke(["compare", str(base), str(same), "--require-complete"])
    assert code == 0, out
    # a case that passed in the baseline and is skipped now was not run: --require-complete fails
    now = write_run(tmp_path, "now", card({"a": "PPP", "b": "SSS", "c": "SSS"}, run_id="now"))
    code, out = invoke(["compare", str(base), str(now), "--require-complete"])
    assert code == 2, out
    assert "c (skipped now: not run)" in out or "INCOMPLETE" in out
    code, out = invoke(["compare", str(base), str(now)])
    assert code == 0 and "c (skipped now: not run)" in out


def test_compare_noise_says_whether_it_changed_a_tolerance(tmp_path: Path) -> None:
    """`assay compare --noise` names the metrics whose tolerance the noise file set, or says it set none;
    every metric row says where its tolerance came from."""
    specs = [
        MetricSpec(name="recall", kind="proportion", tolerance=0.02),
        MetricSpec(name="p50_ms", kind="continuous", direction="lower", tolerance=0.1, unit="ms"),
    ]
    qs = [f"q{i}" for i in range(20)]

    def run(name: str, recall: float) -> Path:
        metrics = {q: [{"recall": recall, "p50_ms": 100.0}] for q in qs}
        return write_run(
            tmp_path, name, card(dict.fromkeys(qs, "P"), run_id=name, metrics=metrics, metric_specs=specs)
        )

    base, cur = run("base", 0.8), run("cur", 0.7)
    wobbly = [run(f"n{i}", r) for i, r in enumerate((0.6, 0.8, 0.9))]
    steady = [run(f"s{i}", 0.8) for i in range(3)]
    for name, dirs in (("wobbly", wobbly), ("steady", steady)):
        code, out = invoke(
            ["eval", "noise", "--from", *map(str, dirs), "--out", str(tmp_path / f"{name}.json")]
        )
        assert code == 0, out
    code, out = invoke(["compare", str(base), str(cur), "--noise", str(tmp_path / "wobbly.json")])
    assert code == 0, out  # the noise runs moved recall by 0.3: a 0.1 drop is within it
    assert "noise file widened the tolerance of: recall" in out
    code, out = invoke(["compare", str(base), str(cur), "--noise", str(tmp_path / "steady.json")])
    assert code == 2, out  # every query lost 0.1 of recall and the noise runs never moved it
    assert "noise file changed no metric tolerance" in out
