"""The engine: run a benchmark (a local asyncio pool or Ray), journal its attempts, resume, fold and report.

It also holds the contract a benchmark keeps to be driven (``Benchmark``, ``Case``, ``Suite``, ``Outcome``).
"""

from __future__ import annotations

from assay.exec._benchmark import (
    AttemptContext,
    AttemptResources,
    Benchmark,
    Case,
    Outcome,
    Suite,
    attempt_error_text,
)
from assay.exec._local import AttemptSpec, ExecutionReport, RunStopped, run_local
from assay.exec._options import (
    BenchmarkOptions,
    Flag,
    OptionSpec,
    option_specs,
    options_error,
    parse_args,
    validate_options,
)
from assay.exec._runner import (
    RunOptions,
    RunResult,
    arun_benchmark,
    finish,
    load_benchmark_class,
    rebuild,
    refold,
    resume_command,
    run_benchmark,
)
from assay.exec._stop import AttemptStopped, check_stop, run_stoppable

__all__ = [
    "AttemptContext", "AttemptResources", "AttemptSpec", "AttemptStopped", "Benchmark", "BenchmarkOptions",
    "Case", "ExecutionReport", "Flag", "OptionSpec", "Outcome", "RunOptions", "RunResult", "RunStopped",
    "Suite", "arun_benchmark", "attempt_error_text", "check_stop", "finish", "load_benchmark_class", "option_specs",
    "options_error", "parse_args", "rebuild", "refold", "resume_command", "run_benchmark", "run_local",
    "run_stoppable", "validate_options",
]  # fmt: skip
