"""A scenario's setup made real before its first turn: workdir files, a document index, a seeded memory store.

    prepared = prepare(scenario, workdir, scenarios_dir / "_documents", get_embedder("hash"))
    harness = ReferenceHarness(model=..., **prepared.reference_options())
    ...
    await harness.close(); prepared.close()

The memory store is a sqlite file in a private temporary folder (never the workdir, where the agent could read
or edit it), removed by :meth:`Prepared.close`. Each ``setup.memory`` fact is put in with the reference agent's
own ``remember`` call, grounded in the fact's words as if the user had just said it, so it is stored exactly as
a remembered fact would be (a fact about someone else, "my manager is ...", about them); one the store's rules
refuse (not first person, a hypothetical) is a ConfigError giving the reason.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from assay.agents.reference.memory import MEMORY_TOOLS, MemoryTurn, open_memory
from assay.embed import Embedder, get_embedder
from assay.errors import ConfigError, DocumentError
from assay.evals.agent._scenario import DocumentRef, Scenario
from assay.memory.rules import ground
from assay.rag import DocumentIndex

__all__ = ["Prepared", "needs_memory", "prepare"]

_MEMORY_TOOL_NAMES = set(MEMORY_TOOLS)


@dataclass
class Prepared:
    """What a scenario's agent is given: its document index and memory store (None when the setup has none)."""

    workdir: Path
    documents: DocumentIndex | None = None
    memory_path: Path | None = None
    embedder: Embedder | None = None
    #: the workdir files written, relative to the workdir
    files: list[str] = field(default_factory=list)
    #: ids of the memory items seeded, in the order of ``setup.memory``
    memory_ids: list[int] = field(default_factory=list)
    _private: Path | None = None

    def reference_options(self) -> dict[str, Any]:
        """The ``ReferenceHarness`` options for this setup (``documents``, ``memory``, ``memory_embedder``)."""
        out: dict[str, Any] = {}
        if self.documents is not None:
            out["documents"] = self.documents
        if self.memory_path is not None:
            out["memory"] = self.memory_path
            out["memory_embedder"] = self.embedder
        return out

    def close(self) -> None:
        """Remove the private folder of the memory store (close the harness using it first)."""
        if self._private is not None:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None


def needs_memory(scenario: Scenario) -> bool:
    """A store is made when the setup seeds facts, a turn starts a new session (memory over sessions), or the
    expected or forbidden tools name a memory tool; otherwise the memory tools are not offered at all."""
    if scenario.setup.memory or any(t.new_session for t in scenario.turns):
        return True
    named = scenario.expected_tools + scenario.forbidden_tools
    return any(n == "kind:memory" or n in _MEMORY_TOOL_NAMES for n in named)


def _where(scenario: Scenario) -> str | None:
    return scenario.path or None


def _write_files(scenario: Scenario, workdir: Path) -> list[str]:
    written = []
    root = workdir.resolve()
    for rel, content in scenario.setup.files.items():
        pure = PurePosixPath(rel)
        target = (root / pure).resolve()
        if pure.is_absolute() or not rel.strip() or ".." in pure.parts or not target.is_relative_to(root):
            raise ConfigError(
                f"scenario {scenario.id}: setup.files path {rel!r} must stay inside the workdir",
                path=_where(scenario),
                line=scenario.setup.line or None,
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        written.append(pure.as_posix())
    return written


def _index_document(scenario: Scenario, index: DocumentIndex, ref: DocumentRef, documents_dir: Path) -> None:
    line = ref.line or scenario.setup.line or None
    if ref.text is not None:
        suffix = PurePosixPath(ref.name).suffix.lower()
        kind = (
            "markdown"
            if suffix in (".md", ".markdown")
            else "html"
            if suffix in (".html", ".htm")
            else "text"
        )
        index.index_text(ref.name, ref.text, kind=kind)
        return
    pure = PurePosixPath(ref.name)
    if pure.is_absolute() or ".." in pure.parts or not ref.name.strip():
        raise ConfigError(
            f"scenario {scenario.id}: document name {ref.name!r} must be a file name under {documents_dir}",
            path=_where(scenario),
            line=line,
        )
    path = documents_dir / pure
    if not path.is_file():
        raise ConfigError(
            f"scenario {scenario.id}: document {ref.name!r} not found (looked for {path})",
            path=_where(scenario),
            line=line,
        )
    try:
        index.index_document(path, doc_id=ref.name)
    except DocumentError as exc:
        raise ConfigError(
            f"scenario {scenario.id}: document {ref.name!r} cannot be indexed: {exc}",
            path=_where(scenario),
            line=line,
        ) from exc


def _seed_memory(scenario: Scenario, path: Path, embedder: Embedder) -> list[int]:
    access = open_memory(path, embedder)
    ids = []
    try:
        for fact in scenario.setup.memory:
            turn = MemoryTurn(access, user_text=fact, session_id=f"setup:{scenario.id}")
            args = {"content": fact, "evidence": fact}
            # "My manager is Priya": the store's own rules say whom it is about; it is remembered about them
            about = ground(fact, fact, fact, {}).third_party_subject
            if about:
                args["entity"] = about
            out = access.call("remember", args, turn)
            answer = json.loads(out.text)
            if out.status != "ok" or answer.get("id") is None:
                raise ConfigError(
                    f"scenario {scenario.id}: setup.memory fact {fact!r} was refused by the memory store: "
                    f"{answer.get('error') or out.text}",
                    path=_where(scenario),
                    line=scenario.setup.line or None,
                )
            ids.append(int(answer["id"]))
    finally:
        access.close()
    return ids


def prepare(
    scenario: Scenario,
    workdir: Path,
    documents_dir: Path,
    embedder: Embedder | str,
    *,
    cache_dir: Path | None = None,
    memory_root: Path | None = None,
) -> Prepared:
    """Write ``setup.files`` into ``workdir``, index ``setup.documents`` (from ``documents_dir`` or inline
    text) and seed a memory store when :func:`needs_memory`. ``cache_dir`` is the index's embedding cache (None:
    off); ``memory_root`` is where the private store folder is made (default: the system's temp folder)."""
    emb = get_embedder(embedder) if isinstance(embedder, str) else embedder
    workdir.mkdir(parents=True, exist_ok=True)
    prepared = Prepared(workdir=workdir, embedder=emb)
    prepared.files = _write_files(scenario, workdir)
    if scenario.setup.documents:
        index = DocumentIndex(emb, cache_dir=cache_dir)
        for ref in scenario.setup.documents:
            _index_document(scenario, index, ref, documents_dir)
        prepared.documents = index
    if needs_memory(scenario):
        if memory_root is not None:
            memory_root.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix="assay-agent-memory-", dir=memory_root))
        prepared._private = private
        prepared.memory_path = private / "memory.db"
        try:
            prepared.memory_ids = _seed_memory(scenario, prepared.memory_path, emb)
        except BaseException:
            prepared.close()
            raise
    return prepared
