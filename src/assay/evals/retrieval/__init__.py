"""`assay eval retrieval --component rag|code`: one command, two components (see ``_benchmark``)."""

from __future__ import annotations

from assay.evals.retrieval._benchmark import COMPONENTS, RetrievalBenchmark, component_class
from assay.evals.retrieval._options import RetrievalOptions

__all__ = ["COMPONENTS", "RetrievalBenchmark", "RetrievalOptions", "component_class"]
