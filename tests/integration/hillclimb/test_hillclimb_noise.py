"""`--noise`: the noise floors from `assay eval noise` decide what counts as a train gain; a noise file of another
suite is refused before any edit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from assay.cli import main
from assay.gate import noise
from assay.runs import RunOptions, run_benchmark

if TYPE_CHECKING:
    from conftest import Climb


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _noise_file(c: Climb) -> Path:
    runs = []
    for i in (1, 2):
        options = {"scenarios_dir": str(c.scenarios), "profile": str(c.profile)}
        opts = RunOptions(suite="pr", iterations=3, out=c.root / "noise" / f"run-{i}")
        runs.append(run_benchmark("agent", options, opts).run_dir)
    noise(runs, c.root / "noise.json")
    return c.root / "noise.json"


def test_the_noise_file_is_used_and_recorded(small_climb: Climb, capsys: pytest.CaptureFixture[str]) -> None:
    c = small_climb
    path = _noise_file(c)
    argv = ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", c.fixer([[c.restore()]]), "--out", str(c.out), "--rounds", "1", "--noise", str(path)]  # fmt: skip
    code, out, err = _cli(argv, capsys)
    assert code == 0, err
    h = json.loads((c.out / "fix_history.json").read_text())
    assert h["noise"] == str(path.resolve()) and f"noise floor: {path.resolve()}" in out
    assert h["rounds"][0]["outcome"] == "kept"


def test_a_noise_file_of_another_suite_is_refused(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    c = small_climb
    path = _noise_file(c)
    data = json.loads(path.read_text())
    data["suite_version"] = "another"
    path.write_text(json.dumps(data))
    argv = ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", c.fixer([[c.restore()]]), "--out", str(c.out), "--noise", str(path)]  # fmt: skip
    code, _, err = _cli(argv, capsys)
    assert code == 1 and "--noise" in err and "suite version differs" in err
    assert json.loads((c.out / "fix_history.json").read_text())["rounds"] == []
