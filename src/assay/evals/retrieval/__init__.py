"""`assay eval retrieval --component rag|code`: one command, two components (see ``_benchmark``)."""

from __future__ import annotations

from assay.evals.retrieval._benchmark import COMPONENTS, RetrievalBenchmark, component_class

__all__ = ["COMPONENTS", "RetrievalBenchmark", "component_class"]
