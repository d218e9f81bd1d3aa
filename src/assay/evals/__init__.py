"""Benchmarks: one package per benchmark, driven by the engine (``assay.exec``), sharing stats, gate and report."""

from __future__ import annotations

from assay.evals._health import health, move_advisor
from assay.evals._registry import available, get_benchmark, register
from assay.evals._workspace import cached_toolchain
from assay.exec import (
    AttemptContext,
    AttemptResources,
    Benchmark,
    BenchmarkOptions,
    Case,
    Flag,
    Outcome,
    Suite,
    attempt_error_text,
)

__all__ = [
    "AttemptContext",
    "AttemptResources",
    "Benchmark",
    "BenchmarkOptions",
    "Case",
    "Flag",
    "Outcome",
    "Suite",
    "attempt_error_text",
    "available",
    "cached_toolchain",
    "get_benchmark",
    "health",
    "move_advisor",
    "register",
]
