"""`assay import tau2`: tau2-bench and tau-bench results.

The fixtures (tests/fixtures/foreign/tau2, by make_results.py) are written from the tools' published schemas,
not by the tools: neither installs on this machine (tau2-bench and tau-bench are not on the package index it
reaches, whose `tau2` is an unrelated package, and their repositories cannot be fetched offline).
"""

from __future__ import annotations

import json
from math import comb
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli, main
from assay.runs import load_meta, load_scorecard, read_journal

TAU = Path(__file__).parents[2] / "fixtures" / "foreign" / "tau2"
TAU2 = TAU / "airline.json"
TAU1 = TAU / "tool-calling-gpt-4o-0.0_range_0--1_user-gpt-4o-llm_1130090000.json"


@pytest.fixture(autouse=True)
def _no_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")


def _import(path: Path, out: Path, *extra: str) -> Path:
    res = CliRunner().invoke(cli, ["import", "tau2", str(path), "--out", str(out), *extra])
    assert res.exit_code == 0, res.output
    return out


def _tau2_pass_hat_k(sims: list[dict], k: int) -> float:
    """tau2-bench's own pass^k (metrics/agent_metrics.py): infrastructure errors left out, success a reward
    of 1 within 1e-6, C(successes, k) / C(trials, k) per task, the mean over tasks."""
    by_task: dict[str, list[bool]] = {}
    for s in sims:
        if s["termination_reason"] != "infrastructure_error":
            by_task.setdefault(s["task_id"], []).append(abs(s["reward_info"]["reward"] - 1) <= 1e-6)
    return sum(comb(sum(v), k) / comb(len(v), k) for v in by_task.values()) / len(by_task)


def test_each_simulation_is_an_attempt_and_trials_fold_into_pass_hat_k(tmp_path: Path) -> None:
    run = _import(TAU2, tmp_path / "a")
    by_key = {a.key: a for a in read_journal(run / "results.jsonl")}
    assert len(by_key) == 12 and {a.iteration for a in by_key.values()} == {0, 1, 2}
    assert by_key["3", 1].status.value == "FAIL" and by_key["3", 1].score == 0.5  # a partial reward
    assert by_key["3", 1].metrics == {"reward": 0.5, "reward.DB": 1.0, "reward.NL_ASSERTION": 0.5}
    assert by_key["3", 2].status.value == "INFRA_ERROR"  # tau2 leaves it out; so does the pass rate
    assert by_key["2", 2].details["termination_reason"] == "max_steps"
    card = load_scorecard(run)
    assert card.summary.counts["PASS"] == 6 and card.summary.measured == 11
    sims = json.loads(TAU2.read_text())["simulations"]
    # tau2 reports k up to the fewest trials a task has (2 here); assay's k=3 is over the tasks run 3 times
    for k in (1, 2):
        assert card.summary.pass_hat_k[k] == pytest.approx(_tau2_pass_hat_k(sims, k), abs=1e-4)
    stability = {c.case_id: c.stability for c in card.cases}
    assert stability == {"0": "stable-pass", "1": "flaky", "2": "stable-fail", "3": "flaky"}
    meta = load_meta(run)
    assert (meta.config.model, meta.config.subject) == ("gpt-4.1-mini", "llm_agent")
    assert meta.suite == "tau2-airline" and "user simulator user_simulator gpt-4.1" in meta.suite_version
    assert meta.options["import"]["tau2_git_commit"].startswith("8d005b0e")
    assert card.cost.cost_usd is not None and card.cost.cost_usd > 0
    # the same file imported again is the same run
    assert load_meta(_import(TAU2, tmp_path / "again")).run_id == meta.run_id


def test_a_pass_threshold_moves_the_line_is_recorded_and_compares_only_with_its_own(tmp_path: Path) -> None:
    full = _import(TAU2, tmp_path / "full")
    half = _import(TAU2, tmp_path / "half", "--pass-threshold", "0.5")
    by_key = {a.key: a for a in read_journal(half / "results.jsonl")}
    assert by_key["3", 1].status.value == "PASS" and by_key["1", 1].status.value == "FAIL"
    assert load_scorecard(half).summary.counts["PASS"] == 7
    meta = load_meta(half)
    assert meta.options["import"]["pass_threshold"] == 0.5 and "pass at score >= 0.5" in meta.suite_version
    assert "pass_threshold" not in load_meta(full).options["import"]
    res = CliRunner().invoke(cli, ["compare", str(full), str(half), "--json"])
    assert res.exit_code == 3 and "suite version differs" in res.output


def test_tau_bench_results_read_the_model_from_the_file_name_and_a_provider_error_is_infra(
    tmp_path: Path,
) -> None:
    run = _import(TAU1, tmp_path / "a")
    by_key = {a.key: a for a in read_journal(run / "results.jsonl")}
    assert {k: a.status.value for k, a in by_key.items()} == {
        ("0", 0): "PASS", ("1", 0): "FAIL", ("2", 0): "INFRA_ERROR",
        ("0", 1): "PASS", ("1", 1): "PASS", ("2", 1): "FAIL",
    }  # fmt: skip
    assert by_key["2", 0].error is not None and by_key["2", 0].error.type == "APIConnectionError"
    meta = load_meta(run)
    assert (meta.config.model, meta.config.subject, meta.suite) == ("gpt-4o", "tool-calling", "tau-bench")
    # a task that raised for another reason is the subject's ERROR
    rows = json.loads(TAU1.read_text())
    rows[2]["info"]["error"] = "ValueError: the agent returned no action"
    other = tmp_path / TAU1.name
    other.write_text(json.dumps(rows))
    broken = {a.key: a for a in read_journal(_import(other, tmp_path / "b") / "results.jsonl")}
    assert broken["2", 0].status.value == "ERROR" and broken["2", 0].error.type == "SolveError"


def test_the_dir_format_reads_each_simulation_file_its_index_names(tmp_path: Path) -> None:
    """tau2's dir format (``Results.save(path, format="dir")``): results.json without the simulations, an index
    of them, and one simulations/<id>.json each."""
    data = json.loads(TAU2.read_text())
    sims = data.pop("simulations")
    data["simulation_index"] = [
        {
            "id": s["id"],
            "task_id": s["task_id"],
            "trial": s["trial"],
            "reward": (s["reward_info"] or {}).get("reward"),
        }
        for s in sims
    ]
    (tmp_path / "simulations").mkdir()
    for s in sims:
        (tmp_path / "simulations" / f"{s['id']}.json").write_text(json.dumps(s))
    (tmp_path / "results.json").write_text(json.dumps(data))
    run = _import(tmp_path / "results.json", tmp_path / "run")
    whole = _import(TAU2, tmp_path / "whole")
    assert [(a.key, a.status) for a in read_journal(run / "results.jsonl")] == [
        (a.key, a.status) for a in read_journal(whole / "results.jsonl")
    ]
    (tmp_path / "simulations" / f"{sims[4]['id']}.json").unlink()
    res = CliRunner().invoke(
        cli, ["import", "tau2", str(tmp_path / "results.json"), "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 1 and "which is missing" in str(res.exception) and not (tmp_path / "x").exists()


def _no_simulations(p: Path) -> None:
    data = json.loads(TAU2.read_text())
    data["simulations"] = []
    p.write_text(json.dumps(data))


def _no_trial(p: Path) -> None:
    rows = json.loads(TAU1.read_text())
    del rows[0]["trial"]
    p.write_text(json.dumps(rows))


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: p.write_text(TAU2.read_text()[:900]), "a tau2-bench results file"),
        (lambda p: p.write_text('{"results": {"version": 3}}'), "it has no info"),
        (_no_simulations, "it has no simulations"),
        (_no_trial, "entry 0 has no task_id, reward, traj and trial"),
    ],
)
def test_a_file_that_is_not_a_tau_result_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make, expected
) -> None:
    bad = tmp_path / "results.json"
    make(bad)
    with pytest.raises(SystemExit) as exc:
        main(["import", "tau2", str(bad), "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and len(err.splitlines()) == 1 and str(bad) in err and expected in err, err
    assert not (tmp_path / "run").exists()


def test_a_pass_threshold_is_refused_where_the_tool_records_its_own_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = TAU.parent / "swebench" / "acme__agent-1.demo.json"
    with pytest.raises(SystemExit) as exc:
        main(["import", "swebench", str(summary), "--pass-threshold", "0.5", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and err.count("\n") == 0 and "--pass-threshold" in err, err
    assert not (tmp_path / "r").exists()
    with pytest.raises(SystemExit) as exc:  # nor a line no score can reach
        main(["import", "tau2", str(TAU2), "--pass-threshold", "nan", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 1 and err.count("\n") == 0 and "--pass-threshold" in err, err
    assert not (tmp_path / "r").exists()
