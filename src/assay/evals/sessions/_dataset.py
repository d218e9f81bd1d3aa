"""The sessions dataset: where transcripts are found, the cases kept from them, and ``dataset.json``.

Sources: ``--source PATH`` (a session file, or a folder searched for ``*.jsonl``), ``--project NAME`` (one
``~/.claude/projects/<slug>``, by slug or by the project's path), else every Claude Code project and every
Codex CLI session under ``~/.codex/sessions``. A case records the repository it was asked in (cwd), its
branch and the commit it was asked at: Codex records the commit; for Claude Code it is the branch's last
commit before the request, read from the repository when it is still there.

The dataset holds the user's own prompts: :func:`guard_output` writes a ``.gitignore`` into a folder a git
work tree would otherwise track, and says so.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from assay._util import Scrubber, write_scrubbed
from assay.errors import ConfigError
from assay.evals.sessions._extract import Extraction, extract
from assay.evals.sessions._records import read_session_file

__all__ = [
    "DATASET_FILE",
    "DATASET_SCHEMA_VERSION",
    "Dataset",
    "SessionCase",
    "build_dataset",
    "explain",
    "find_sources",
    "guard_output",
    "load_dataset",
    "write_dataset",
]

DATASET_FILE = "dataset.json"
DATASET_SCHEMA_VERSION = 1


class ContextTurn(BaseModel):
    user: str
    answer: str


class SessionCase(BaseModel):
    id: str
    source: str
    format: str
    session_id: str
    index: int
    prompt: str
    reference: str
    context: list[ContextTurn] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    cwd: str | None = None
    branch: str | None = None
    commit: str | None = None
    timestamp: str = ""
    kept_because: str


class DroppedItem(BaseModel):
    source: str
    index: int | None
    reason: str
    excerpt: str = ""


class Dataset(BaseModel):
    schema_version: int = DATASET_SCHEMA_VERSION
    created_at: str
    sources: list[str]
    cases: list[SessionCase]
    dropped: list[DroppedItem]
    #: per source: records read that are not conversation (bookkeeping, off the chain), by why
    skipped: dict[str, dict[str, int]] = Field(default_factory=dict)


def project_slug(name: str) -> str:
    """Claude Code's folder name for a project path (every character but letters and digits is ``-``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", name)


def find_sources(source: Path | None, project: str | None, home: Path | None = None) -> list[Path]:
    """The session files to read (sorted; subagent files included, to be reported as dropped)."""
    home = home or Path.home()
    if source is not None and project is not None:
        raise ConfigError("--source and --project pick the transcripts two ways; give one")
    if source is not None:
        if not source.exists():
            raise ConfigError("--source: no such file or folder", path=str(source))
        files = [source] if source.is_file() else sorted(source.rglob("*.jsonl"))
        where = f"--source {source}"
    elif project is not None:
        base = home / ".claude" / "projects"
        folder = base / (project if (base / project).is_dir() else project_slug(project))
        if not folder.is_dir():
            known = sorted(p.name for p in base.iterdir()) if base.is_dir() else []
            raise ConfigError(f"--project {project}: no {folder} (known: {', '.join(known) or 'none'})")
        files = sorted(folder.rglob("*.jsonl"))
        where = f"--project {project}"
    else:
        files = sorted((home / ".claude" / "projects").glob("*/**/*.jsonl"))
        files += sorted((home / ".codex" / "sessions").rglob("*.jsonl"))
        where = f"{home}/.claude/projects and {home}/.codex/sessions (give --source or --project)"
    if not files:
        raise ConfigError(f"no session files (*.jsonl) in {where}")
    return files


def recorded_commit(cwd: str | None, branch: str | None, timestamp: str) -> str | None:
    """The last commit of ``branch`` (HEAD when detached or unknown) before ``timestamp``, if the repo is there."""
    if not cwd or not Path(cwd).is_dir():
        return None
    ref = branch if branch and branch != "HEAD" else "HEAD"
    args = ["git", "-C", cwd, "rev-list", "-1", *([f"--before={timestamp}"] if timestamp else []), ref]
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def _cases(found: Extraction, where: Callable[[str | None], str | None]) -> list[SessionCase]:
    s = found.session
    cwd = where(s.cwd)
    return [
        SessionCase(
            id=f"{s.session_id[:8]}-{ex.index}",
            source=str(s.path),
            format=s.format,
            session_id=s.session_id,
            index=ex.index,
            prompt=ex.prompt,
            reference=ex.reference,
            context=[ContextTurn(user=u, answer=a) for u, a in ex.context],
            tools=ex.tools,
            cwd=cwd,
            branch=s.branch,
            commit=s.commit or recorded_commit(cwd, s.branch, ex.timestamp),
            timestamp=ex.timestamp,
            kept_because=ex.kept_because,
        )
        for ex in found.kept
    ]


def build_dataset(
    files: list[Path], cwd: Callable[[str | None], str | None] = lambda d: d
) -> tuple[Dataset, list[Extraction]]:
    """The dataset of ``files``; ``cwd`` maps a recorded working directory to where it is now."""
    extractions = [extract(read_session_file(f)) for f in files]
    cases = [c for e in extractions for c in _cases(e, cwd)]
    dropped = [
        DroppedItem(source=str(e.session.path), index=d.index, reason=d.reason, excerpt=d.excerpt)
        for e in extractions
        for d in e.dropped
    ]
    dataset = Dataset(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        sources=[str(f) for f in files],
        cases=cases,
        dropped=dropped,
        skipped={str(e.session.path): e.session.skipped for e in extractions if e.session.skipped},
    )
    return dataset, extractions


def explain(extractions: list[Extraction]) -> str:
    """Per transcript: each kept case and why, each dropped message and why, and what was not conversation."""
    lines: list[str] = []
    for e in extractions:
        s = e.session
        lines.append(
            f"{s.path} ({s.format}, session {s.session_id[:8]}, {len(e.kept)} kept, {len(e.dropped)} dropped)"
        )
        rows = [(k.index, f"  kept    #{k.index} {k.kept_because}: {k.prompt[:70]!r}") for k in e.kept]
        rows += [
            (d.index if d.index is not None else 10**6, f"  dropped {'#' + str(d.index) if d.index else '  '} {d.reason}"
             + (f": {d.excerpt!r}" if d.excerpt else ""))
            for d in e.dropped
        ]  # fmt: skip
        lines += [text for _, text in sorted(rows, key=lambda r: r[0])]
        for why, n in sorted(s.skipped.items()):
            if why.startswith("requests "):  # the user's requests among the records off the final chain
                lines.append(f"  {'lost' if 'lost' in why else 'off':7} {n} user request(s): {why}")
            else:
                lines.append(f"  skipped {n} record(s): {why}")
    return "\n".join(lines)


def guard_output(folder: Path) -> str | None:
    """Keep ``folder`` out of git: inside a work tree that does not ignore it, write ``folder/.gitignore``
    (``*``) and return the warning to print; None when git would not track it anyway."""
    folder.mkdir(parents=True, exist_ok=True)
    inside = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if inside.returncode != 0:
        return None
    probe = folder / DATASET_FILE
    ignored = subprocess.run(
        ["git", "-C", str(folder), "check-ignore", "-q", str(probe.resolve())],
        capture_output=True,
        check=False,
    )
    if ignored.returncode == 0:
        return None
    (folder / ".gitignore").write_text("# the user's own prompts: never committed\n*\n", encoding="utf-8")
    return (
        f"warning: {folder} is inside the git work tree {inside.stdout.strip()}, which does not ignore it; "
        f"wrote {folder / '.gitignore'} so the prompts in it are not committed"
    )


def write_dataset(dataset: Dataset, folder: Path, scrubber: Scrubber | None = None) -> Path:
    warning = guard_output(folder)
    if warning:
        print(warning, file=sys.stderr)
    path = folder / DATASET_FILE
    write_scrubbed(path, dataset.model_dump_json(indent=2) + "\n", scrubber or Scrubber())
    return path


def load_dataset(path: Path) -> Dataset:
    try:
        return Dataset.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--dataset: cannot read: {exc.strerror or exc}", path=str(path)) from exc
    except ValueError as exc:
        raise ConfigError(
            f"--dataset: not a sessions dataset.json: {str(exc).splitlines()[0]}", path=str(path)
        ) from exc
