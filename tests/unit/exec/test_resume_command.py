"""The resume command a stopped run prints names the benchmark's own command."""

from __future__ import annotations

from pathlib import Path

from assay.evals import Benchmark
from assay.evals.memory import MemoryBenchmark
from assay.evals.retrieval import RetrievalBenchmark
from assay.exec import resume_command


def test_a_component_run_resumes_through_its_benchmark_command() -> None:
    # a retrieval-rag run is run by the RetrievalBenchmark class, registered as `retrieval`
    rag = RetrievalBenchmark({"component": "rag"})
    assert rag.name == "retrieval-rag"
    assert resume_command(rag, Path("/r/x")) == "assay eval retrieval --resume /r/x"
    assert resume_command(RetrievalBenchmark, Path("/r/x")) == "assay eval retrieval --resume /r/x"
    assert resume_command(MemoryBenchmark, Path("/r/y")) == "assay eval memory --resume /r/y"


def test_a_benchmark_with_a_hyphen_in_its_name_keeps_it() -> None:
    class _Hyphenated(Benchmark):  # type: ignore[misc]  # only its name is read
        name = "ray-sleep"

    assert resume_command(_Hyphenated, Path("/r/z")) == "assay eval ray-sleep --resume /r/z"
