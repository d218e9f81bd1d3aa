"""Pinned data: one rule for fetching a file by URL into the cache and checking it before use.

Every dataset assay fetches at run time (the rag corpora, LoCoMo) goes through :func:`download_checked`: the
bytes land in a temporary file beside the target, are checked, and only then take the target's name, so a
cut-off or tampered download is never used. :func:`parse_dated` is the one reader of the datasets' dates.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from assay.errors import ConfigError, InfraError

__all__ = ["download_checked", "parse_dated"]


def download_checked(url: str, target: Path, *, label: str, check: Callable[[Path], None]) -> Path:
    """Download ``url`` to ``target`` through a temporary file that ``check`` must accept first.

    ``check`` raises (a DataIntegrityError) on bytes that differ from the pin; a network failure or a
    non-200 answer is an InfraError naming ``label`` and the URL.
    """
    import httpx

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}-", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with open(fd, "wb") as out, httpx.stream("GET", url, follow_redirects=True, timeout=60) as r:
            if r.status_code != 200:
                raise InfraError(f"downloading {label} from {url}: HTTP {r.status_code}")
            for block in r.iter_bytes():
                out.write(block)
        check(tmp)
        tmp.rename(target)
    except httpx.HTTPError as exc:
        raise InfraError(f"downloading {label} from {url}: {type(exc).__name__}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return target


def parse_dated(text: str, formats: Iterable[str], *, raw: object, path: str, where: str) -> datetime:
    """``text`` read with the first of ``formats`` that fits, else as ISO; naive times are UTC."""
    for fmt in formats:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            pass
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"{where}: unreadable date {raw!r}", path=path) from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when
