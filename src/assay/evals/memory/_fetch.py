"""The published LoCoMo file, fetched once from a pinned URL into ``$ASSAY_HOME/cache/memory`` and checked.

The pin names the upstream commit, so the URL always serves the same bytes. A cached or downloaded file
whose sha256 differs from the pin is refused (:class:`~assay.errors.DataIntegrityError`), never used or
silently fetched again. ``offline`` never touches the network: a file not in the cache is a usage error.
Until the pin holds a sha256 (it is recorded the first time someone with network reviews the file), a
download is refused with the digest it had, so the pin can be filled in; nothing unchecked is ever used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from assay._util import assay_home
from assay.errors import ConfigError, DataIntegrityError
from assay.evals._pinned import download_checked

__all__ = ["LOCOMO_COMMIT", "LOCOMO_SHA256", "LOCOMO_URL", "fetch_locomo"]

LOCOMO_COMMIT = "e130f7ad198c5520c181b2f7488c7d66ee62feff"
LOCOMO_URL = f"https://raw.githubusercontent.com/snap-research/locomo/{LOCOMO_COMMIT}/data/locomo10.json"
#: sha256 of the file at LOCOMO_URL; empty until reviewed with network (see the module's note)
LOCOMO_SHA256 = ""


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check(path: Path, what: str, sha256: str) -> None:
    got = _sha256(path)
    if not sha256:
        raise DataIntegrityError(
            f"{what} {path} has sha256 {got}, but the LoCoMo pin holds no sha256 yet: review the file and "
            "record the digest in assay.evals.memory._fetch.LOCOMO_SHA256, or pass --dataset locomo:FILE"
        )
    if got != sha256:
        raise DataIntegrityError(
            f"{what} {path} has sha256 {got} but the pin is {sha256} ({LOCOMO_URL}); not using it. Delete it "
            "and fetch again if the pin is right"
        )


def fetch_locomo(*, offline: bool, url: str = LOCOMO_URL, sha256: str = LOCOMO_SHA256) -> Path:
    """The checked ``locomo10.json`` in the cache, downloaded first unless ``offline``."""
    target = assay_home() / "cache" / "memory" / f"locomo10-{(sha256 or 'unpinned')[:16]}.json"
    if target.exists():
        _check(target, "cached file", sha256)
        return target
    if offline:
        raise ConfigError(
            f"--offline: the LoCoMo file is not cached at {target} (pinned to {url}); fetch it once with "
            "network, or pass --dataset locomo:FILE"
        )
    return download_checked(url, target, label="LoCoMo", check=lambda p: _check(p, "downloaded file", sha256))
