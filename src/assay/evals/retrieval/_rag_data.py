"""Datasets of the rag retrieval benchmark: assay's labelled JSON format, and the BEIR format.

assay's format (``dataset.json``)::

    {"name": "...", "version": "1",
     "documents": [{"id": "report", "path": "docs/report.pdf", "tags": ["pdf"]}],
     "questions": [{"id": "q1", "question": "...", "answer": "2.4 million", "aliases": [],
                    "type": "numeric" | "exact" | "judge", "value": 2400000, "unit": "passengers",
                    "tags": ["numeric"], "evidence": [{"doc": "report", "quote": "...", "page": 1}]}]}

Paths are relative to the dataset file. Every evidence quote is looked up (whitespace-insensitively) in
the extracted text of its document, on its labelled page when one is given; a label that does not hold
raises :class:`~assay.errors.ConfigError` naming the file, line and question.

BEIR: a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``,
``text``) and ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``, ``score``, with a header line).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assay.errors import ConfigError, DocumentError
from assay.rag import ExtractedDocument, extract
from assay.rag.normalize import normalize

__all__ = [
    "BeirDataset",
    "DocumentSpec",
    "Evidence",
    "Question",
    "RagDataset",
    "load_beir",
    "load_dataset",
    "verify_labels",
]

AnswerType = Literal["numeric", "exact", "judge"]


@dataclass
class Evidence:
    doc: str
    quote: str | None = None
    page: int | None = None
    #: character span of the quote in the extracted text, set by verify_labels
    span: tuple[int, int] | None = None


@dataclass
class Question:
    id: str
    question: str
    answer: str
    type: AnswerType
    evidence: list[Evidence]
    aliases: list[str] = field(default_factory=list)
    value: float | None = None
    unit: str = ""
    tags: list[str] = field(default_factory=list)
    line: int | None = None


@dataclass
class DocumentSpec:
    id: str
    path: Path
    tags: list[str] = field(default_factory=list)


@dataclass
class RagDataset:
    name: str
    version: str
    path: Path
    documents: list[DocumentSpec]
    questions: list[Question]
    sha256: str

    def document(self, doc_id: str) -> DocumentSpec:
        for d in self.documents:
            if d.id == doc_id:
                return d
        raise KeyError(doc_id)


def _line_of(raw: str, needle: str) -> int | None:
    pos = raw.find(needle)
    return raw.count("\n", 0, pos) + 1 if pos >= 0 else None


def load_dataset(path: str | Path) -> RagDataset:
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read dataset: {exc.strerror or exc}", path=str(p)) from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", path=str(p), line=exc.lineno) from exc
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise ConfigError(
            "a dataset is an object with 'documents' and 'questions' lists", path=str(p), line=1
        )

    documents: list[DocumentSpec] = []
    for d in data.get("documents") or []:
        line = _line_of(raw, f'"id": "{d.get("id")}"')
        if not d.get("id") or not d.get("path"):
            raise ConfigError("every document needs an 'id' and a 'path'", path=str(p), line=line)
        doc_path = (p.parent / d["path"]).resolve()
        if not doc_path.is_file():
            raise ConfigError(f"document {d['id']!r}: no such file {d['path']}", path=str(p), line=line)
        documents.append(DocumentSpec(d["id"], doc_path, list(d.get("tags") or [])))
    doc_ids = {d.id for d in documents}
    if len(doc_ids) != len(documents):
        raise ConfigError("document ids must be unique", path=str(p))

    questions: list[Question] = []
    seen: set[str] = set()
    for q in data["questions"]:
        qid = q.get("id")
        line = _line_of(raw, f'"id": "{qid}"')

        def bad(msg: str, qid: Any = qid, line: int | None = line) -> ConfigError:
            return ConfigError(f"question {qid!r}: {msg}", path=str(p), line=line)

        if not qid or qid in seen:
            raise bad("missing or duplicate id")
        seen.add(qid)
        for key in ("question", "answer", "type", "evidence"):
            if not q.get(key):
                raise bad(f"missing {key!r}")
        if q["type"] not in ("numeric", "exact", "judge"):
            raise bad(f"type must be numeric, exact or judge, not {q['type']!r}")
        if q["type"] == "numeric" and not isinstance(q.get("value"), int | float):
            raise bad("a numeric question needs a number in 'value'")
        evidence = []
        for e in q["evidence"]:
            if e.get("doc") not in doc_ids:
                raise bad(f"evidence names unknown document {e.get('doc')!r}")
            if not e.get("quote") and not e.get("page"):
                raise bad("evidence needs a 'quote', a 'page' or both")
            evidence.append(Evidence(e["doc"], e.get("quote"), e.get("page")))
        questions.append(
            Question(
                id=qid,
                question=q["question"],
                answer=str(q["answer"]),
                type=q["type"],
                evidence=evidence,
                aliases=[str(a) for a in q.get("aliases") or []],
                value=q.get("value"),
                unit=q.get("unit") or "",
                tags=list(q.get("tags") or []),
                line=line,
            )
        )
    h = hashlib.sha256(raw.encode())
    for d in documents:
        h.update(d.id.encode() + b"\0" + hashlib.sha256(d.path.read_bytes()).digest())
    return RagDataset(
        name=str(data.get("name") or p.parent.name),
        version=str(data.get("version") or "1"),
        path=p,
        documents=documents,
        questions=questions,
        sha256=h.hexdigest(),
    )


def _squash(text: str) -> tuple[str, list[int]]:
    """``text`` with whitespace runs collapsed to one space and case folded, and a map back to offsets."""
    out: list[str] = []
    where: list[int] = []
    prev_space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if not prev_space:
                out.append(" ")
                where.append(i)
            prev_space = True
            continue
        out.append(ch.lower())
        where.append(i)
        prev_space = False
    return "".join(out), where


def verify_labels(dataset: RagDataset) -> dict[str, ExtractedDocument]:
    """Extract every document and place every evidence quote; raise ConfigError for a label that fails."""
    extracted: dict[str, ExtractedDocument] = {}
    for d in dataset.documents:
        try:
            extracted[d.id] = extract(d.path)
        except DocumentError as exc:
            raise ConfigError(
                f"document {d.id!r} cannot be extracted: {exc}", path=str(dataset.path)
            ) from exc
    # quotes are found in the normalised text (as chunks hold it: `filled` finds `ﬁlled`, a word split at a
    # line end is found joined), and placed at the span of the extracted text it came from
    normalised = {doc_id: normalize(doc.text) for doc_id, doc in extracted.items()}
    squashed = {doc_id: _squash(norm.text) for doc_id, norm in normalised.items()}
    for q in dataset.questions:
        for e in q.evidence:
            doc = extracted[e.doc]
            if e.page is not None and e.page not in {p.number for p in doc.pages}:
                raise ConfigError(
                    f"question {q.id!r}: document {e.doc!r} has no page {e.page} (it has {len(doc.pages)})",
                    path=str(dataset.path),
                    line=q.line,
                )
            if not e.quote:
                continue
            flat, where = squashed[e.doc]
            needle = re.sub(r"\s+", " ", normalize(e.quote).text.strip()).lower()
            hits = [m.start() for m in re.finditer(re.escape(needle), flat)]
            if not hits:
                raise ConfigError(
                    f"question {q.id!r}: evidence quote not found in document {e.doc!r}: {e.quote[:80]!r}",
                    path=str(dataset.path),
                    line=q.line,
                )
            norm = normalised[e.doc]
            spans = [norm.source_span(where[h], where[h + len(needle) - 1] + 1) for h in hits]
            if e.page is not None:
                on_page = [s for s in spans if doc.page_at(s[0]) == e.page]
                if not on_page:
                    found = sorted({doc.page_at(s[0]) for s in spans})
                    raise ConfigError(
                        f"question {q.id!r}: evidence quote is not on page {e.page} of {e.doc!r} "
                        f"(found on page {', '.join(map(str, found))}): {e.quote[:80]!r}",
                        path=str(dataset.path),
                        line=q.line,
                    )
                spans = on_page
            e.span = spans[0]
    _tag_table_questions(dataset, extracted)
    return extracted


#: the tag a numeric question gets when its evidence lies in a table (a breakdown of the report)
TABLE_TAG = "numeric-table"


def _tag_table_questions(dataset: RagDataset, extracted: dict[str, ExtractedDocument]) -> None:
    """Tag numeric questions whose evidence quote lies in a table of its document (tables as the
    extractors write them, :func:`assay.rag.tables.find_tables`)."""
    from assay.rag.tables import find_tables

    tables = {doc_id: find_tables(doc.text) for doc_id, doc in extracted.items()}
    for q in dataset.questions:
        if q.type != "numeric" or TABLE_TAG in q.tags:
            continue
        spans = [(e.doc, e.span) for e in q.evidence if e.span is not None]
        if any(t.start < b and a < t.end for doc, (a, b) in spans for t in tables[doc]):
            q.tags.append(TABLE_TAG)


# --------------------------------------------------------------------------------------------- BEIR


@dataclass
class BeirDataset:
    path: Path
    split: str
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    sha256: str


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg}", path=str(path), line=n) from exc
        if not isinstance(row, dict) or "_id" not in row:
            raise ConfigError("each line needs an '_id'", path=str(path), line=n)
        rows.append(row)
    return rows


def load_beir(folder: str | Path, split: str | None = None) -> BeirDataset:
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"--dataset beir:{folder}: not a folder")
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise ConfigError(f"--dataset beir:{folder}: missing {name}")
    qrel_files = sorted((root / "qrels").glob("*.tsv"))
    if not qrel_files:
        raise ConfigError(f"--dataset beir:{folder}: no qrels/*.tsv")
    if split is None:
        names = [f.stem for f in qrel_files]
        split = "test" if "test" in names else names[0]
    qrel_path = root / "qrels" / f"{split}.tsv"
    if not qrel_path.is_file():
        raise ConfigError(f"--dataset beir:{folder}: no qrels/{split}.tsv")
    corpus = {str(r["_id"]): (str(r.get("title") or ""), str(r.get("text") or "")) for r in
              _read_jsonl(root / "corpus.jsonl")}  # fmt: skip
    queries = {str(r["_id"]): str(r.get("text") or "") for r in _read_jsonl(root / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    for n, line in enumerate(qrel_path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.strip().split("\t")
        if not line.strip() or (n == 1 and parts[0] in ("query-id", "query_id", "qid")):
            continue
        if len(parts) < 3:
            raise ConfigError("expected query-id<TAB>corpus-id<TAB>score", path=str(qrel_path), line=n)
        qid, did, score = parts[0], parts[1], parts[-1]
        try:
            rel = int(float(score))
        except ValueError:
            raise ConfigError(f"score {score!r} is not a number", path=str(qrel_path), line=n) from None
        if qid not in queries:
            raise ConfigError(f"unknown query id {qid!r}", path=str(qrel_path), line=n)
        if did not in corpus:
            raise ConfigError(f"unknown corpus id {did!r}", path=str(qrel_path), line=n)
        qrels.setdefault(qid, {})[did] = rel
    h = hashlib.sha256()
    for name in ("corpus.jsonl", "queries.jsonl"):
        h.update((root / name).read_bytes())
    h.update(qrel_path.read_bytes())
    return BeirDataset(root, split, corpus, queries, qrels, h.hexdigest())
