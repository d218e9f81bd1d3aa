"""What the viewer reads: run directories under ``--dir``, loaded lazily and cached until they change.

A run page needs only ``scorecard.json``; the attempts of one case are read from ``results.jsonl`` through
an index of line offsets (built once per file version by a byte scan, not by parsing every record), so a
10,000-attempt run opens without reading its attempts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.gate import LoadedRun
from assay.runs import Attempt, RunMeta, Scorecard, SubjectConfig, Summary, Usage, latest_attempts
from assay.runs.rundir import JOURNAL, META, SCORECARD

from ._safety import inside

#: how deep under --dir run directories are looked for (results/noise/<run> is two down)
MAX_DEPTH = 3
#: a journal line as pydantic writes it: these fields first, in this order
_HEAD = re.compile(
    rb'^\{"schema_version":\d+,"case_id":"((?:[^"\\]|\\.)*)","iteration":(\d+),'
    rb'"category":"(?:[^"\\]|\\.)*","status":"([A-Z_]+)"'
)
_PLAIN_ID = re.compile(r"^[A-Za-z0-9._\-]{1,100}$")


def case_slug(case_id: str) -> str:
    """A file-name-safe name for a case page (ids with other characters get a digest suffix)."""
    if _PLAIN_ID.match(case_id) and not case_id.startswith("."):
        return case_id
    stem = re.sub(r"[^A-Za-z0-9._\-]", "_", case_id)[:60].lstrip(".")
    return f"{stem}-{hashlib.sha1(case_id.encode()).hexdigest()[:10]}"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


@dataclass(frozen=True)
class JournalLine:
    case_id: str
    iteration: int
    status: str
    offset: int
    length: int


class JournalIndex:
    """Offsets of every record of ``results.jsonl``, by case."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[JournalLine] = []
        self.by_case: dict[str, list[JournalLine]] = {}
        self.damaged = 0
        if not path.is_file():
            return
        data = path.read_bytes()
        offset = 0
        for raw in data.split(b"\n"):
            line = self._head(raw, offset)
            if line is not None:
                self.lines.append(line)
                self.by_case.setdefault(line.case_id, []).append(line)
            elif raw.strip():
                self.damaged += 1
            offset += len(raw) + 1

    @staticmethod
    def _head(raw: bytes, offset: int) -> JournalLine | None:
        if m := _HEAD.match(raw):
            cid = json.loads(b'"' + m.group(1) + b'"')
            return JournalLine(cid, int(m.group(2)), m.group(3).decode(), offset, len(raw))
        if not raw.strip():
            return None
        try:  # a record written in another field order: parse it whole
            rec = json.loads(raw)
            return JournalLine(
                str(rec["case_id"]), int(rec.get("iteration", 0)), str(rec["status"]), offset, len(raw)
            )
        except (ValueError, KeyError, TypeError):
            return None

    def attempts(self, case_id: str) -> list[Attempt]:
        """Every readable record of the case, in journal order."""
        out = []
        with open(self.path, "rb") as fh:
            for line in self.by_case.get(case_id, []):
                fh.seek(line.offset)
                try:
                    out.append(Attempt.model_validate_json(fh.read(line.length)))
                except ValidationError:
                    continue
        return out

    def latest_status(self) -> dict[str, list[str]]:
        """Per case, the status that counts of each iteration (a final record beats an earlier one)."""
        chosen: dict[tuple[str, int], JournalLine] = {}
        final = {"PASS", "FAIL", "ERROR", "TIMEOUT", "SKIPPED"}
        for line in self.lines:
            prev = chosen.get((line.case_id, line.iteration))
            if prev is None or line.status in final or prev.status not in final:
                chosen[(line.case_id, line.iteration)] = line
        out: dict[str, list[str]] = {}
        for (cid, _), line in chosen.items():
            out.setdefault(cid, []).append(line.status)
        return out


class CardHead(BaseModel):
    """The part of ``scorecard.json`` the runs list shows: read without validating every case (15x faster on
    a 10,000-case scorecard)."""

    model_config = ConfigDict(extra="ignore")

    benchmark: str
    suite: str
    config: SubjectConfig
    summary: Summary
    cost: Usage
    commits: list[str] = Field(default_factory=list)
    complete: bool
    created_at: datetime


M = TypeVar("M", bound=BaseModel)


@dataclass
class Run:
    """One run directory: meta.json always read; the scorecard and journal index on first use, each read
    again when its file changes."""

    key: str
    path: Path
    meta: RunMeta | None
    problem: str | None = None
    _cache: dict[str, tuple[tuple[int, int] | None, Any, str | None]] = field(
        default_factory=dict, repr=False
    )
    _index: tuple[tuple[int, int] | None, JournalIndex] | None = field(default=None, repr=False)

    def _read(self, model: type[M]) -> tuple[M | None, str | None]:
        path = self.path / SCORECARD
        stamp = _stamp(path)
        cached = self._cache.get(model.__name__)
        if cached is None or cached[0] != stamp:
            value, problem = None, None
            if stamp is not None:
                try:
                    value = model.model_validate_json(path.read_bytes())
                except (ValidationError, ValueError) as exc:
                    problem = f"{SCORECARD} unreadable: {str(exc).splitlines()[0]}"
            cached = (stamp, value, problem)
            self._cache[model.__name__] = cached
        return cached[1], cached[2]

    @property
    def scorecard(self) -> Scorecard | None:
        return self._read(Scorecard)[0]

    @property
    def head(self) -> CardHead | None:
        return self._read(CardHead)[0]

    @property
    def finished(self) -> bool:
        """The run has a readable scorecard."""
        return self.head is not None and self._read(CardHead)[1] is None

    @property
    def card_problem(self) -> str | None:
        return self._read(CardHead)[1] or (self._read(Scorecard)[1] if self.head is None else None)

    @property
    def index(self) -> JournalIndex:
        path = self.path / JOURNAL
        stamp = _stamp(path)
        if self._index is None or self._index[0] != stamp:
            self._index = (stamp, JournalIndex(path))
        return self._index[1]

    @property
    def benchmark(self) -> str:
        head = self.head
        return head.benchmark if head else self.meta.benchmark if self.meta else "?"

    @property
    def suite(self) -> str:
        head = self.head
        return head.suite if head else self.meta.suite if self.meta else "?"

    @property
    def started(self) -> str:
        if self.meta is not None:
            return self.meta.started_at.isoformat()
        head = self.head
        return head.created_at.isoformat() if head else ""

    @property
    def in_progress(self) -> bool:
        return self.head is None and self.meta is not None and self.card_problem is None

    def progress(self) -> tuple[int, int]:
        """(attempts with a final record, attempts planned) from the journal and meta.json."""
        planned = len(self.meta.case_ids) * self.meta.iterations if self.meta else 0
        done = sum(len(v) for v in self.index.latest_status().values())
        return done, planned

    def loaded(self) -> LoadedRun:
        """The run as the gate reads it (for :func:`assay.gate.compare`)."""
        card = self.scorecard
        assert card is not None
        return LoadedRun(path=self.path, scorecard=card, meta=self.meta)

    def attempts(self, case_id: str) -> tuple[list[Attempt], int]:
        """The attempt that counts for each iteration of the case, and how many earlier records it replaced."""
        records = self.index.attempts(case_id)
        chosen = latest_attempts(records)
        return [chosen[k] for k in sorted(chosen, key=lambda k: k[1])], len(records) - len(chosen)

    def sidecar(self, name: str) -> Any:
        """A JSON file the benchmark wrote beside the journal (``results.json`` of serving), or None."""
        path = self.path / name
        if path.is_symlink() or not path.is_file():
            return None
        try:
            return json.loads(path.read_bytes())
        except ValueError:
            return None


class RunStore:
    """Every run under ``root``, newest first; re-listed on each call, each run's files cached by mtime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._runs: dict[Path, tuple[tuple[int, int] | None, Run]] = {}

    def _find(self) -> list[Path]:
        found: list[Path] = []

        def walk(folder: Path, depth: int) -> None:
            try:
                children = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                return
            for entry in children:
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                path = Path(entry.path)
                if entry.is_symlink() and not inside(self.root, path):
                    continue  # a symlink out of --dir is never followed
                if (path / META).is_file() or (path / SCORECARD).is_file():
                    found.append(path)
                elif depth < MAX_DEPTH:
                    walk(path, depth + 1)

        walk(self.root, 1)
        return found

    def runs(self) -> list[Run]:
        out = []
        for path in self._find():
            stamp = _stamp(path / META)
            cached = self._runs.get(path)
            if cached is None or cached[0] != stamp:
                cached = (stamp, self._open(path))
                self._runs[path] = cached
            out.append(cached[1])
        return sorted(out, key=lambda r: (r.started, r.key), reverse=True)

    def _open(self, path: Path) -> Run:
        key = path.relative_to(self.root).as_posix().replace("/", "~")
        meta, problem = None, None
        if (path / META).is_file():
            try:
                meta = RunMeta.model_validate_json((path / META).read_bytes())
            except (ValidationError, ValueError) as exc:
                problem = f"{META} unreadable: {str(exc).splitlines()[0]}"
        return Run(key=key, path=path, meta=meta, problem=problem)

    def get(self, key: str) -> Run | None:
        """The run with this key, only if walking --dir found it (a key is never turned into a path)."""
        for run in self.runs():
            if run.key == key:
                return run
        return None
