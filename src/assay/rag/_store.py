"""A saved index on disk that commands open, change and save again (what `assay rag ...` works on).

The folder is a signed :meth:`DocumentIndex.save` folder; the embedder spec it was built with is kept
beside it in ``<folder>.json`` so later commands rebuild the same embedder without being told.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from assay.embed import get_embedder
from assay.errors import AssayError, ConfigError, IndexCorruptError
from assay.rag._chunk import ChunkConfig
from assay.rag._index import DocumentIndex, IndexResult, iter_supported
from assay.rag.signing import assay_home

__all__ = ["IndexReport", "default_index_dir", "index_paths", "open_index"]


def default_index_dir() -> Path:
    return assay_home() / "rag" / "index"


def _spec_file(folder: Path) -> Path:
    """``<folder>.json`` beside the index folder: the embedder spec the index was built with."""
    full = Path(os.path.abspath(folder))
    if not full.name:
        raise ConfigError(f"--index {folder}: the root folder cannot hold an index; name a folder")
    return full.with_name(full.name + ".json")


def open_index(
    folder: Path | None = None,
    *,
    embedder: str | None = None,
    create: bool = False,
    chunking: ChunkConfig | None = None,
    max_documents: int | None = None,
    ocr: bool = False,
) -> DocumentIndex:
    """Open the saved index at ``folder`` (default ``$ASSAY_HOME/rag/index``), or a new one with ``create``.

    ``ocr`` turns OCR of image pages on for what is indexed from now on (and is saved with the index)."""
    folder = folder or default_index_dir()
    spec_path = _spec_file(folder)
    saved_spec = None
    if spec_path.is_file():
        try:
            saved_spec = json.loads(spec_path.read_text()).get("embedder")
        except (OSError, json.JSONDecodeError) as exc:
            raise IndexCorruptError(f"{spec_path}: unreadable ({exc}); delete it and index again") from exc
    if embedder and saved_spec and embedder != saved_spec:
        raise ConfigError(
            f"--embedder {embedder}: the index at {folder} was built with {saved_spec!r}; "
            "use that embedder or a new --index folder"
        )
    spec = embedder or saved_spec or "local"
    if (folder / "manifest.json").is_file():
        index = DocumentIndex.load(folder, get_embedder(spec))
    elif create:
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            # saving swaps the whole folder for the new index: never on top of someone's files
            raise ConfigError(
                f"--index {folder}: exists and is not an index folder (saving would replace what it "
                "holds); pass an empty or new folder"
            )
        index = DocumentIndex(get_embedder(spec), chunking=chunking, max_documents=max_documents)
    else:
        raise ConfigError(f"no index at {folder}: run `assay rag index PATH...` first (or pass --index)")
    index.embedder_spec = spec
    if ocr:
        index.ocr = True
    return index


@dataclass
class IndexReport:
    results: list[IndexResult] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)


def index_paths(index: DocumentIndex, paths: list[str | Path], folder: Path | None = None) -> IndexReport:
    """Index files and folders one file at a time (a bad file is reported, the rest still indexed), then save."""
    report = IndexReport()
    for path in iter_supported(paths):
        try:
            report.results.append(index.index_document(path, str(path)))
        except AssayError as exc:
            report.failures[str(path)] = str(exc)
    folder = folder or default_index_dir()
    index.save(folder)
    spec = index.embedder_spec or index.embedder.name
    _spec_file(folder).write_text(json.dumps({"embedder": spec, "id": index.embedder.id}) + "\n")
    return report
