"""SWE-bench-format data shared by the benchmarks that read it (code search, eval tasks' swebench suite).

The pinned SWE-bench Verified parquet (one dataset revision, checked by sha256 on every use, downloaded into a
cache only where a network exists) and the numbered rows of a SWE-bench-format JSONL or parquet file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, DataIntegrityError, InfraError, MissingDependencyError

#: the columns every SWE-bench-format row has
REQUIRED_COLUMNS = ("instance_id", "repo", "base_commit", "problem_statement", "patch")


def dataset_rows(path: Path, extra: tuple[str, ...] = ()) -> tuple[str, Iterator[tuple[int, Any]]]:
    """The rows of a SWE-bench-format JSONL or parquet file, numbered, with the unit they are counted in
    ("line" or "row"); a parquet file gives the required columns and whichever of ``extra`` it has."""
    if path.suffix.lower() == ".parquet":
        return "row", _parquet_rows(path, extra)
    return "line", _jsonl_rows(path)


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"not valid JSON ({exc.msg})", path=str(path), line=lineno) from None


def _parquet_rows(path: Path, extra: tuple[str, ...] = ()) -> Iterator[tuple[int, Any]]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("pyarrow", "code") from None
    try:
        names = pq.read_schema(path).names
        missing = [k for k in REQUIRED_COLUMNS if k not in names]
        if missing:
            raise ConfigError(
                f"no column(s) {', '.join(missing)}; a SWE-bench-format file has {', '.join(REQUIRED_COLUMNS)}",
                path=str(path),
            )
        columns = [
            *REQUIRED_COLUMNS,
            *[c for c in ("created_at", *extra) if c in names and c not in REQUIRED_COLUMNS],
        ]
        table = pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError) as exc:
        raise ConfigError(f"not a readable parquet file ({exc})", path=str(path)) from None
    for i, row in enumerate(table.to_pylist(), 1):
        created = row.get("created_at")
        if isinstance(created, datetime):
            row["created_at"] = created.isoformat()
        yield i, row


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ------------------------------------------------------------------------------------------- SWE-bench Verified
# The pin: one parquet file of one dataset revision, checked by sha256 on every use. Never committed; the
# first run with a network downloads it into the repo cache, `--offline` only reads it from there.
SWE_BENCH_VERIFIED: dict[str, Any] = {
    "dataset": "princeton-nlp/SWE-bench_Verified",
    "revision": "c104f840cc67f8b6eec6f759ebc8b2693d585d4a",
    "file": "data/test-00000-of-00001.parquet",
    "sha256": "a45b1fe4e2f0c8390b2b2938ac83e92ed5979000856808f3679c07812e9e6dcd",
    "size": 2_096_679,
    "rows": 500,
}


def swebench_url(pin: Mapping[str, Any] | None = None) -> str:
    pin = pin or SWE_BENCH_VERIFIED
    return f"https://huggingface.co/datasets/{pin['dataset']}/resolve/{pin['revision']}/{pin['file']}"


def swebench_cache_path(cache: Path, pin: Mapping[str, Any] | None = None) -> Path:
    """Where the pinned parquet lives in the repo cache."""
    pin = pin or SWE_BENCH_VERIFIED
    stem = str(pin["dataset"]).split("/")[-1].lower().replace("_", "-")
    return cache / f"{stem}-{str(pin['revision'])[:12]}.parquet"


def ensure_swebench_verified(
    cache: Path,
    *,
    offline: bool,
    pin: Mapping[str, Any] | None = None,
    client: Any = None,
) -> Path:
    """The pinned SWE-bench parquet in ``cache``, verified; read it with ``load_queries``.

    A cached file is checked against the pinned sha256 (and row count) before anything parses it; a
    mismatch is a DataIntegrityError naming the file and both hashes, and the file is left alone (never
    silently downloaded again). A missing file is downloaded (``client``: an ``httpx.Client``, for tests)
    unless ``offline``, which never touches the network and names where the file should be.
    """
    pin = pin or SWE_BENCH_VERIFIED
    parquet = swebench_cache_path(cache, pin)
    what = f"{pin['dataset']}@{str(pin['revision'])[:12]}"
    if parquet.is_file():
        got = file_sha256(parquet)
        if got != pin["sha256"]:
            raise DataIntegrityError(
                f"{parquet}: sha256 {got} does not match the pinned {pin['sha256']} ({what}); "
                "it was left as it is: delete it to download the pinned file again"
            )
    elif offline:
        raise ConfigError(
            f"--offline: {what} is not cached; it should be at {parquet}. Run the same command once "
            f"without --offline to download and verify it there, or save {swebench_url(pin)} to that "
            f"path yourself (sha256 {pin['sha256']}); or pass --dataset FILE.jsonl"
        )
    else:
        _download_pinned(swebench_url(pin), parquet, str(pin["sha256"]), client)
    _check_rows(parquet, pin)
    return parquet


def _download_pinned(url: str, dest: Path, sha256: str, client: Any) -> None:
    import httpx

    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, part_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    part = Path(part_name)
    own = client is None
    http = client or httpx.Client(follow_redirects=True, timeout=httpx.Timeout(120, connect=30))
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as fh, http.stream("GET", url) as resp:
            resp.raise_for_status()
            for block in resp.iter_bytes(1 << 20):
                fh.write(block)
                h.update(block)
            fh.flush()
            os.fsync(fh.fileno())
        got = h.hexdigest()
        if got != sha256:
            raise DataIntegrityError(
                f"{url}: downloaded sha256 {got} does not match the pinned {sha256}; nothing was saved to {dest}"
            )
        os.replace(part, dest)
    except httpx.HTTPError as exc:
        raise InfraError(f"cannot download {url} to {dest}: {exc}") from exc
    finally:
        part.unlink(missing_ok=True)
        if own:
            http.close()


def _check_rows(parquet: Path, pin: Mapping[str, Any]) -> None:
    """The row count in the file's footer against the pin (the footer only: the rows are parsed later)."""
    if pin.get("rows") is None:
        return
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("pyarrow", "code") from None
    rows = pq.read_metadata(parquet).num_rows
    if rows != pin["rows"]:
        raise DataIntegrityError(f"{parquet}: {rows} rows, the pin says {pin['rows']}")
