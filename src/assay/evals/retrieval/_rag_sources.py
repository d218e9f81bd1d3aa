"""Pinned corpora of the ``full`` suite (``eval/retrieval/sources.json``): fetch once, verify on every use.

Each pin names a URL, a revision note, the archive's sha256 (and md5 where upstream publishes one, and
its size in bytes where known) and its licence. Archives are cached under ``$ASSAY_HOME/cache/retrieval``; a cached or downloaded file
whose digest differs from the pin is an error (:class:`~assay.errors.DataIntegrityError`), never a silent
re-download. ``offline=True`` never touches the network: a corpus that is not cached is a usage error.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from assay.errors import ConfigError, DataIntegrityError
from assay.evals._pinned import download_checked
from assay.evals.retrieval._rag_data import BeirDataset, load_beir
from assay.rag.signing import assay_home

__all__ = ["Source", "cache_dir", "fetch", "load_sources", "prepare_sources"]


@dataclass(frozen=True)
class Source:
    name: str
    url: str
    revision: str
    sha256: str
    licence: str
    format: str = "beir-zip"
    subdir: str = ""
    md5: str | None = None
    size_bytes: int | None = None
    max_queries: int | None = None
    split: str = "test"


def load_sources(path: Path) -> list[Source]:
    try:
        raw = path.read_text(encoding="utf-8")
        data = json.loads(raw)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc
    out = []
    for i, s in enumerate(data.get("sources") or []):
        line = raw.count("\n", 0, max(0, raw.find(f'"name": "{s.get("name")}"'))) + 1
        for key in ("name", "url", "revision", "sha256", "licence"):
            if not s.get(key):
                raise ConfigError(f"source #{i + 1} has no {key!r}", path=str(path), line=line)
        if len(s["sha256"]) != 64:
            raise ConfigError(
                f"source {s['name']!r}: sha256 must be 64 hex digits", path=str(path), line=line
            )
        if "size_bytes" in s and not (isinstance(s["size_bytes"], int) and s["size_bytes"] > 0):
            raise ConfigError(
                f"source {s['name']!r}: size_bytes must be a positive whole number", path=str(path), line=line
            )
        if s.get("format", "beir-zip") != "beir-zip":
            raise ConfigError(
                f"source {s['name']!r}: only format 'beir-zip' is supported", path=str(path), line=line
            )
        known = {k: s[k] for k in Source.__dataclass_fields__ if k in s}  # extra keys are notes
        out.append(Source(**known))
    return out


def cache_dir() -> Path:
    return assay_home() / "cache" / "retrieval"


def _digests(path: Path) -> tuple[str, str]:
    sha, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
            md5.update(block)
    return sha.hexdigest(), md5.hexdigest()


def _pin(source: Source) -> str:
    return f"{source.url} sha256 {source.sha256}" + (
        f", {source.size_bytes:,} bytes" if source.size_bytes is not None else ""
    )


def _check(source: Source, path: Path, what: str) -> None:
    size = path.stat().st_size
    if source.size_bytes is not None and size != source.size_bytes:
        raise DataIntegrityError(
            f"{what} {path} for source {source.name!r} is {size:,} bytes but sources.json pins "
            f"{source.size_bytes:,} bytes ({_pin(source)}). Not using it. If the pin is right, delete the file "
            "and fetch again; if upstream changed, review it and update the pin"
        )
    sha, md5 = _digests(path)
    if sha != source.sha256 or (source.md5 and md5 != source.md5):
        raise DataIntegrityError(
            f"{what} {path} for source {source.name!r} has sha256 {sha} (md5 {md5}) but sources.json pins "
            f"sha256 {source.sha256}{f' (md5 {source.md5})' if source.md5 else ''}. Not using it. If the pin is "
            f"right, delete the file and fetch again; if upstream changed, review it and update the pin"
        )


def fetch(source: Source, *, offline: bool) -> Path:
    """The verified archive of ``source`` in the cache, downloading it first unless ``offline``."""
    target = cache_dir() / f"{source.name}-{source.sha256[:16]}.zip"
    if target.exists():
        _check(source, target, "cached file")
        return target
    if offline:
        raise ConfigError(
            f"--offline: corpus {source.name!r} is not cached at {target} (pinned as {_pin(source)}); fetch "
            "it once with network (assay eval retrieval --component rag --suite full --fetch-only)"
        )
    return download_checked(
        source.url, target, label=source.name, check=lambda p: _check(source, p, "downloaded file")
    )


def _unpack(source: Source, archive: Path) -> Path:
    dest = cache_dir() / f"{source.name}-{source.sha256[:16]}"
    marker = dest / ".unpacked-from"
    if marker.is_file() and marker.read_text().strip() == source.sha256:
        return dest / source.subdir if source.subdir else dest
    if dest.exists():
        shutil.rmtree(dest)
    with zipfile.ZipFile(archive) as zf:
        for member in zf.namelist():
            resolved = (dest / member).resolve()
            if not resolved.is_relative_to(dest.resolve()):
                raise DataIntegrityError(f"{archive}: archive member {member!r} escapes the folder")
        zf.extractall(dest)
    marker.write_text(source.sha256 + "\n")
    return dest / source.subdir if source.subdir else dest


def prepare_sources(sources: list[Source], *, offline: bool) -> dict[str, BeirDataset]:
    """Fetch (or find), verify, unpack and load every pinned corpus."""
    out: dict[str, BeirDataset] = {}
    for s in sources:
        beir = load_beir(_unpack(s, fetch(s, offline=offline)), s.split)
        if s.max_queries is not None:
            keep = sorted(beir.qrels)[: s.max_queries]
            beir.qrels = {q: beir.qrels[q] for q in keep}
        out[s.name] = beir
    return out
