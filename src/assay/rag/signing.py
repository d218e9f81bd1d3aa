"""HMAC-signed folders of plain files: the per-install key, signing, and verify-before-parse.

A signed folder holds its files plus ``SIGNATURE``: one line ``hmac-sha256:<hex>`` over every file's
name, length and bytes in name order. :func:`read_signed` reads all the bytes first and checks the
signature before anything is parsed, so a truncated, tampered, unsigned or garbage entry is reported as
such (and rebuilt by the caller), never served.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Literal

__all__ = ["SIGNATURE_FILE", "SignatureProblem", "assay_home", "install_key", "read_signed", "write_signed"]

SIGNATURE_FILE = "SIGNATURE"
SignatureProblem = Literal["missing", "unsigned", "tampered", "unreadable"]


def assay_home() -> Path:
    """``$ASSAY_HOME`` or ``~/.assay`` (created on first use; ConfigError if it cannot be)."""
    from assay._util import assay_home as home

    return home()


def install_key(home: Path | None = None) -> bytes:
    """This install's signing key ``$ASSAY_HOME/keys/rag-cache.key``, made with mode 0600 on first use."""
    path = (home or assay_home()) / "keys" / "rag-cache.key"
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, key)
        os.close(fd)
        try:
            os.link(tmp, path)  # first writer wins; a concurrent one reads the winner's key
        except FileExistsError:
            return path.read_bytes()
    finally:
        Path(tmp).unlink(missing_ok=True)
    return key


def _mac(key: bytes, files: dict[str, bytes]) -> str:
    h = hmac.new(key, digestmod=hashlib.sha256)
    for name in sorted(files):
        h.update(name.encode() + b"\0" + str(len(files[name])).encode() + b"\0")
        h.update(files[name])
    return "hmac-sha256:" + h.hexdigest()


def write_signed(folder: Path, files: dict[str, bytes], key: bytes) -> None:
    """Write ``files`` and their signature into ``folder`` atomically (a temp folder renamed into place)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.tmp-"))
    try:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        (tmp / SIGNATURE_FILE).write_text(_mac(key, files) + "\n")
        if folder.exists():
            old = folder.with_name(f".{folder.name}.old-{secrets.token_hex(4)}")
            folder.rename(old)
            tmp.rename(folder)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_signed(folder: Path, names: tuple[str, ...], key: bytes) -> dict[str, bytes] | SignatureProblem:
    """The verified bytes of ``names`` in ``folder``, or why they cannot be trusted."""
    if not folder.is_dir():
        return "missing"
    sig_path = folder / SIGNATURE_FILE
    if not sig_path.is_file():
        return "unsigned"
    files: dict[str, bytes] = {}
    try:
        signature = sig_path.read_text(encoding="ascii", errors="replace").strip()
        present = sorted(p.name for p in folder.iterdir() if p.name != SIGNATURE_FILE)
        if present != sorted(names):
            return "tampered"
        for name in names:
            files[name] = (folder / name).read_bytes()
    except OSError:
        return "unreadable"
    if not hmac.compare_digest(signature.encode(), _mac(key, files).encode()):
        return "tampered"
    return files
