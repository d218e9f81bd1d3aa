"""A benchmark's typed options: click options generated from the model, a CI job's arguments read against it
without the CLI, meta.json records its dump, and --resume validates that again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

from assay.cli._options import click_options
from assay.errors import ConfigError, ResumeError
from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Flag, Outcome, Suite
from assay.exec import RunOptions, parse_args, run_benchmark, validate_options
from assay.runs import Status


class _Opts(BenchmarkOptions):
    model: Annotated[str, Flag("--model", envvar="X_MODEL", show_default=True, help="The model.")] = "m/1"
    steps: Annotated[int, Field(ge=1), Flag("--steps", "-s", help="Steps.")] = 3
    rate: Annotated[float | None, Field(ge=0, lt=1), Flag("--rate")] = None
    mode: Annotated[Literal["a", "b"], Flag("--mode")] = "a"
    fence: Annotated[bool, Flag("--fence")] = False
    color: Annotated[bool, Flag("--color/--no-color")] = True
    where: Annotated[Path | None, Flag("--where", path="dir")] = None
    tag: Annotated[tuple[str, ...], Flag("--tag")] = ()
    hidden_knob: int = 0  # no flag: not a command-line option


def _command() -> click.Command:
    return click.Command(
        "x", params=click_options(_Opts), callback=lambda **kw: click.echo(json.dumps(kw, default=str))
    )


def test_click_options_keep_spelling_default_envvar_and_ranges() -> None:
    by_name = {o.name: o for o in click_options(_Opts)}
    assert set(by_name) == {"model", "steps", "rate", "mode", "fence", "color", "where", "tag"}
    assert by_name["steps"].opts == ["--steps", "-s"] and by_name["model"].envvar == "X_MODEL"
    assert by_name["color"].secondary_opts == ["--no-color"] and by_name["tag"].multiple
    runner = CliRunner()
    out = runner.invoke(
        _command(), ["-s", "2", "--tag", "a", "--tag", "b", "--no-color"], env={"X_MODEL": "e/2"}
    )
    assert json.loads(out.output) == {
        "model": "e/2",
        "steps": 2,
        "rate": None,
        "mode": "a",
        "fence": False,
        "color": False,
        "where": None,
        "tag": ["a", "b"],
    }
    bad = runner.invoke(_command(), ["--steps", "0"])
    assert bad.exit_code == 2 and "0 is not in the range x>=1" in bad.output
    bad = runner.invoke(_command(), ["--rate", "1"])
    assert bad.exit_code == 2 and "0<=x<1" in bad.output
    bad = runner.invoke(_command(), ["--mode", "c"])
    assert bad.exit_code == 2 and "'c' is not one of 'a', 'b'" in bad.output
    assert "[default: m/1]" in runner.invoke(_command(), ["--help"]).output


def test_a_job_s_arguments_are_read_against_the_model_without_the_cli() -> None:
    own, other = parse_args(
        _Opts, ["--suite", "pr", "-s=4", "--fence", "--no-color", "--tag", "a", "-n", "3"]
    )
    assert own == {"steps": 4, "fence": True, "color": False, "tag": ("a",)}
    assert other == {"--suite": "pr", "-n": "3"}
    with pytest.raises(ConfigError, match=r"^--steps '0': Input should be greater than or equal to 1"):
        parse_args(_Opts, ["--steps", "0"])
    with pytest.raises(ConfigError, match="--mode: needs a value"):
        parse_args(_Opts, ["--mode"])


def test_a_mapping_is_validated_and_a_wrong_value_names_its_flag() -> None:
    assert validate_options(_Opts, {"steps": "5", "unknown": 1}).steps == 5
    with pytest.raises(ConfigError, match=r"--rate 2: Input should be less than 1"):
        validate_options(_Opts, {"rate": 2})


class _Recorded(Benchmark):
    name = "recorded"

    class Options(BenchmarkOptions):
        cases: Annotated[int, Field(ge=1), Flag("--cases")] = 2
        where: Annotated[Path | None, Flag("--where")] = None

    def load_suite(self, suite: str) -> Suite:
        return Suite(suite, "1", [Case(f"c{i}") for i in range(self.options.cases)])

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        return Outcome(Status.PASS)


def test_meta_records_the_dump_and_resume_validates_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    run = tmp_path / "run"
    result = run_benchmark(_Recorded, {"cases": "3", "where": "a/b"}, RunOptions(out=run, command_line=["t"]))
    assert len(result.scorecard.cases) == 3
    meta = json.loads((run / "meta.json").read_text())
    assert meta["options"]["benchmark"] == {"cases": 3, "where": "a/b"}
    resumed = run_benchmark(None, None, RunOptions(resume=run, command_line=["t"]))
    assert resumed.exit_code == 0
    meta["options"]["benchmark"]["cases"] = 0
    (run / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ResumeError) as err:
        run_benchmark(None, None, RunOptions(resume=run, command_line=["t"]))
    line = str(err.value)
    assert "\n" not in line and str(run / "meta.json") in line and "--cases 0" in line
