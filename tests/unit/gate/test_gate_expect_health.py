"""Baselines, expectations (gate / propose), scenario health and noise.json from run dirs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assay.errors import ConfigError, NotComparableError, UsageError
from assay.gate import (
    find_expectations,
    gate,
    health,
    health_markdown,
    load_expectations,
    load_run,
    measure,
    noise,
    propose,
    save_baseline,
)
from assay.gate._simulate import scorecard_from_outcomes as card
from assay.gate._simulate import simulated_meta
from assay.runs import Usage
from assay.runs.records import MetricSpec, Scorecard, SubjectConfig


def write_run(root: Path, name: str, sc: Scorecard, with_meta: bool = True) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(sc.model_dump_json(), encoding="utf-8")
    if with_meta:
        meta = simulated_meta(
            [c.case_id for c in sc.cases], sc.iterations, run_id=sc.run_id, config=sc.config
        )
        meta = meta.model_copy(
            update={"benchmark": sc.benchmark, "hostname": "box-1", "git_commit": "abc123"}
        )
        (d / "meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return d


# --- baselines ----------------------------------------------------------------------------------------


def test_save_baseline_copies_scorecard_and_meta(tmp_path: Path) -> None:
    run = write_run(tmp_path, "run", card({"a": "PPP", "b": "PFP"}, run_id="r1"))
    dest = save_baseline(run, tmp_path / "baselines" / "agent")
    assert load_run(dest).scorecard == load_run(run).scorecard
    assert json.loads((dest / "meta.json").read_text())["hostname"] == "box-1"
    # replacing an existing baseline is allowed
    run2 = write_run(tmp_path, "run2", card({"a": "PPP", "b": "PPP"}, run_id="r2"))
    save_baseline(run2, dest)
    assert load_run(dest).scorecard.run_id == "r2"


def test_save_baseline_refuses_single_iteration_and_incomplete(tmp_path: Path) -> None:
    one = write_run(tmp_path, "one", card({"a": "P"}, run_id="one"))
    with pytest.raises(UsageError, match=r"1-iteration.*--force"):
        save_baseline(one, tmp_path / "b1")
    assert not (tmp_path / "b1").exists()
    assert (save_baseline(one, tmp_path / "b1", force=True) / "scorecard.json").is_file()
    part = write_run(tmp_path, "part", card({"a": "PP-"}, run_id="part"))
    with pytest.raises(UsageError, match="incomplete"):
        save_baseline(part, tmp_path / "b2")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        save_baseline(write_run(tmp_path, "ok", card({"a": "PP"})), tmp_path / "file")


# --- expectations -------------------------------------------------------------------------------------


def with_cost(sc: Scorecard, tokens: int, cost: float) -> Scorecard:
    return sc.model_copy(update={"cost": Usage(input_tokens=tokens, calls=1, cost_usd=cost)})


QUALITY = [
    MetricSpec(name="quality", kind="continuous", direction="higher"),
    MetricSpec(name="steps", kind="continuous", direction="lower"),
]


def quality_run(outcomes: dict[str, str], quality: float, steps: float, run_id: str) -> Scorecard:
    iters = len(next(iter(outcomes.values())))
    return card(
        outcomes,
        run_id=run_id,
        metrics={c: [{"quality": quality, "steps": steps}] * iters for c in outcomes},
        elapsed={c: 2.0 for c in outcomes},
        metric_specs=QUALITY,
    )


def test_measure() -> None:
    sc = with_cost(quality_run({"a": "PP", "b": "PF", "c": "FF"}, 4.0, 6.0, "r"), 3000, 0.3)
    m = measure(sc)
    assert m["passed"] == pytest.approx(1.5)
    assert m["pass_rate"] == pytest.approx(0.5)
    assert m["tokens"] == pytest.approx(1500)  # per iteration of the suite
    assert m["cost_usd"] == pytest.approx(0.15)
    assert m["wall_time_s"] == pytest.approx(6.0)
    assert m["quality"] == pytest.approx(4.0) and m["steps"] == pytest.approx(6.0)


def test_propose_worst_run_plus_headroom(tmp_path: Path) -> None:
    r1 = write_run(
        tmp_path, "r1", with_cost(quality_run({"a": "PP", "b": "PP", "c": "FF"}, 4.2, 5.0, "r1"), 2000, 0.2)
    )
    r2 = write_run(
        tmp_path, "r2", with_cost(quality_run({"a": "PP", "b": "PF", "c": "FF"}, 3.8, 7.0, "r2"), 4000, 0.4)
    )
    out = tmp_path / "exp" / "agent.yaml"
    exp = propose([r1, r2], out)
    lim = exp.limits
    assert lim["min_passed"] == pytest.approx(1.5 - 1)  # worst run's floor, one case may flip
    assert lim["min_pass_rate"] == pytest.approx(0.5 - 1 / 3, abs=1e-4)
    assert lim["min_quality"] == pytest.approx(3.8 - 0.5)
    assert lim["max_steps"] == pytest.approx(7.0 * 1.35)
    assert lim["max_tokens"] == pytest.approx(2000 * 1.35)  # most expensive run's ceiling
    assert lim["max_wall_time_s"] == pytest.approx(6.0 * 1.5)
    assert lim["max_cost_usd"] == pytest.approx(0.2 * 1.35)
    data = yaml.safe_load(out.read_text())
    assert data["benchmark"] == "sim" and data["model"] == "sim-model" and data["judge_model"] == "sim-judge"
    assert [m["commit"] for m in data["measured"]] == ["abc123", "abc123"]
    assert data["measured"][0]["machine"] == "box-1"
    # every run the limits came from meets them
    for r in (r1, r2):
        assert gate(r, expect=out, enforce=True).status == "met"
    # json works too
    assert propose([r1], tmp_path / "e.json").limits["min_passed"] == pytest.approx(1.0)
    with pytest.raises(ConfigError, match=r"\.yaml, \.yml or \.json"):
        propose([r1], tmp_path / "e.txt")


def test_propose_refuses_mixed_configurations(tmp_path: Path) -> None:
    r1 = write_run(tmp_path, "r1", card({"a": "PP"}))
    r2 = write_run(
        tmp_path,
        "r2",
        card({"a": "PP"}, config=SubjectConfig(subject="sim", model="m2", judge_model="sim-judge")),
    )
    with pytest.raises(NotComparableError):
        propose([r1, r2], tmp_path / "x.yaml")


def test_gate_checks_and_enforce(tmp_path: Path) -> None:
    good = write_run(tmp_path, "good", quality_run({"a": "PP", "b": "PP"}, 4.0, 5.0, "g"))
    exp = tmp_path / "exp.yaml"
    exp.write_text(
        yaml.safe_dump(
            {
                "benchmark": "sim",
                "suite": "pr",
                "model": "sim-model",
                "judge_model": "sim-judge",
                "limits": {"min_passed": 2, "min_quality": 3.5, "max_steps": 6},
            }
        )
    )
    res = gate(good, expect=exp, enforce=True)
    assert res.status == "met" and res.exit_code == 0 and len(res.checks) == 3
    bad = write_run(tmp_path, "bad", quality_run({"a": "PP", "b": "FF"}, 3.0, 9.0, "b"))
    res = gate(bad, expect=exp)
    assert res.status == "missed" and res.exit_code == 0  # reported, not enforced
    assert {c.name for c in res.checks if c.ok is False} == {"min_passed", "min_quality", "max_steps"}
    assert gate(bad, expect=exp, enforce=True).exit_code == 2
    # a case with no measured attempt is a miss under --enforce even when every limit holds
    unm = write_run(tmp_path, "unm", quality_run({"a": "PP", "b": "PP", "c": "II"}, 4.0, 5.0, "u"))
    res = gate(unm, expect=exp, enforce=True)
    assert res.unmeasured_cases == ["c"] and res.exit_code == 2
    # a limit on something the run did not measure
    exp.write_text(exp.read_text().replace("max_steps: 6", "max_steps: 6\n  min_recall: 0.5"))
    res = gate(good, expect=exp, enforce=True)
    assert res.exit_code == 2 and [c.name for c in res.checks if c.ok is None] == ["min_recall"]


def test_gate_not_gated_missing_file_and_wrong_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = write_run(tmp_path, "run", card({"a": "PP"}))
    monkeypatch.chdir(tmp_path)
    res = gate(run, enforce=True)
    assert res.status == "not-gated" and res.exit_code == 0 and "not gated yet" in res.reason
    with pytest.raises(ConfigError, match=r"nope\.yaml"):
        gate(run, expect=tmp_path / "nope.yaml")
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps(
            {
                "benchmark": "sim",
                "suite": "pr",
                "model": "m2",
                "judge_model": "sim-judge",
                "limits": {"min_passed": 0},
            }
        )
    )
    res = gate(run, expect=other)
    assert res.status == "not-comparable" and res.exit_code == 3 and "model 'm2'" in res.reason


def test_gate_finds_matching_file_by_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = write_run(tmp_path, "run", card({"a": "PP"}))
    d = tmp_path / "expectations"
    d.mkdir()
    (d / "a-other.yaml").write_text(
        yaml.safe_dump({"benchmark": "sim", "suite": "pr", "model": "x", "limits": {"min_passed": 5}})
    )
    (d / "b-mine.yaml").write_text(
        yaml.safe_dump(
            {
                "benchmark": "sim",
                "suite": "pr",
                "model": "sim-model",
                "judge_model": "sim-judge",
                "limits": {"min_passed": 1},
            }
        )
    )
    monkeypatch.setenv("ASSAY_EXPECTATIONS_DIR", str(d))
    assert find_expectations(load_run(run).scorecard) == d / "b-mine.yaml"
    res = gate(run, enforce=True)
    assert res.status == "met" and res.expectations == str(d / "b-mine.yaml")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("benchmark: [unclosed", "cannot parse"),
        ("- a list", "mapping"),
        ("benchmark: sim\nsuite: pr\nlimits: {passed: 3}", "min_<quantity>"),
        ("suite: pr\nlimits: {}", "benchmark"),
    ],
)
def test_bad_expectations_files(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "exp.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=needle) as info:
        load_expectations(f)
    assert str(f) in str(info.value)


# --- health -------------------------------------------------------------------------------------------


def test_health_flags_and_headroom(tmp_path: Path) -> None:
    strong = SubjectConfig(subject="sim", model="big", judge_model="j")
    weak = SubjectConfig(subject="sim", model="small", judge_model="j")
    cats = {"easy": "basics", "hard": "tools", "inv": "tools", "wob": "basics", "broke": "tools"}
    runs = [
        write_run(
            tmp_path,
            "big1",
            card(
                {"easy": "PPP", "hard": "PPP", "inv": "FFP", "wob": "PFP", "broke": "FFF"},
                config=strong,
                categories=cats,
                run_id="big1",
            ),
        ),
        write_run(
            tmp_path,
            "big2",
            card(
                {"easy": "PPP", "hard": "PPP", "inv": "FFF", "wob": "PPF", "broke": "FFF"},
                config=strong,
                categories=cats,
                run_id="big2",
            ),
        ),
        *(
            write_run(
                tmp_path,
                name,
                card(
                    {"easy": "PPP", "hard": "FFF", "inv": "PPP", "wob": "FFF", "broke": "FFF"},
                    config=weak,
                    categories=cats,
                    run_id=name,
                ),
            )
            for name in ("small1", "small2")
        ),
    ]
    rep = health(runs, out=tmp_path / "health")
    assert rep.models == ["big", "small"]
    assert rep.flagged("saturated") == ["easy"]
    assert rep.flagged("always-fail") == ["broke"]
    # small 6/6 against big 1/6: their intervals part (1/6 against one run's 3/3 would not)
    assert rep.flagged("inverted") == ["inv"]
    assert rep.flagged("flaky") == ["inv", "wob"]
    assert rep.flagged("not-measured") == []
    by_cat = {c.category: c for c in rep.categories}
    # strongest model: basics 6/6 + 4/6 passes, tools 6/6 + 1/6 + 0/6
    assert by_cat["basics"].strongest_pass_rate == pytest.approx(10 / 12)
    assert by_cat["tools"].headroom == pytest.approx(1 - 7 / 18)
    saved = json.loads((tmp_path / "health" / "health.json").read_text())
    assert saved["counts"]["saturated"] == 1
    md = (tmp_path / "health" / "health.md").read_text()
    assert "| inv | tools | inverted, flaky | 1/6 | 6/6 |" in md
    assert "| basics | 2 | 83% | 17% |" in md


def test_health_single_model_and_errors(tmp_path: Path) -> None:
    r = write_run(tmp_path, "r", card({"a": "PP", "b": "II"}))
    rep = health([r])
    assert rep.flagged("saturated") == ["a"] and rep.flagged("not-measured") == ["b"]
    other = write_run(tmp_path, "o", card({"a": "PP"}, suite="nightly"))
    with pytest.raises(NotComparableError, match="one suite"):
        health([r, other])
    with pytest.raises(ConfigError):
        health([])


# --- noise from run dirs ------------------------------------------------------------------------------


def test_noise_from_run_dirs_writes_file(tmp_path: Path) -> None:
    dirs = [
        write_run(tmp_path, f"n{i}", card({"a": o, "b": "PPP"}, run_id=f"n{i}"))
        for i, o in enumerate(["PFP", "PPP", "FFP"])
    ]
    rep = noise(dirs, out=tmp_path / "noise.json")
    saved = json.loads((tmp_path / "noise.json").read_text())
    assert saved["run_ids"] == ["n0", "n1", "n2"]
    assert saved["cases"]["a"]["pass_rates"] == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert rep.is_flaky("a") and not rep.is_flaky("b")
    with pytest.raises(ConfigError, match="no such run directory"):
        noise([dirs[0], tmp_path / "missing"])


def test_health_reads_skips_single_attempts_and_metric_kinds(tmp_path: Path) -> None:
    """Before: a skipped case was "not-measured", one passing attempt "saturated", metrics were not read."""
    specs = [
        MetricSpec(name="recall", kind="proportion"),
        MetricSpec(name="latency_ms", kind="continuous", direction="lower", tolerance=0.1),
    ]
    strong = SubjectConfig(subject="sim", model="big", judge_model="j")
    weak = SubjectConfig(subject="sim", model="small", judge_model="j")

    def run(name: str, cfg: SubjectConfig, outcomes: dict[str, str], ms: float) -> Path:
        metrics = {c: [{"recall": 1.0, "latency_ms": ms}] * len(o) for c, o in outcomes.items() if "P" in o}
        sc = card(outcomes, run_id=name, config=cfg, metrics=metrics, metric_specs=specs)
        return write_run(tmp_path, name, sc)

    rep = health(
        [
            run("big", strong, {"once": "P", "twice": "PP", "skip": "SS", "down": "II"}, 500.0),
            run("small", weak, {"once": "P", "twice": "PP", "skip": "SS", "down": "II"}, 100.0),
        ]
    )
    assert rep.flagged("saturated") == ["twice"]  # one attempt a model cannot say the case is stable
    assert rep.flagged("skipped") == ["skip"] and rep.flagged("not-measured") == ["down"]
    by = {m.name: m for m in rep.metrics}
    assert by["recall"].kind == "proportion" and by["recall"].flags == ["saturated"]
    # a continuous metric has no ceiling; the weaker model is 5x faster: beyond the relative tolerance
    assert by["latency_ms"].flags == ["inverted"]
    assert "| latency_ms | continuous |" in health_markdown(rep)


def test_propose_widens_each_metric_by_its_kind(tmp_path: Path) -> None:
    """Before: every metric got max(tolerance, 1.5/n): a throughput of 2000 req/s got a floor of 1998.5,
    a count of failed documents a ceiling of 1.5/n documents."""
    from assay.gate._simulate import _T0
    from assay.runs.records import Attempt, MetricValue, Status
    from assay.stats.folding import fold

    def run(name: str, rps: float) -> Path:
        metrics = {
            "request_throughput": MetricValue(
                value=rps, n=3, kind="continuous", unit="req/s", samples=[rps] * 3
            ),
            "accuracy_all": MetricValue(value=1.0, n=200, kind="proportion"),
            "docs_failed_to_index": MetricValue(value=0.0, n=40, kind="count", direction="lower"),
        }
        meta = simulated_meta(["level"], 1, run_id=name)
        sc = fold([Attempt(case_id="level", status=Status.PASS, started_at=_T0)], meta, run_metrics=metrics)
        return write_run(tmp_path, name, sc)

    lim = propose([run("a", 2000.0), run("b", 2100.0)], tmp_path / "e.yaml").limits
    assert lim["min_request_throughput"] == pytest.approx(2000.0 / 1.35, abs=1e-3)  # relative, not -1.5
    assert lim["min_accuracy_all"] == pytest.approx(1 - 1 / 200, abs=1e-4)  # one email of 200
    assert lim["max_docs_failed_to_index"] == 0.0  # a count: no document may newly fail
