"""Where attempts run: a local asyncio pool by default."""

from __future__ import annotations

from assay.exec._local import AttemptSpec, ExecutionReport, RunStopped, run_local

__all__ = ["AttemptSpec", "ExecutionReport", "RunStopped", "run_local"]
