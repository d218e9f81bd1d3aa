"""Serving speed: ``assay eval benchmark``.

Measures how fast an OpenAI-compatible server (or the embedded llama.cpp model) answers: TTFT, TPOT, ITL
and E2E percentiles, request and token throughput, goodput under SLOs, errors and timeouts, per load level
(``--concurrency``, ``--request-rate`` with Poisson/gamma arrivals, or ``--sweep``), and for the default
email-triage workload whether the answers are right (per field: accuracy, parse rate and the majority-class
baseline; ``--structured`` constrains answers to a JSON schema). See ``_metrics`` for the exact speed
definitions and ``_triage`` for how answers are read.
"""

from __future__ import annotations

from assay.evals.serving._benchmark import ServingBenchmark
from assay.evals.serving._client import StreamClient, StreamResult
from assay.evals.serving._load import LevelRun, LoadLevel, run_level
from assay.evals.serving._metrics import LevelFigures, RequestTiming, level_figures, parse_slo
from assay.evals.serving._options import ServingOptions
from assay.evals.serving._results import LevelResult, ServingResults, read_results
from assay.evals.serving._stub import StubConfig, StubServer
from assay.evals.serving._workloads import (
    DatasetWorkload,
    EmailTriage,
    LengthSpec,
    SyntheticWorkload,
    Workload,
    parse_triage_answer,
)

__all__ = [
    "DatasetWorkload",
    "EmailTriage",
    "LengthSpec",
    "LevelFigures",
    "LevelResult",
    "LevelRun",
    "LoadLevel",
    "RequestTiming",
    "ServingBenchmark",
    "ServingOptions",
    "ServingResults",
    "StreamClient",
    "StreamResult",
    "StubConfig",
    "StubServer",
    "SyntheticWorkload",
    "Workload",
    "level_figures",
    "parse_slo",
    "parse_triage_answer",
    "read_results",
    "run_level",
]
