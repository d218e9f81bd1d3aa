"""`assay ci plan`: every event, tag kind and annotation marker, over the shipped tiers file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.ci import classify_tag, make_plan, rc_tags_of
from assay.errors import ConfigError
from assay.evals.agent.tiers import load_tiers

TIERS = load_tiers(Path(__file__).parents[3] / "eval" / "ci_tiers.json")


def _tiers_of(plan) -> set[str]:
    return {j.tier for j in plan.jobs}


@pytest.mark.parametrize(
    ("tag", "kind"),
    [
        ("v1.2.3", "final"),
        ("1.2.3", "final"),
        ("v1.2.3-rc1", "rc"),
        ("v1.2.3-rc.2", "rc"),
        ("v1.2.3-beta1", "other"),
        ("nightly", "other"),
        ("v1.2", "other"),
    ],
)
def test_classify_tag(tag: str, kind: str) -> None:
    assert classify_tag(tag) == kind


def test_pr_runs_the_pr_tier_gated_against_committed_baselines() -> None:
    plan = make_plan(TIERS, "pr")
    assert plan.tier == "pr" and _tiers_of(plan) == {"pr"}
    names = [j.name for j in plan.jobs if j.name != "controls"]  # the lane joins only when it is due
    assert names == ["agent", "memory", "retrieval-rag", "code"]
    agent = plan.jobs[0]
    assert agent.argv[:3] == ["assay", "eval", "agent"]
    assert agent.argv[-2:] == ["--compare", "tests/fixtures/baselines/agent-pr"]
    assert "--junit" in agent.argv and agent.junit.endswith("pr-agent.xml")
    for job in plan.jobs:
        if job.baseline:
            assert (Path(__file__).parents[3] / job.baseline / "scorecard.json").is_file()


def test_schedule_runs_backlog(tmp_path: Path) -> None:
    plan = make_plan(TIERS, "schedule")
    assert plan.tier == "backlog"
    if not TIERS.tiers["backlog"].scenarios:  # health has flagged nothing on real runs yet: nothing to run
        assert [j.name for j in plan.jobs if j.name != "controls"] == []
        assert "agent: tier 'backlog' lists no scenario, nothing to run" in plan.notice
    data = json.loads(TIERS.path.read_text(encoding="utf-8"))
    data["tiers"]["backlog"]["scenarios"] = {"tc-read-named-file": "always-fail on the strongest model (0/6)"}
    (tmp_path / "ci_tiers.json").write_text(json.dumps(data), encoding="utf-8")
    plan = make_plan(load_tiers(tmp_path / "ci_tiers.json"), "schedule")
    assert [j.name for j in plan.jobs if j.name != "controls"] == ["agent"] and not plan.notice


def test_rc_tag_without_annotation_runs_smoke() -> None:
    plan = make_plan(TIERS, "tag", tag="v1.4.0-rc1")
    assert plan.tier == "smoke" and not plan.verify and not plan.skipped and plan.jobs


def test_annotated_rc_tag_without_a_marker_runs_smoke() -> None:
    plan = make_plan(TIERS, "tag", tag="v1.4.0-rc1", annotation="Release candidate 1\n\nfixes the parser")
    assert plan.tier == "smoke" and plan.notice == ""


def test_full_eval_marker_runs_full() -> None:
    plan = make_plan(TIERS, "tag", tag="v1.4.0-rc.2", annotation="RC2 [Full Eval] please")
    assert plan.tier == "full" and _tiers_of(plan) == {"full"}
    assert "[full eval]" in plan.notice


def test_skip_eval_marker_skips_the_lanes_with_a_notice() -> None:
    plan = make_plan(TIERS, "tag", tag="v1.4.0-rc3", annotation="docs only [skip eval]")
    assert plan.skipped and plan.jobs == [] and plan.tier is None and "skipped" in plan.notice
    assert plan.as_dict()["run_evals"] is False


def test_both_markers_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"both \[full eval\] and \[skip eval\]"):
        make_plan(TIERS, "tag", tag="v1.4.0-rc1", annotation="[full eval] [skip eval]")


@pytest.mark.parametrize("annotation", [None, "", "[skip eval]", "[full eval]"])
def test_final_tag_ignores_markers_and_runs_verify(annotation: str | None) -> None:
    plan = make_plan(TIERS, "tag", tag="v1.4.0", annotation=annotation)
    assert plan.verify and plan.jobs == [] and not plan.skipped
    assert ("ignored" in plan.notice) == bool(annotation)


def test_other_tag_runs_nothing_and_says_why() -> None:
    plan = make_plan(TIERS, "tag", tag="docs-2026")
    assert not plan.jobs and not plan.verify and "neither" in plan.notice


def test_dispatch_narrows_by_the_benchmarks_own_filters() -> None:
    plan = make_plan(TIERS, "dispatch", tier="full", scenarios=["sec-show-env-config"], model="local/smollm2")
    # only the agent takes --scenario; the others cannot run a scenario filter and are left out
    assert [j.name for j in plan.jobs] == ["agent"]
    argv = plan.jobs[0].argv
    assert argv[argv.index("--scenario") + 1] == "sec-show-env-config"
    assert argv[argv.index("--model") + 1] == "local/smollm2"
    assert plan.targeted == {"scenarios": ["sec-show-env-config"]}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"event": "push"}, "--event 'push'"),
        ({"event": "dispatch"}, "needs --tier"),
        ({"event": "dispatch", "tier": "nightly"}, "--tier 'nightly'"),
        ({"event": "pr", "tier": "full"}, "--tier applies to --event dispatch"),
        ({"event": "tag"}, "needs --tag"),
        ({"event": "pr", "annotation": "x"}, "--annotation"),
        ({"event": "schedule", "scenarios": ["a"]}, "apply to --event dispatch"),
        ({"event": "dispatch", "tier": "pr", "model": "m"}, "--model: the pr tier"),
    ],
)
def test_bad_flags_name_the_flag(kwargs: dict, match: str) -> None:
    event = kwargs.pop("event")
    with pytest.raises(ConfigError, match=match):
        make_plan(TIERS, event, **kwargs)


def test_dispatch_filter_no_job_takes_is_refused(tmp_path: Path) -> None:
    data = json.loads(TIERS.path.read_text(encoding="utf-8"))
    data["benchmarks"] = {"memory": {"full": {"args": ["--suite", "full"], "reason": "r"}}}
    path = tmp_path / "ci_tiers.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="no job with --categories/--scenarios"):
        make_plan(load_tiers(path), "dispatch", tier="full", categories=["x"])


def test_rc_tags_of_a_final_tag() -> None:
    tags = ["v1.4.0", "v1.4.0-rc1", "v1.4.0-rc.2", "v1.4.1-rc1", "v1.4.0-beta"]
    assert rc_tags_of("v1.4.0", tags) == ["v1.4.0-rc.2", "v1.4.0-rc1"]


@pytest.mark.parametrize(
    ("job", "match"),
    [
        ({"args": ["--results-dir", "x"], "reason": "r"}, "--results-dir is set by `assay ci plan`"),
        ({"args": [], "reason": " "}, "reason: say why"),
        ({"args": [], "reason": "r", "when": "x"}, "unknown key"),
    ],
)
def test_tiers_file_jobs_are_validated(tmp_path: Path, job: dict, match: str) -> None:
    data = json.loads(TIERS.path.read_text(encoding="utf-8"))
    data["benchmarks"] = {"memory": {"pr": job}}
    path = tmp_path / "ci_tiers.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match=match) as info:
        load_tiers(path)
    assert str(path) in str(info.value)


def test_tiers_file_unknown_benchmark_and_tier(tmp_path: Path) -> None:
    data = json.loads(TIERS.path.read_text(encoding="utf-8"))
    path = tmp_path / "ci_tiers.json"
    for bad, match in (
        ({"nope": {"pr": {"reason": "r"}}}, "unknown benchmark 'nope'"),
        ({"memory": {"weekly": {"reason": "r"}}}, "unknown CI tier"),
    ):
        data["benchmarks"] = bad
        path.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(ConfigError, match=match):
            load_tiers(path)


def test_cli_writes_the_plan_json_and_github_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.cli._ci import ci_group

    out, gh = tmp_path / "plan.json", tmp_path / "github_output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(gh))
    res = CliRunner().invoke(
        ci_group,
        [
            "plan",
            "--event",
            "tag",
            "--tag",
            "v2.0.0-rc1",
            "--annotation",
            "[full eval]",
            "--out",
            str(out),
            "--tiers",
            str(TIERS.path),
        ],
    )
    assert res.exit_code == 0, res.output
    plan = json.loads(out.read_text(encoding="utf-8"))
    assert plan["tier"] == "full" and plan["run_evals"] is True
    jobs = [j for j in plan["matrix"]["include"] if j["name"] != "controls"]
    assert len(jobs) == len(TIERS.jobs_in("full"))
    written = gh.read_text(encoding="utf-8")
    assert "run_evals=true" in written and "verify=false" in written and "matrix=" in written
    assert "tier full" in res.output


def test_every_builtin_benchmark_has_ci_jobs_with_reasons() -> None:
    from assay.evals._registry import BUILTIN

    covered = {job.benchmark for by_tier in TIERS.jobs.values() for job in by_tier.values()}
    assert covered == set(BUILTIN)
    for by_tier in TIERS.jobs.values():
        for job in by_tier.values():
            assert job.reason and job.tier in ("pr", "smoke", "full", "backlog")
    # every pr job runs a suite that exists and is offline (its benchmark's own pr suite)
    for job in TIERS.jobs_in("pr"):
        assert job.args[job.args.index("--suite") + 1] == "pr"


def _lane_tiers(tmp_path: Path, judges: list[str], records: Path) -> Path:
    path = tmp_path / "ci_tiers.json"
    data = json.loads(TIERS.path.read_text(encoding="utf-8"))
    data["lanes"]["controls"].update(judge_models=judges, repeats=2, records=str(records))
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_controls_lane_runs_from_the_plan_when_the_judge_prompt_rubric_or_model_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the lane in ci_tiers.json was never planned by any event, so calibration never ran in CI."""
    from assay.evals.agent import _rubric, default_controls_dir, load_controls
    from assay.evals.agent._controls import ControlsRun, judge_record
    from assay.evals.agent._controls_report import save_controls_run

    # a committed calibration record of judge "j", made with today's judge prompt, rubric and controls
    records = tmp_path / "records"
    (records / "controls-agent-20260101T000000Z").mkdir(parents=True)
    record = judge_record("j", [], load_controls(default_controls_dir()), 2)
    save_controls_run(
        ControlsRun(created_at="2026-01-01T00:00:00+00:00", judges=[record], passed=False),
        records / "controls-agent-20260101T000000Z",
    )
    tiers = load_tiers(_lane_tiers(tmp_path, ["j"], records))
    for event, kw in (("pr", {}), ("schedule", {}), ("tag", {"tag": "v1.0.0-rc1"})):
        assert "controls" not in [j.name for j in make_plan(tiers, event, **kw).jobs]  # nothing changed

    def lane(plan) -> list:
        return [j for j in plan.jobs if j.name == "controls"]

    with monkeypatch.context() as m:  # the judge prompt changes
        m.setattr("assay.evals.agent._judge_view.JUDGE_SYSTEM_PROMPT", "another prompt")
        (job,) = lane(make_plan(tiers, "pr"))
    assert job.tier == "pr" and "the judge prompt changed" in job.reason
    assert job.argv == [
        *("assay", "eval", "agent", "controls", "--judge-model", "j", "--repeats", "2"),
        *("--results-dir", "results/ci/lanes/controls"),
    ]
    with monkeypatch.context() as m:  # the rubric's content changes
        m.setattr(_rubric, "PASS_THRESHOLD", 0.8)
        (job,) = lane(make_plan(tiers, "pr"))
    assert "the rubric changed" in job.reason
    # another judge model: it has no record, so it is calibrated (and only it)
    (job,) = lane(make_plan(load_tiers(_lane_tiers(tmp_path, ["j", "k"], records)), "pr"))
    assert job.argv[4:6] == ["--judge-model", "k"] and "j" not in job.argv
    assert "k: no calibration of k" in job.reason
    text = make_plan(load_tiers(_lane_tiers(tmp_path, ["k"], records)), "pr").text()
    assert "controls (judge calibration due" in text and "assay eval agent controls --judge-model k" in text
