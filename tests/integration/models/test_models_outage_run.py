"""A whole eval run against a real llama.cpp server that dies half-way: the run stops with exit 3,
the failing case is INFRA_ERROR (never ERROR or FAIL), the rest NOT_RUN, and usage of the cases that
ran is kept."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any, ClassVar

import pytest

from assay.evals import AttemptContext, Benchmark, BenchmarkOptions, Case, Outcome, Suite
from assay.exec import RunOptions, run_benchmark
from assay.models import LlamaServer, Message, embedded_gguf_path, get_model
from assay.models._local import shared_server
from assay.runs import Status, SubjectConfig, read_journal

pytestmark = pytest.mark.local_model


class ChatBench(Benchmark):
    """Each case asks the model one question; the test's hook may kill the server before a case."""

    name = "models-outage-test"
    pass_fail = True
    hooks: ClassVar[dict[str, Any]] = {}

    class Options(BenchmarkOptions):
        model: str

    def subject_config(self) -> SubjectConfig:
        return SubjectConfig(subject="chat", model=self.options.model)

    def load_suite(self, suite: str) -> Suite:
        return Suite(
            name=suite, version="1", cases=[Case(id=f"q{i}", input=f"Say the number {i}.") for i in range(5)]
        )

    async def run_case(self, case: Case, ctx: AttemptContext) -> Outcome:
        before = self.hooks.get("before_case")
        if before is not None:
            before(case)
        model = get_model(self.options.model, max_retries=1, backoff_s=0.05)
        out = await model.generate([Message("user", str(case.input))], max_tokens=8, temperature=0)
        status = Status.PASS if out.text.strip() else Status.FAIL
        return Outcome(status=status, score=1.0 if out.text.strip() else 0.0, usage=out.usage)


def test_server_killed_mid_run_stops_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))
    with LlamaServer(ctx_size=512) as server:

        def kill_before_third(case: Case) -> None:
            if case.id == "q2":
                server.kill()

        ChatBench.hooks["before_case"] = kill_before_third
        try:
            result = run_benchmark(
                ChatBench,
                {"model": server.model_string},
                RunOptions(max_concurrency=1, results_dir=tmp_path / "results", command_line=["test"]),
            )
        finally:
            ChatBench.hooks.clear()
    assert result.exit_code == 3
    attempts = {a.case_id: a for a in read_journal(result.run_dir / "results.jsonl")}
    assert [attempts[c].status for c in ("q0", "q1")] == [Status.PASS, Status.PASS]
    assert attempts["q2"].status == Status.INFRA_ERROR
    assert attempts["q2"].error is not None and "cannot connect" in attempts["q2"].error.message
    assert {attempts[c].status for c in ("q3", "q4")} == {Status.NOT_RUN}
    counts = result.scorecard.summary.counts
    assert counts.get("ERROR", 0) == 0 and counts.get("FAIL", 0) == 0
    assert result.scorecard.cost.calls == 2 and result.scorecard.cost.input_tokens > 0


def test_embedded_model_segfault_mid_run_is_an_outage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """local/smollm2 runs in a server child: its SIGSEGV stops the run (exit 3), it does not kill the eval."""
    monkeypatch.setenv("ASSAY_NO_LOCK", "1")
    monkeypatch.setenv("ASSAY_HOME", str(tmp_path / "home"))

    def segfault_before_third(case: Case) -> None:
        if case.id == "q2":
            server = shared_server(embedded_gguf_path(), 2048)  # the one q0 started
            os.kill(server.pid or 0, signal.SIGSEGV)
            server.wait()  # reaped by its Popen, which keeps the signal it died of

    ChatBench.hooks["before_case"] = segfault_before_third
    try:
        result = run_benchmark(
            ChatBench,
            {"model": "local/smollm2"},
            RunOptions(max_concurrency=1, results_dir=tmp_path / "results", command_line=["test"]),
        )
    finally:
        ChatBench.hooks.clear()
    assert result.exit_code == 3
    attempts = {a.case_id: a for a in read_journal(result.run_dir / "results.jsonl")}
    assert [attempts[c].status for c in ("q0", "q1")] == [Status.PASS, Status.PASS]
    assert attempts["q2"].status == Status.INFRA_ERROR
    message = attempts["q2"].error.message if attempts["q2"].error else ""
    assert "crashed" in message and "killed by SIGSEGV (signal 11)" in message
    assert {attempts[c].status for c in ("q3", "q4")} == {Status.NOT_RUN}
    assert result.stopped_reason and "SIGSEGV" in result.stopped_reason
    assert result.resume_command.endswith(f"--resume {result.run_dir}")
