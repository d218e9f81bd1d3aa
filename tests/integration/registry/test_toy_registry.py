"""A benchmark is registered in one place: a toy one, in its own package only, appears in ``assay eval
--help``, runs with its generated options, shows its subcommand and its case view, and its CI jobs are
planned and verified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli._main import cli

HERE = Path(__file__).parent
TIERS = Path(__file__).parents[3] / "eval" / "ci_tiers.json"


@pytest.fixture
def toyreg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    from assay.evals import _registry

    monkeypatch.setattr(_registry, "_registered", dict(_registry._registered))  # forgotten after the test
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv("ASSAY_PLUGINS", "toyreg._benchmark:ToyRegBenchmark")
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    return tmp_path


def test_it_is_listed_runs_and_has_its_subcommand(toyreg: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["eval", "--help"])
    assert (
        listed.exit_code == 0
        and "toyreg" in listed.output
        and "Toy: registered from one package." in listed.output
    )
    own = runner.invoke(cli, ["eval", "toyreg", "--help"])
    assert (
        "--knob INTEGER RANGE" in own.output and "[default: 2; x>=1]" in own.output and "hello" in own.output
    )
    assert runner.invoke(cli, ["eval", "toyreg", "hello"]).output == "hello from toyreg\n"
    bad = runner.invoke(cli, ["eval", "toyreg", "--knob", "0"])
    assert bad.exit_code == 2 and "0 is not in the range x>=1" in bad.output
    run = toyreg / "run"
    done = runner.invoke(cli, ["eval", "toyreg", "--knob", "3", "--out", str(run)], env={"TOYREG_KNOB": "5"})
    assert done.exit_code == 0, done.output
    meta = json.loads((run / "meta.json").read_text())
    assert meta["options"]["benchmark"] == {"knob": 3}
    assert sorted(
        json.loads(line)["case_id"] for line in (run / "results.jsonl").read_text().splitlines()
    ) == [
        "c0",
        "c1",
        "c2",
    ]


def test_its_case_view_draws_its_attempts(toyreg: Path) -> None:
    from toyreg._benchmark import ToyRegBenchmark  # type: ignore[import-not-found]

    from assay.exec import RunOptions, run_benchmark
    from assay.view import case_view
    from assay.view._case import case_page
    from assay.view._store import RunStore

    run_benchmark(ToyRegBenchmark, {"knob": 1}, RunOptions(out=toyreg / "runs" / "r", command_line=["t"]))
    assert case_view("toyreg") is not None and case_view("no-such") is None
    (run,) = RunStore(toyreg / "runs").runs()
    assert '<p class="toyreg">toy saw 0</p>' in case_page(run, "c0")


def test_its_ci_jobs_are_planned_and_verified(toyreg: Path) -> None:
    from assay.ci._plan import make_plan
    from assay.ci.verify import _job_params
    from assay.evals.agent.tiers import load_tiers

    tiers = load_tiers(TIERS)
    plan = make_plan(tiers, "dispatch", tier="full")
    toy = [j for j in plan.jobs if j.name == "toyreg"]
    assert len(toy) == 1 and toy[0].argv[:6] == ["assay", "eval", "toyreg", "--suite", "pr", "--knob"]
    (job,) = [j for j in tiers.jobs_in("full") if j.name == "toyreg"]
    assert _job_params(job) == ({"suite": "pr"}, {"knob": 3})


def test_every_builtin_benchmark_s_declared_command_subcommands_and_view_resolve() -> None:
    import importlib

    import click

    from assay.evals import get_benchmark
    from assay.evals._registry import BUILTIN

    for name in BUILTIN:  # (other tests' plugins may be registered too)
        cls = get_benchmark(name)
        assert cls.short_help, name
        specs = [*cls.subcommands.values(), *([cls.command] if cls.command else [])]
        for spec in specs:
            module, _, attr = spec.partition(":")
            assert isinstance(getattr(importlib.import_module(module), attr), click.Command), spec
        assert cls.case_view is not None, name
        module, _, attr = cls.case_view.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), cls.case_view
