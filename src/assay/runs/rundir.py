"""The run directory: ``meta.json``, ``results.jsonl``, ``scorecard.json``, ``report.md``, ``report.html``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ValidationError

from assay._util import Scrubber, write_scrubbed
from assay.errors import ConfigError, ResumeError
from assay.runs.records import RunMeta, Scorecard

META = "meta.json"
JOURNAL = "results.jsonl"
SCORECARD = "scorecard.json"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"


def new_run_dir(results_dir: Path, benchmark: str, suite: str, out: Path | None = None) -> Path:
    """Create ``results/<benchmark>-<suite>-<UTC timestamp>/`` (or ``out``), never reusing a folder."""
    if out is not None:
        if out.exists() and not out.is_dir():
            raise ConfigError("is a file, not a folder; pass an empty or new folder", path=f"--out {out}")
        if out.exists() and any(out.iterdir()):
            raise ResumeError(f"--out {out} is not empty; pass an empty or new folder, or --resume it")
        _mkdir(out, f"--out {out}")
        return out
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = results_dir / f"{benchmark}-{suite.replace('/', '_').replace(':', '_')}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    _mkdir(path, f"--results-dir {results_dir}", exist_ok=False)
    return path


def _mkdir(path: Path, flag: str, *, exist_ok: bool = True) -> None:
    try:
        path.mkdir(parents=True, exist_ok=exist_ok)
    except OSError as exc:
        raise ConfigError(f"cannot create the run directory {path} ({exc.strerror})", path=flag) from exc


def write_artifact(path: Path, text: str, scrubber: Scrubber | None = None) -> Path:
    """The one writer of the files assay saves (run directories, comparisons, gate results, baselines).

    The text goes through the scrubber (known secret values and secret-shaped strings removed; a write that
    would still hold a secret value fails) and lands atomically. Without ``scrubber`` the environment's
    secrets are scrubbed.
    """
    write_scrubbed(path, text, scrubber if scrubber is not None else Scrubber())
    return path


def write_model(path: Path, model: BaseModel, scrubber: Scrubber | None = None) -> Path:
    return write_artifact(path, model.model_dump_json(indent=2) + "\n", scrubber)


def _load(path: Path, cls: type[BaseModel], what: str) -> BaseModel:
    if not path.exists():
        raise ResumeError(f"{path}: missing; {path.parent} is not an assay run directory ({what})")
    try:
        return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise ResumeError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ResumeError(f"{path}: not a valid {what}: {loc}: {first['msg']}") from None


def load_meta(run_dir: Path) -> RunMeta:
    if not run_dir.is_dir():
        raise ResumeError(f"{run_dir}: no such run directory")
    meta = _load(run_dir / META, RunMeta, "meta.json")
    assert isinstance(meta, RunMeta)
    return meta


def load_scorecard(path: Path) -> Scorecard:
    """A scorecard from a run directory or a ``scorecard.json`` path."""
    if not path.exists():
        raise ResumeError(f"{path}: no such run directory or scorecard file")
    file = path / SCORECARD if path.is_dir() else path
    card = _load(file, Scorecard, "scorecard")
    assert isinstance(card, Scorecard)
    return card
