"""An attempt cut short keeps what it spent; a targeted run is compared with the same cases of its baseline;
a quota error says when the provider resets it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from assay.errors import InfraError
from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Outcome, Suite
from assay.exec import RunOptions, run_benchmark
from assay.gate import compare
from assay.models import Usage
from assay.models._errors import classify_http_error, parse_reset_time
from assay.runs import MetricSpec, Status
from assay.runs._journal import read_journal


class _Spends(Benchmark):
    """``slow`` spends 7 tokens then hangs (a timeout cuts it); ``down`` spends 3 then hits an outage."""

    name = "spends"
    metric_specs = (MetricSpec(name="quality", kind="proportion", direction="higher"),)

    class Options(BenchmarkOptions):
        cases: list[str] | None = None
        selected: list[str] | None = None

    def load_suite(self, suite: str) -> Suite:
        ids = self.options.cases or ["fast", "slow"]
        return Suite(suite, "1", [Case(i, category="a" if i < "m" else "b") for i in ids])

    def scorecard_extra(self, attempts: list[Any]) -> dict[str, Any]:
        sel = self.options.selected
        return {"selection": {"selected": sel, "of": 4, "by": {"scenario": sel}}} if sel else {}

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        if case.id == "slow":
            ctx.spent = Usage(input_tokens=5, output_tokens=2)
            ctx.partial_details = {"turns": 1}
            await asyncio.sleep(5)
        if case.id == "down":
            ctx.spent = Usage(input_tokens=3, output_tokens=0)
            raise InfraError("judge backend unreachable")
        if case.id == "nothing":
            await asyncio.sleep(5)
        quality = {"fast": 1.0, "good": 1.0, "bad": 0.0}.get(case.id, 1.0)
        return Outcome(Status.PASS if quality else Status.FAIL, metrics={"quality": quality})


def _journal(run_dir: Path) -> dict[str, Any]:
    return {a.case_id: a for a in read_journal(run_dir / "results.jsonl")}


def test_timeout_and_outage_keep_the_spend_so_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    opts = RunOptions(out=tmp_path / "t", timeout_s=0.3, command_line=["t"])
    run_benchmark(_Spends, {"cases": ["fast", "slow", "nothing"]}, opts)
    rec = _journal(tmp_path / "t")
    assert rec["slow"].status is Status.TIMEOUT
    assert rec["slow"].usage is not None and rec["slow"].usage.input_tokens == 5
    assert rec["slow"].details == {"turns": 1, "partial": True}
    # a cut attempt that said nothing of its spend is marked missing, never zero
    assert rec["nothing"].usage is None and rec["nothing"].details["spend_missing"] is True

    opts = RunOptions(out=tmp_path / "o", max_concurrency=1, command_line=["t"])
    result = run_benchmark(_Spends, {"cases": ["down", "fast"]}, opts)
    assert result.exit_code == 3
    rec = _journal(tmp_path / "o")
    assert rec["down"].status is Status.INFRA_ERROR and rec["down"].usage.input_tokens == 3


def test_a_targeted_run_is_held_against_the_same_cases_of_its_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    full = ["bad", "fast", "good", "zeta"]
    base = run_benchmark(
        _Spends, {"cases": full}, RunOptions(out=tmp_path / "b", iterations=3, command_line=["t"])
    )
    targeted = run_benchmark(
        _Spends,
        {"cases": ["good"], "selected": ["good"]},
        RunOptions(out=tmp_path / "c", command_line=["t"]),
    )
    assert targeted.scorecard.extra["selection"]["selected"] == ["good"]
    comp = compare(base.run_dir, targeted.run_dir, require_complete=True)
    assert comp.exit_code == 0, comp.verdict  # one attempt of a stable-pass case that passed again
    assert comp.not_selected == ["bad", "fast", "zeta"]
    assert comp.incomplete == []
    (quality,) = [m for m in comp.metrics if m.name == "quality"]
    # the baseline's quality is folded again over the selected case (1.0), not over all four (0.75)
    assert quality.baseline == pytest.approx(1.0)
    # without the selection the same run is three cases short
    plain = run_benchmark(_Spends, {"cases": ["good"]}, RunOptions(out=tmp_path / "p", command_line=["t"]))
    assert compare(base.run_dir, plain.run_dir, require_complete=True).exit_code == 2
    # and a targeted run that regresses a selected case is still caught (the failing case renamed)
    bad = run_benchmark(
        _Spends,
        {"cases": ["bad"], "selected": ["good"]},
        RunOptions(out=tmp_path / "r", iterations=3, command_line=["t"]),
    )
    regressed = compare(base.scorecard, _renamed(bad.scorecard, "bad", "good"))
    assert regressed.exit_code == 2, regressed.verdict


def _renamed(card: Any, old: str, new: str) -> Any:
    cases = [c.model_copy(update={"case_id": new}) if c.case_id == old else c for c in card.cases]
    return card.model_copy(update={"cases": cases})


def test_a_quota_error_says_when_the_provider_resets_it() -> None:
    err = classify_http_error(
        "anthropic",
        429,
        '{"error": {"message": "quota exceeded"}}',
        {"anthropic-ratelimit-tokens-reset": "2026-12-01T15:00:00Z"},
    )
    assert err.kind == "quota" and err.resets_at == datetime(2026, 12, 1, 15, tzinfo=UTC)
    assert "resets at 2026-12-01 15:00:00 UTC" in str(err)
    before = datetime.now(UTC)
    when = parse_reset_time({"x-ratelimit-reset-requests": "6m0s"})
    assert when is not None and 359 <= (when - before).total_seconds() <= 361
    assert parse_reset_time({}) is None
    assert classify_http_error("openai", 402, "pay", {}).resets_at is None
