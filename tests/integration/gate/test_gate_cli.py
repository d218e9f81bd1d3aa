"""The gate's CLI through click's CliRunner (each exit code), the main() error edge, and the eval hook."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay.cli._main import cli, main
from assay.errors import ConfigError, NotComparableError, UsageError
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.gate._simulate import simulated_meta
from assay.runs.records import Scorecard, SubjectConfig

TOY_DIR = Path(__file__).resolve().parents[2] / "spine"
OTHER_MODEL = SubjectConfig(subject="sim", model="other-model", judge_model="sim-judge")


def write_run(root: Path, name: str, sc: Scorecard) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    meta = simulated_meta([c.case_id for c in sc.cases], sc.iterations, run_id=sc.run_id, config=sc.config)
    (d / "meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return d


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    return {
        "base": write_run(tmp_path, "base", card({"a": "PPP", "b": "PPP", "c": "PFP"}, run_id="base")),
        "same": write_run(tmp_path, "same", card({"a": "PPP", "b": "PPP", "c": "PPP"}, run_id="same")),
        "broken": write_run(tmp_path, "broken", card({"a": "FFF", "b": "PPP", "c": "PFP"}, run_id="broken")),
        "partial": write_run(
            tmp_path, "partial", card({"a": "PPP", "b": "III", "c": "PFP"}, run_id="partial")
        ),
        "other": write_run(
            tmp_path, "other", card({"a": "PPP", "b": "PPP", "c": "PFP"}, run_id="other", config=OTHER_MODEL)
        ),
    }


def invoke(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=True)


# --- assay compare --------------------------------------------------------------------------------------


def test_compare_exit_0(runs: dict[str, Path]) -> None:
    res = invoke(["compare", str(runs["base"]), str(runs["same"])])
    assert res.exit_code == 0, res.output
    assert "no regression" in res.output
    saved = json.loads((runs["same"] / "comparison.json").read_text())
    assert saved["exit_code"] == 0 and saved["counts"]["flaky"] == 1
    assert "### Flipped cases (1), worst first" in (runs["same"] / "comparison.md").read_text()


def test_compare_exit_2_regression(runs: dict[str, Path]) -> None:
    res = invoke(["compare", str(runs["base"]), str(runs["broken"])])
    assert res.exit_code == 2
    assert "REGRESSION: 1 regressed: a" in res.output


def test_compare_exit_2_require_complete_and_json(runs: dict[str, Path]) -> None:
    res = invoke(["compare", str(runs["base"]), str(runs["partial"])])
    assert res.exit_code == 0 and "warning" in res.output
    res = invoke(["compare", str(runs["base"]), str(runs["partial"]), "--require-complete", "--json"])
    assert res.exit_code == 2
    data = json.loads(res.output)
    assert data["incomplete"] == ["b (not measured)"] and data["exit_code"] == 2


def test_compare_exit_3_not_comparable(runs: dict[str, Path]) -> None:
    res = invoke(["compare", str(runs["base"]), str(runs["other"] / "scorecard.json")])
    assert res.exit_code == 3
    assert "not comparable: subject model differs: baseline 'sim-model', current 'other-model'" in res.output


def test_compare_exit_1_bad_input(runs: dict[str, Path], tmp_path: Path) -> None:
    res = invoke(["compare", str(runs["base"]), str(tmp_path / "nope")])
    assert res.exit_code == 1 and isinstance(res.exception, ConfigError)
    res = invoke(["compare", str(runs["base"]), str(runs["same"]), "--noise", str(tmp_path / "noise.json")])
    assert res.exit_code == 1 and isinstance(res.exception, ConfigError)
    assert "noise.json" in str(res.exception)


def test_main_edge_prints_one_line(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["compare", str(runs["base"]), str(tmp_path / "nope")])
    assert info.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path / 'nope'}: no such run directory or scorecard file"]
    with pytest.raises(SystemExit) as info:
        main(["compare", str(runs["base"]), str(runs["broken"])])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["compare", str(runs["base"]), str(runs["other"])])
    assert info.value.code == 3


def test_compare_with_noise_file(runs: dict[str, Path], tmp_path: Path) -> None:
    res = invoke(
        ["eval", "noise", "--from", str(runs["base"]), str(runs["same"]), "--out", str(tmp_path / "n.json")]
    )
    assert res.exit_code == 0, res.output
    assert "2 runs, 3 cases (1 flaky)" in res.output
    res = invoke(["compare", str(runs["base"]), str(runs["broken"]), "--noise", str(tmp_path / "n.json")])
    assert res.exit_code == 2
    # noise measured on another model cannot set floors for this one
    res = invoke(["compare", str(runs["other"]), str(runs["other"]), "--noise", str(tmp_path / "n.json")])
    assert res.exit_code == 3 and "noise file subject model differs" in res.output


# --- assay gate / propose / health --------------------------------------------------------------------


def test_gate_exit_codes(runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = invoke(["gate", str(runs["base"]), "--enforce"])
    assert res.exit_code == 0 and "not gated yet" in res.output
    exp = tmp_path / "exp.yaml"
    res = invoke(["propose", str(runs["base"]), str(runs["same"]), "--out", str(exp)])
    assert res.exit_code == 0 and "limit(s) from 2 run(s)" in res.output
    assert yaml.safe_load(exp.read_text())["limits"]["min_passed"] == pytest.approx(2 + 2 / 3 - 1, abs=1e-3)
    res = invoke(["gate", str(runs["same"]), "--expect", str(exp), "--enforce"])
    assert res.exit_code == 0 and "gate met" in res.output
    # one case flipping is inside the headroom for one noisy run
    res = invoke(["gate", str(runs["broken"]), "--expect", str(exp), "--enforce"])
    assert res.exit_code == 0 and "gate met" in res.output
    worse = write_run(tmp_path, "worse", card({"a": "FFF", "b": "FFF", "c": "PFP"}, run_id="worse"))
    res = invoke(["gate", str(worse), "--expect", str(exp)])
    assert res.exit_code == 0 and "gate missed" in res.output and "not enforced" in res.output
    res = invoke(["gate", str(worse), "--expect", str(exp), "--enforce"])
    assert res.exit_code == 2 and "MISS" in res.output
    res = invoke(["gate", str(runs["other"]), "--expect", str(exp), "--enforce"])
    assert res.exit_code == 3 and "another configuration" in res.output
    res = invoke(["gate", str(runs["base"]), "--expect", str(tmp_path / "missing.yaml")])
    assert res.exit_code == 1 and isinstance(res.exception, ConfigError)


def test_propose_errors(runs: dict[str, Path], tmp_path: Path) -> None:
    res = invoke(["propose", str(runs["base"]), "--out", str(tmp_path / "x.txt")])
    assert res.exit_code == 1 and isinstance(res.exception, ConfigError)
    res = invoke(["propose", str(runs["base"]), str(runs["other"]), "--out", str(tmp_path / "x.yaml")])
    assert isinstance(res.exception, NotComparableError) and res.exception.exit_code == 3


def test_health_command(runs: dict[str, Path], tmp_path: Path) -> None:
    res = invoke(
        ["health", str(runs["base"]), str(runs["same"]), str(runs["other"]), "--out", str(tmp_path / "h")]
    )
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "h" / "health.json").read_text())
    assert data["counts"]["flaky"] == 1 and data["counts"]["saturated"] == 2
    assert "Scenario health" in res.output


# --- assay eval noise ----------------------------------------------------------------------------------


def test_noise_usage_errors(runs: dict[str, Path]) -> None:
    res = invoke(["eval", "noise", "--", "assay", "eval", "toy"])
    assert isinstance(res.exception, UsageError) and "--runs N is required" in str(res.exception)
    res = invoke(["eval", "noise", "--runs", "2", "--", "assay", "eval", "toy", "--out", "x"])
    assert isinstance(res.exception, UsageError) and "do not pass --out" in str(res.exception)
    res = invoke(["eval", "noise", "--runs", "3", "--from", str(runs["base"]), str(runs["same"])])
    assert isinstance(res.exception, UsageError) and "--runs 3 but --from names 2" in str(res.exception)
    res = invoke(["eval", "noise", "--from", str(runs["base"]), str(runs["other"])])
    assert isinstance(res.exception, NotComparableError)


@pytest.fixture
def toy_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ASSAY_PLUGINS", "toy:ToyBenchmark")
    src = Path(__file__).resolve().parents[3] / "src"
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join([str(TOY_DIR), str(src), os.environ.get("PYTHONPATH", "")])
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_noise_runs_the_eval_command(toy_env: Path) -> None:
    """`assay eval noise --runs 2 -- assay eval toy ...` runs two real evals in fresh dirs and folds them."""
    res = invoke(
        [
            "eval", "noise", "--runs", "2", "--out", "noise.json", "--runs-dir", "nruns", "--",
            sys.executable, "-m", "assay", "eval", "toy", "--cases", "4", "--iterations", "2",
        ]
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads((toy_env / "noise.json").read_text())
    assert len(data["run_ids"]) == 2 and set(data["cases"]) == {"c000", "c001", "c002", "c003"}
    assert data["cases"]["c000"]["measured"] == 4
    assert "quality" in data["metrics"]
    assert sorted(p.name for p in (toy_env / "nruns").iterdir()) == ["run-1", "run-2"]


def test_eval_compare_and_save_baseline_end_to_end(toy_env: Path) -> None:
    """The eval command's --save-baseline / --compare go through gate.hold (exit 0, then 2); report.md and
    report.html hold the comparison."""
    import subprocess

    def eval_toy(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "assay", "eval", "toy", "--cases", "6", "--iterations", "2", *extra],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    first = eval_toy("--out", "r1", "--save-baseline", "bl")
    assert first.returncode == 0, first.stderr
    assert (toy_env / "bl" / "scorecard.json").is_file() and (toy_env / "bl" / "meta.json").is_file()
    second = eval_toy("--out", "r2", "--fail-every", "3", "--compare", "bl")
    assert second.returncode == 2, second.stdout + second.stderr
    comp = json.loads((toy_env / "r2" / "comparison.json").read_text())
    assert sorted(comp["regressions"]) == ["c000", "c003"]
    assert "## Compared with baseline" in (toy_env / "r2" / "report.md").read_text()
    assert "<h2>Compared with baseline</h2>" in (toy_env / "r2" / "report.html").read_text()
    verdict = json.loads((toy_env / "r2" / "verdict.json").read_text())
    assert verdict["exit_code"] == 2 and verdict["reason"].startswith("REGRESSION: 2 regressed")
    other = eval_toy("--out", "r3", "--model", "scripted/other", "--compare", "bl")
    assert other.returncode == 3 and "subject model differs" in other.stdout
    # the same as `assay compare --allow-subject-change`: held case by case, and the verdict says so
    allowed = eval_toy(
        "--out",
        "r4",
        "--model",
        "scripted/other",
        "--compare",
        "bl",
        "--allow-subject-change",
        "--detect",
        "0.1",
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    comp = json.loads((toy_env / "r4" / "comparison.json").read_text())
    assert comp["comparable"] and len(comp["cases"]) == 6
    assert any(w.startswith("the subjects differ") and "scripted/other" in w for w in comp["warnings"])
    report = (toy_env / "r4" / "report.md").read_text()
    assert "the subjects differ" in report
    # --detect: the report says how many cases a change of 0.1 needs; asked nothing, it says nothing of it
    assert "- pass rate: " in report and "; a change of 0.1 needs about " in report
    assert "the smallest change the gate can detect" in (toy_env / "r2" / "report.md").read_text()
    assert "a change of" not in (toy_env / "r2" / "report.md").read_text()
