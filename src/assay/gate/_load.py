"""Reading what the gate compares: run directories, baselines and bare ``scorecard.json`` files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from assay.errors import ConfigError
from assay.runs import RunMeta, Scorecard

SCORECARD = "scorecard.json"
META = "meta.json"

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class LoadedRun:
    """A scorecard, the meta.json beside it when there is one, and where they came from."""

    path: Path
    scorecard: Scorecard
    meta: RunMeta | None

    @property
    def label(self) -> str:
        return str(self.path)


def _read_model(model: type[M], path: Path, what: str) -> M:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{what} is not valid JSON: {exc.msg} (line {exc.lineno})", path=str(path)) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {what}: {exc.strerror}", path=str(path)) from exc
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise ConfigError(f"not a {what} written by assay: {where}: {err['msg']}", path=str(path)) from exc


def load_run(path: Path | str) -> LoadedRun:
    """Load a run directory, a baseline directory, or a ``scorecard.json`` path.

    A missing path, a directory without ``scorecard.json`` or a malformed file raises
    :class:`~assay.errors.ConfigError` naming the path.
    """
    p = Path(path)
    if not p.exists():
        raise ConfigError("no such run directory or scorecard file", path=str(p))
    if p.is_dir():
        card_path = p / SCORECARD
        if not card_path.is_file():
            hint = " (the run has no scorecard yet: finish it with --resume)" if (p / META).is_file() else ""
            raise ConfigError(f"directory has no {SCORECARD}{hint}", path=str(p))
    else:
        card_path = p
    scorecard = _read_model(Scorecard, card_path, SCORECARD)
    meta_path = card_path.parent / META
    meta = _read_model(RunMeta, meta_path, META) if meta_path.is_file() else None
    return LoadedRun(path=p, scorecard=scorecard, meta=meta)
