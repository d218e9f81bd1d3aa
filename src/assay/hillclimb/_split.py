"""The train / held-out split: a stable hash of (salt, case id), about 70/30 within each category.

Within a category the cases are ordered by ``sha256(salt + "\\0" + case_id)`` and the first
``round(HELDOUT_SHARE * n)`` go to held-out (at least one when a category has two or more cases, so each side
sees every category that can be split); a category of one case goes to held-out when its hash, read as a
fraction, is below the share. The same salt and cases give the same split on any machine; ``--salt``
rotates it. The split is written down in ``fix_history.json``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from pydantic import BaseModel, Field

__all__ = ["DEFAULT_SALT", "HELDOUT_SHARE", "Split", "split_cases"]

HELDOUT_SHARE = 0.3
DEFAULT_SALT = "hillclimb-1"


class Split(BaseModel):
    """Which cases the fixer may learn from (train) and which only judge its edits (held-out)."""

    salt: str
    heldout_share: float = HELDOUT_SHARE
    method: str = "sha256(salt + NUL + case id), lowest first to held-out within each category"
    train: list[str] = Field(default_factory=list)
    heldout: list[str] = Field(default_factory=list)
    #: category -> {"train": [...], "heldout": [...]}
    by_category: dict[str, dict[str, list[str]]] = Field(default_factory=dict)

    def side(self, case_id: str) -> str | None:
        if case_id in self.train:
            return "train"
        return "heldout" if case_id in self.heldout else None


def _hash(salt: str, case_id: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{salt}\0{case_id}".encode()).digest()[:8], "big")


def split_cases(categories: Mapping[str, str], salt: str = DEFAULT_SALT) -> Split:
    """Split ``categories`` (case id -> category) into train and held-out."""
    groups: dict[str, list[str]] = {}
    for cid, cat in categories.items():
        groups.setdefault(cat, []).append(cid)
    out = Split(salt=salt)
    for cat in sorted(groups):
        ranked = sorted(groups[cat], key=lambda c: (_hash(salt, c), c))
        if len(ranked) == 1:
            n_held = 1 if _hash(salt, ranked[0]) / 2**64 < HELDOUT_SHARE else 0
        else:
            n_held = max(1, round(HELDOUT_SHARE * len(ranked)))
        held, train = sorted(ranked[:n_held]), sorted(ranked[n_held:])
        out.by_category[cat] = {"train": train, "heldout": held}
        out.train += train
        out.heldout += held
    return out
