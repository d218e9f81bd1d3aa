"""Unit tests of the spine's pieces: scrubbing, journal, lock, executor, fold, reports."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from assay._util import MARKER, Scrubber, write_scrubbed
from assay.errors import LockHeldError, ResumeError, SecretLeakError
from assay.exec import AttemptSpec, RunOptions, RunStopped, run_benchmark, run_local
from assay.report import markdown_to_html
from assay.runs import (
    Attempt,
    EvalLock,
    Journal,
    RunMeta,
    Status,
    SubjectConfig,
    latest_attempts,
    read_journal,
)
from assay.stats import fold, stability_label

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "spine"))
from toy import ToyBenchmark


def _att(case: str, it: int, status: Status, **kw) -> Attempt:
    return Attempt(case_id=case, iteration=it, status=status, started_at=datetime.now(UTC), **kw)


def _meta(case_ids: list[str], iterations: int = 1) -> RunMeta:
    return RunMeta(
        run_id="r",
        benchmark="toy",
        suite="pr",
        suite_version="1",
        assay_version="0",
        hostname="h",
        os="o",
        cpu_count=1,
        python="3",
        command_line=[],
        config=SubjectConfig(),
        options={},
        iterations=iterations,
        case_ids=case_ids,
        started_at=datetime.now(UTC),
    )


# --- scrubbing ---------------------------------------------------------------------------------------


def test_scrubber_removes_env_secret_values_and_secret_shapes():
    s = Scrubber(
        env={
            "OPENAI_API_KEY": "value-of-the-key-123",
            "HOME": "/root",
            "DB_PASSWORD": "hunter2hunter2",
            "SHORT_TOKEN": "1",
        }
    )
    text = (
        "k=value-of-the-key-123 p=hunter2hunter2 home=/root one=1 "
        "aws=AKIAABCDEFGHIJKLMNOP gh=ghp_" + "a" * 36 + " -----BEGIN RSA PRIVATE KEY-----\nMIIE\n"
        "-----END RSA PRIVATE KEY----- Bearer abc.def-ghi_jkl0123456"
    )
    out = s.scrub_text(text)
    for secret in (
        "value-of-the-key-123",
        "hunter2hunter2",
        "AKIAABCDEFGHIJKLMNOP",
        "ghp_",
        "MIIE",
        "abc.def-ghi",
    ):
        assert secret not in out
    assert "home=/root" in out and "one=1" in out
    assert out.count(MARKER) == 6


def test_scrub_nested_objects_including_keys():
    s = Scrubber(env={"X_SECRET": "s3cr3t-value!"})
    assert s.scrub({"s3cr3t-value!": ["a s3cr3t-value!", 3]}) == {MARKER: [f"a {MARKER}", 3]}


def test_check_refuses_json_escaped_secret(tmp_path):
    s = Scrubber(env={"X_TOKEN": 'quo"ted-secret'})
    with pytest.raises(SecretLeakError):
        s.check(json.dumps({"a": 'quo"ted-secret'}), "f")
    write_scrubbed(tmp_path / "f.json", json.dumps({"a": "ok"}), s)
    assert (tmp_path / "f.json").read_text() == '{"a": "ok"}'


# --- journal -----------------------------------------------------------------------------------------


def test_journal_appends_and_tolerates_a_cut_last_line(tmp_path):
    path = tmp_path / "results.jsonl"
    with Journal(path, Scrubber(env={})) as j:
        j.append(_att("a", 0, Status.PASS))
        j.append(_att("b", 0, Status.FAIL))
    with open(path, "a") as fh:
        fh.write('{"case_id": "c", "iter')  # a write cut by SIGKILL
    assert [a.case_id for a in read_journal(path)] == ["a", "b"]
    with Journal(path, Scrubber(env={})) as j:  # reopening ends the partial line first
        j.append(_att("c", 0, Status.PASS))
    assert [a.case_id for a in read_journal(path)] == ["a", "b", "c"]


def test_foreign_file_is_not_a_journal(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("hello\nworld\n")
    with pytest.raises(ResumeError, match=r"results\.jsonl:1"):
        read_journal(path)


def test_latest_attempt_final_beats_nonfinal():
    recs = [
        _att("a", 0, Status.INFRA_ERROR),
        _att("a", 0, Status.PASS),
        _att("a", 0, Status.NOT_RUN),
        _att("b", 0, Status.NOT_RUN),
        _att("b", 0, Status.FAIL),
    ]
    latest = latest_attempts(recs)
    assert latest[("a", 0)].status is Status.PASS and latest[("b", 0)].status is Status.FAIL


# --- lock --------------------------------------------------------------------------------------------


def test_lock_names_the_holder_and_is_released(tmp_path, monkeypatch):
    monkeypatch.delenv("ASSAY_NO_LOCK", raising=False)
    path = tmp_path / "eval.lock"
    with (
        EvalLock(["assay", "eval", "first"], path=path),
        pytest.raises(LockHeldError, match=rf"pid {os.getpid()}.*assay eval first"),
    ):
        EvalLock(["assay", "eval", "second"], path=path).acquire()
    with EvalLock(["assay", "eval", "third"], path=path):
        pass


def test_stale_lock_file_of_a_dead_process_is_reclaimed(tmp_path, monkeypatch):
    monkeypatch.delenv("ASSAY_NO_LOCK", raising=False)
    path = tmp_path / "eval.lock"
    path.write_text(json.dumps({"pid": 999999, "command": "assay eval ghost", "started_at": "then"}))
    with EvalLock(["assay", "eval", "alive"], path=path):
        assert json.loads(path.read_text())["pid"] == os.getpid()


def test_no_lock_env_opts_out(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    path = tmp_path / "eval.lock"
    with EvalLock(["a"], path=path), EvalLock(["b"], path=path):
        pass


# --- executor ----------------------------------------------------------------------------------------


async def test_executor_bounds_concurrency_and_stops_on_outage():
    in_flight = peak = 0
    results: list[Attempt] = []

    async def attempt(spec: AttemptSpec) -> Attempt:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01 if spec.case_index != 7 else 0.005)
        in_flight -= 1
        rec = _att(spec.case_id, spec.iteration, Status.PASS)
        if spec.case_index == 7:
            raise RunStopped(rec.model_copy(update={"status": Status.INFRA_ERROR}), "down")
        return rec

    specs = [AttemptSpec(i, f"c{i}", 0) for i in range(40)]
    report = await run_local(specs, attempt, results.append, max_concurrency=3)
    assert peak == 3
    assert report.stopped is not None and report.stopped.reason == "down"
    assert len(report.finished) + len(report.cancelled) + len(report.not_started) == 40
    assert report.not_started and report.not_started[0].case_index > 7
    assert sum(r.status is Status.INFRA_ERROR for r in results) == 1


def test_timeout_and_exceptions_are_recorded_not_raised(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))

    class Slow(ToyBenchmark):
        name = "slow"

        async def run_case(self, case, ctx):
            if case.id == "c000":
                await asyncio.sleep(5)
            if case.id == "c001":
                raise ValueError("subject crashed")
            if case.id == "c002":
                raise TimeoutError("the subject's own timeout")
            return await super().run_case(case, ctx)

    res = run_benchmark(Slow, {"cases": 4}, RunOptions(timeout_s=0.3, results_dir=tmp_path))
    by_id = {c.case_id: c for c in res.scorecard.cases}
    assert by_id["c000"].counts == {"TIMEOUT": 1}
    assert by_id["c001"].counts == {"ERROR": 1} and by_id["c002"].counts == {"ERROR": 1}
    assert by_id["c003"].counts == {"PASS": 1}
    errors = [a.error.message for a in read_journal(res.run_dir / "results.jsonl") if a.error]
    assert "subject crashed" in errors
    assert res.exit_code == 0


# --- fold --------------------------------------------------------------------------------------------


def test_fold_labels_and_excludes_unmeasured_from_denominators():
    recs = [
        _att("a", 0, Status.PASS),
        _att("a", 1, Status.PASS),
        _att("a", 2, Status.INFRA_ERROR),
        _att("b", 0, Status.PASS),
        _att("b", 1, Status.FAIL),
        _att("b", 2, Status.SKIPPED, skip_reason="no model"),
        _att("c", 0, Status.FAIL),
        _att("c", 1, Status.TIMEOUT),
        _att("c", 2, Status.ERROR),
    ]
    card = fold(recs, _meta(["a", "b", "c", "d"], iterations=3))
    by = {c.case_id: c for c in card.cases}
    assert (by["a"].stability, by["a"].measured, by["a"].pass_rate) == ("stable-pass", 2, 1.0)
    assert (by["b"].stability, by["b"].measured, by["b"].pass_rate) == ("flaky", 2, 0.5)
    assert (by["c"].stability, by["c"].measured) == ("stable-fail", 3)
    assert by["d"].stability == "not-measured" and by["d"].counts == {"NOT_RUN": 3}
    assert card.summary.measured == 7 and card.summary.pass_rate == pytest.approx(3 / 7)
    assert card.summary.counts["NOT_RUN"] == 3 and not card.complete


def test_fold_flags_mixed_commits():
    recs = [_att("a", 0, Status.PASS, commit="aaa"), _att("b", 0, Status.PASS, commit="bbb")]
    card = fold(recs, _meta(["a", "b"]))
    assert card.mixed_commits and card.commits == ["aaa", "bbb"] and card.complete


def test_stability_label():
    assert stability_label(0, 0) == "not-measured"
    assert stability_label(3, 3) == "stable-pass"
    assert stability_label(0, 3) == "stable-fail"
    assert stability_label(1, 3) == "flaky"


# --- reports -----------------------------------------------------------------------------------------


def test_markdown_to_html_tables_lists_images(tmp_path):
    (tmp_path / "p.png").write_bytes(b"\x89PNG fake")
    html = markdown_to_html(
        "# T\n\n| a | b |\n|---|---|\n| 1 | `x` |\n\n- one\n- **two**\n\n![plot](p.png)\n", tmp_path
    )
    assert (
        "<h1>T</h1>" in html and "<td><code>x</code></td>" in html and "<li><strong>two</strong></li>" in html
    )
    assert 'src="data:image/png;base64,' in html


def test_reports_written_and_self_contained(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    res = run_benchmark(ToyBenchmark, {"cases": 6, "fail_every": 3}, RunOptions(results_dir=tmp_path))
    md = (res.run_dir / "report.md").read_text()
    assert "## Cases (worst first)" in md and "| quality |" in md
    html = (res.run_dir / "report.html").read_text()
    assert (
        "data:image/png;base64," in html and "<script" not in html and "http" not in html.split("<body>")[1]
    )
