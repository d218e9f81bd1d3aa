"""`--noise`: the noise floors from `assay eval noise` decide what counts as a train gain; a noise file of another
suite is refused before any branch or run; without `--noise` the newest noise.json that fits is picked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from assay.cli import main
from assay.evals.agent import AgentBenchmark
from assay.exec import RunOptions, run_benchmark
from assay.gate import noise

if TYPE_CHECKING:
    from conftest import Climb


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out = capsys.readouterr()
    return int(exc.value.code or 0), out.out, out.err


def _noise_file(c: Climb, where: Path | None = None) -> Path:
    where = where or c.root
    runs = []
    for i in (1, 2):
        options = {"scenarios_dir": str(c.scenarios), "profile": str(c.profile)}
        opts = RunOptions(suite="pr", iterations=3, out=c.root / "noise" / f"run-{i}")
        runs.append(run_benchmark(AgentBenchmark, options, opts).run_dir)
    noise(runs, where / "noise.json")
    return where / "noise.json"


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
    assert not (c.out / "fix_history.json").exists()  # refused before the baseline ran
    assert "hillclimb/" not in c.git("branch", "--list")  # and before the branch was made


def test_without_noise_the_newest_fitting_file_is_picked(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    c = small_climb
    # ./noise.json (the climb runs in the repository, which ignores it), where `assay eval noise` writes it
    made = _noise_file(c, c.repo)
    data = json.loads(made.read_text())
    other = c.repo / "results" / "noise-other" / "noise.json"  # newer, but of another judge: never picked
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({**data, "config": {**data["config"], "judge_model": "another/judge"},
                                 "created_at": "2099-01-01T00:00:00Z"}))  # fmt: skip
    argv = ["hillclimb", "--suite", "pr", "--scenarios", str(c.scenarios), "--profile", str(c.profile),
            "--fixer", c.fixer([[c.restore()]]), "--out", str(c.out), "--rounds", "1"]  # fmt: skip
    code, out, err = _cli(argv, capsys)
    assert code == 0, err
    assert json.loads((c.out / "fix_history.json").read_text())["noise"] == str(made.resolve())
    assert f"noise floor: {made.resolve()} (picked" in out


def test_without_a_fitting_file_the_loop_says_it_has_no_floor(
    small_climb: Climb, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.hillclimb._noise_pick import pick_noise
    from assay.hillclimb._target import get_target

    c = small_climb
    data = json.loads(_noise_file(c).read_text())
    (c.root / "noise.json").write_text(json.dumps({**data, "suite": "full"}))
    target = get_target(
        "agent", {"suite": "pr", "scenarios_dir": str(c.scenarios), "profile": str(c.profile)}
    )
    path, line = pick_noise(None, target.noise_fit(), c.root / "results")
    assert path is None and line.startswith("noise floor: none")
