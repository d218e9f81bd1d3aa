"""assay: local-first evaluation of LLM agents and the parts they stand on."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
