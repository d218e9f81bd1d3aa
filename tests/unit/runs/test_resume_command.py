"""The resume command a stopped run prints names the benchmark's own command."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.evals import _registry
from assay.evals._base import Benchmark
from assay.runs._runner import resume_command


def test_a_component_run_resumes_through_its_benchmark_command() -> None:
    assert resume_command("retrieval-rag", Path("/r/x")) == "assay eval retrieval --resume /r/x"
    assert resume_command("memory", Path("/r/y")) == "assay eval memory --resume /r/y"


def test_a_benchmark_with_a_hyphen_in_its_name_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Hyphenated(Benchmark):  # type: ignore[misc]  # only its name is read
        name = "ray-sleep"

    monkeypatch.setitem(_registry._registered, "ray-sleep", _Hyphenated)  # registered for this test only
    assert resume_command("ray-sleep", Path("/r/z")) == "assay eval ray-sleep --resume /r/z"
