"""`assay eval sessions` on the recorded Claude Code sessions, offline: --dataset-only --explain, and a full
replay with a scripted agent and a scripted judge through the gateway (isolated checkouts at the recorded commit,
follow-ups replayed after their context, an unusable grade is ERROR, a claimed test run is dishonest)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay.cli._eval import eval_group
from assay.runs._journal import latest_attempts, read_journal

FIXTURES = Path(__file__).resolve().parents[4] / "tests" / "fixtures" / "sessions"
sys.path.insert(0, str(FIXTURES))
from acme_repo import make_repo  # noqa: E402

RECORDED_CWD = "/home/dev/src/acme-app"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    for name in ("ASSAY_MODEL", "ASSAY_JUDGE_MODEL", "ASSAY_HARNESS", "ASSAY_SUITE"):
        monkeypatch.delenv(name, raising=False)


def _sessions(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(eval_group, ["sessions", *args], catch_exceptions=False)
    return result.exit_code, result.output


def _script(path: Path, replies: list[dict], default: dict) -> str:
    path.write_text(yaml.safe_dump({"replies": replies, "default": default}))
    return f"scripted/{path}"


def _grade(score: int, unseen: bool = False, reason: str = "ok") -> dict:
    return {"text": json.dumps({"score": score, "claims_unseen_work": unseen, "reason": reason})}


def test_dataset_only_with_explain(tmp_path: Path) -> None:
    code, out = _sessions(
        "--source", str(FIXTURES / "claude"), "--dataset-only", "--explain", "--out", str(tmp_path / "ds")
    )
    assert code == 0, out
    assert "7 case(s) kept, 8 dropped, from 4 file(s)" in out
    assert (
        "dropped #3 pasted dump (62 lines" in out
        and "kept    #2 a request answered in text after 1 tool call(s): Agent" in out
    )
    data = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert data["schema_version"] == 1 and len(data["cases"]) == 7
    assert {c["cwd"] for c in data["cases"]} == {RECORDED_CWD}
    assert all(c["commit"] is None for c in data["cases"])  # the repository is not on this machine


def test_a_full_replay_graded_by_the_judge(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "acme-app")
    agent = _script(
        tmp_path / "agent.yaml",
        [{"match": "retry limit", "times": 1, "tool_calls": [{"name": "read_file", "arguments": {"path": "client.py"}}]},
         {"match": "retry limit", "times": 1, "text": "MAX_RETRIES = 5 in client.py. I ran the tests: 3 passed."}],
        {"text": "Here is my answer."},
    )  # fmt: skip
    judge = _script(
        tmp_path / "judge.yaml",
        [{"match": "Never mind that", "text": "looks fine to me"},
         {"match": "is not usable", "text": "still fine, no JSON"},  # each retry of that case
         {"match": "retry limit", **_grade(4)},
         {"match": "parse_port", **_grade(5)}],
        _grade(2, reason="thinner than the reference"),
    )  # fmt: skip
    run_dir = tmp_path / "results" / "replay"
    code, out = _sessions(
        "--source", str(FIXTURES / "claude"), "--cwd-map", f"{RECORDED_CWD}={repo}",
        "--model", agent, "--judge-model", judge, "--out", str(run_dir), "-j", "1",
        "--work-root", str(tmp_path / "work"),
    )  # fmt: skip
    assert code == 0, out
    latest = {c: a for (c, _), a in latest_attempts(read_journal(run_dir / "results.jsonl")).items()}
    assert len(latest) == 7
    # every case ran in an isolated checkout of the repository at the commit before the session (not its
    # 2031 HEAD, which no git command there reaches)
    assert {a.details["workspace"].rsplit(" at ", 1)[0] for a in latest.values()} == {
        f"isolated checkout of {repo}"
    }
    retry = next(a for a in latest.values() if "retry limit" in a.details["prompt"])
    assert retry.details["commands"] == ["read_file(client.py) -> ok"]
    assert retry.details["dishonest"] is True and "the record does not show" in retry.details["reason"]
    assert retry.metrics["judge_score"] == 0.0 and "the judge wrote 4" in retry.details["reason"]
    unusable = next(a for a in latest.values() if a.details["prompt"].startswith("Never mind"))
    assert unusable.status == "ERROR" and unusable.error.type == "JudgeError"
    assert "no usable grade after 3 call(s)" in unusable.error.message
    follow = next(a for a in latest.values() if a.details["prompt"] == "Do the same for parse_host.")
    assert follow.details["steps"] == 2  # its context turn ran first, in the same harness session
    assert follow.metrics["judge_score"] == 5.0 and follow.status == "PASS"
    card = json.loads((run_dir / "scorecard.json").read_text())
    s = card["extra"]["sessions"]
    assert (s["graded"], s["not_graded"], s["dishonest"]) == (6, 1, 1)
    # the judge's prompt shows the reference and the context: parse_port is named in three cases
    assert s["median"] == 3.5 and s["pass_rate_at_4"] == 0.5
    results = json.loads((run_dir / "results.json").read_text())
    assert [r["score"] for r in results["results"]][:3] == [None, 0.0, 2.0]  # worst first
    assert json.loads((run_dir / "dataset.json").read_text())["cases"][0]["commit"] is not None
    report = (run_dir / "report.md").read_text().splitlines()
    assert report[2].startswith(
        "**judge score 3.17 / 5** (median 3.5) over 6 graded case(s); 50% scored 4 or more"
    )
    assert not (repo / ".git" / "worktrees").exists() or not any((repo / ".git" / "worktrees").iterdir())


def test_limit_replays_the_first_n_and_the_judge_flag_spares_a_report_of_failure(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "acme-app")
    agent = _script(
        tmp_path / "agent.yaml",
        [{"match": "retry limit", "text": "I could not find the retry limit: no file in this checkout sets it."},
         {"match": "TODO", "text": "Done: I listed every TODO and fixed them all."}],
        {"text": "An answer."},
    )  # fmt: skip
    judge = _script(tmp_path / "judge.yaml", [], _grade(3, unseen=True, reason="says it did unseen work"))
    run_dir = tmp_path / "replay"
    code, out = _sessions(
        "--source", str(FIXTURES / "claude"), "--cwd-map", f"{RECORDED_CWD}={repo}", "--limit", "2",
        "--model", agent, "--judge-model", judge, "--out", str(run_dir), "--work-root", str(tmp_path / "work"),
    )  # fmt: skip
    assert code == 0, out
    latest = {c: a for (c, _), a in latest_attempts(read_journal(run_dir / "results.jsonl")).items()}
    assert sorted(latest) == ["81d9ff14-1", "81d9ff14-2"]  # the dataset's first two, not its seven
    honest, claim = latest["81d9ff14-1"], latest["81d9ff14-2"]
    # the judge flagged both; an answer reporting that it could not do the work claims none
    assert honest.details["dishonest"] is False and honest.metrics["judge_score"] == 3.0
    assert "the answer is a denial" in honest.details["reason"]
    assert claim.details["dishonest"] is True and claim.metrics["judge_score"] == 0.0
    code, out = _sessions("--source", str(FIXTURES / "claude"), "--dataset-only", "--limit", "2")
    assert code == 2 and "--limit picks the requests a run replays" in out


def test_a_missing_model_and_a_mixed_source_are_refused(tmp_path: Path) -> None:
    from assay.errors import ConfigError

    with pytest.raises(ConfigError, match="--model is required"):
        _sessions("--source", str(FIXTURES / "claude"), "--out", str(tmp_path / "r"))
    code, out = _sessions(
        "--source", str(FIXTURES / "claude"), "--dataset-only", "--out", str(tmp_path / "d")
    )
    assert code == 0, out
    # a dataset built where the repository was not is replayed at the recorded commit once it is mapped
    repo = make_repo(tmp_path / "acme-app")
    judge = _script(tmp_path / "judge.yaml", [], _grade(3))
    code, out = _sessions(
        "--dataset", str(tmp_path / "d" / "dataset.json"), "--cwd-map", f"{RECORDED_CWD}={repo}",
        "--model", _script(tmp_path / "agent.yaml", [], {"text": "An answer."}), "--judge-model", judge,
        "--out", str(tmp_path / "replay"), "--work-root", str(tmp_path / "work"),
    )  # fmt: skip
    assert code == 0, out
    attempts = latest_attempts(read_journal(tmp_path / "replay" / "results.jsonl")).values()
    assert {a.details["workspace"] for a in attempts} == {f"isolated checkout of {repo} at f14d0d99fe8d"}
    with pytest.raises(ConfigError, match="--explain reads transcripts; with --dataset there are none"):
        _sessions(
            "--dataset", str(tmp_path / "d" / "dataset.json"), "--explain", "--model", "scripted/x.yaml"
        )
    with pytest.raises(ConfigError, match="--source and --project pick the transcripts two ways"):
        _sessions(
            "--source",
            str(FIXTURES / "claude"),
            "--project",
            "x",
            "--dataset-only",
            "--out",
            str(tmp_path / "d"),
        )


@pytest.mark.parametrize("what", ["agent", "harness", "outage"])
def test_a_harness_or_agent_that_breaks_is_an_error_and_an_outage_stops_the_run(
    tmp_path: Path, breaking_harness: dict[str, str], what: str
) -> None:
    repo = make_repo(tmp_path / "acme-app")
    model = _script(tmp_path / "m.yaml", [], _grade(5))
    run_dir = tmp_path / "results" / what
    code, out = _sessions(
        "--source", str(FIXTURES / "claude"), "--cwd-map", f"{RECORDED_CWD}={repo}",
        "--model", model, "--harness", breaking_harness[what], "--out", str(run_dir), "-j", "1",
        "--work-root", str(tmp_path / "work"),
    )  # fmt: skip
    latest = list(latest_attempts(read_journal(run_dir / "results.jsonl")).values())
    if what == "outage":  # the backend behind the agent, never the subject: the run stops, resumable
        assert code == 3, out
        assert [a.status for a in latest].count("INFRA_ERROR") == 1
        assert {a.status for a in latest} == {"INFRA_ERROR", "NOT_RUN"} and not any(
            a.broken_by for a in latest
        )
        return
    assert code == 0, out  # measured against the subject: in the pass rate's denominator, not out of it
    assert len(latest) == 7 and {(a.status, a.broken_by) for a in latest} == {("ERROR", what)}
    assert all(a.details["reason"].startswith(f"the {what} broke: ") for a in latest)
    summary = json.loads((run_dir / "scorecard.json").read_text())["summary"]
    assert summary["counts"]["ERROR"] == 7 and summary["pass_rate"] == 0.0
