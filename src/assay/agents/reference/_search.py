"""``search_code``: the workdir's code index (:mod:`assay.codeindex`), built on first use and brought up to date
before every search, so the agent's own edits are found. The index lives in a folder of the harness (never in
the workdir, never in ``$ASSAY_HOME``) and is removed by :meth:`CodeSearch.close`."""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = ["CodeSearch"]


class CodeSearch:
    """One code index per workdir, embedded with ``embedder`` (an ``assay.embed`` spec or an Embedder)."""

    def __init__(self, embedder: Any = None) -> None:
        self.embedder_spec = embedder
        self._embedder: Any = None
        self._dir: Path | None = None
        self._indexes: dict[Path, Any] = {}
        self._lock = threading.Lock()

    def search(self, root: Path, query: str, k: int) -> list[Any]:
        """The ``k`` best chunks for ``query`` in the workdir ``root`` (runs in a worker thread)."""
        from assay.codeindex import CodeIndex
        from assay.embed import get_embedder

        with self._lock:
            if self._embedder is None:
                spec = self.embedder_spec
                self._embedder = (
                    spec if spec is not None and not isinstance(spec, str) else get_embedder(spec)
                )
            if self._dir is None:
                self._dir = Path(tempfile.mkdtemp(prefix="assay-agent-code-index-"))
            index = self._indexes.get(root)
            if index is None:
                where = self._dir / str(len(self._indexes))
                index = CodeIndex.open(root, self._embedder, index_dir=where, on_damage="rebuild")
                self._indexes[root] = index
            index.update()
            return list(index.search(query, k))

    def close(self) -> None:
        with self._lock:
            self._indexes.clear()
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
