"""One edit of the profile: taken from the fixer's copy, checked in code, applied to the tree.

The fixer works on a copy of the profile folder, so it cannot reach any other file; what it changed there is
the edit. Hidden files (a name starting with ``.``, which the fixer's own process may leave, its HOME being the
copy) and ``__pycache__`` are not part of it. An edit is rejected when:

- the tree changed anywhere outside the profile while the fixer ran (a command fixer can write anywhere);
- a line it adds names a scenario id, a fixture path or document name, a planted canary or secret, or quotes
  a ground-truth phrase (matched as the ``fact`` check matches: :func:`assay.evals.agent._checks.has_fact`) or
  a distinctive ground-truth number (one with a decimal part or of 100 or more, within its tolerance:
  :func:`~assay.evals.agent._checks.number_matches`; small whole numbers are too common to tell apart);
- the edited profile no longer loads (an unknown tool file, an empty description, no system prompt).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError
from assay.hillclimb._target import Forbidden

__all__ = ["Edit", "added_lines", "apply_edit", "copy_profile", "find_leaks", "profile_error", "take_edit"]


def _skipped(rel: Path) -> bool:
    return any(p.startswith(".") or p == "__pycache__" for p in rel.parts)


def _files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not path.is_symlink() and not _skipped(rel):
            out[rel.as_posix()] = path.read_bytes()
    return out


@dataclass
class Edit:
    """Files of the profile the fixer wrote (relative path -> new bytes) and removed."""

    written: dict[str, bytes] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.written and not self.removed

    def paths(self) -> list[str]:
        return sorted([*self.written, *self.removed])


def copy_profile(profile: Path, dest: Path) -> Path:
    """A fresh copy of the profile folder at ``dest`` (hidden files left out)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for rel, data in _files(profile).items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dest


def take_edit(profile: Path, copy: Path) -> Edit:
    """What differs between the fixer's ``copy`` and the ``profile`` it was made from."""
    before, after = _files(profile), _files(copy)
    edit = Edit()
    for rel, data in after.items():
        if before.get(rel) != data:
            edit.written[rel] = data
    edit.removed = sorted(rel for rel in before if rel not in after)
    return edit


def apply_edit(profile: Path, edit: Edit) -> None:
    for rel, data in edit.written.items():
        target = profile / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for rel in edit.removed:
        (profile / rel).unlink(missing_ok=True)


def added_lines(diff: str) -> str:
    """The text of the lines a unified diff adds."""
    return "\n".join(
        line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")
    )


def _distinctive(value: float) -> bool:
    return value != int(value) or abs(value) >= 100


def find_leaks(added: str, forbidden: Forbidden) -> list[str]:
    """Why the added text special-cases the suite; empty when it does not."""
    from assay.evals.agent._checks import find_numbers, has_fact, number_matches

    low = added.casefold()
    out: list[str] = []
    out += [f"names scenario {cid!r}" for cid in dict.fromkeys(forbidden.case_ids) if cid.casefold() in low]
    out += [f"names fixture {p!r}" for p in dict.fromkeys(forbidden.paths) if p and p.casefold() in low]
    out += [
        "quotes a planted canary or secret"
        for p in dict.fromkeys(forbidden.planted)
        if p and p.casefold() in low
    ][:1]
    out += [f"quotes ground truth {p[:60]!r}" for p in dict.fromkeys(forbidden.phrases) if has_fact(added, p)]
    found = find_numbers(added)
    for nf in forbidden.numbers:
        if _distinctive(nf.value) and any(number_matches(x, nf) for x in found):
            out.append(f"quotes the ground-truth number {nf.value:g}")
    return list(dict.fromkeys(out))


def profile_error(profile: Path) -> str | None:
    """Why the profile folder no longer loads as the reference agent's profile, or None."""
    from assay.agents._reference._harness import ALL_TOOLS
    from assay.agents._reference._profile import load_profile

    try:
        load_profile(profile, set(ALL_TOOLS))
    except ConfigError as exc:
        return str(exc)
    return None
