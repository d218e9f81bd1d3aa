"""Other eval tools' results as assay runs (``assay import TOOL PATH --out RUN_DIR``).

Each importer reads one tool's result file with that tool's own reader where it has one, into
:class:`Imported` (provenance plus one attempt per sample and repeat); :func:`import_run` writes it as a run
directory with the engine's own fold, gate and report writers, so compare, propose, gate, noise, health,
trend, scorecard and view read it unchanged.
"""

from __future__ import annotations

from assay.imports._bench import ImportedRun, ImportOptions
from assay.imports._export import export_inspect
from assay.imports._model import ForeignFileError, Imported
from assay.imports._write import TOOLS, import_run, read_foreign

__all__ = [
    "TOOLS",
    "ForeignFileError",
    "ImportOptions",
    "Imported",
    "ImportedRun",
    "export_inspect",
    "import_run",
    "read_foreign",
]
